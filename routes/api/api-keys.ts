import { Router } from 'express';
import type { Services } from '../../services';
import { keyViewer, requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { doNotCompress } from '../middleware/compression';

/** /api/keys: session cookie only, so that credentials cannot mint more credentials. */
export function apiKeysRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);

  router.get('/', async (req, res) => {
    res.json({ keys: await services.apiKeys.list(keyViewer(req)) });
  });
  router.post('/', async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    res.set('Cache-Control', 'no-store');
    doNotCompress(res);
    res.status(201).json(await services.apiKeys.create({ userId: user.id, workspaceId: workspace.id }, req.body));
  });
  router.delete('/:id', async (req, res) => {
    await services.apiKeys.revoke(keyViewer(req), req.params.id);
    res.status(204).end();
  });
  return router;
}
