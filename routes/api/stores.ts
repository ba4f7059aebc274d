import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';

/** /api/stores: the workspace's store connections and their event logs. */
export function storesRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  const workspaceId = (req: Parameters<typeof workspaceOf>[0]) => workspaceOf(req).workspace.id;
  // The caller's workspace with their role: changing a connection is the owner's (403 otherwise).
  const workspace = (req: Parameters<typeof workspaceOf>[0]) => workspaceOf(req).workspace;

  router.get('/', async (req, res) => {
    res.json({ stores: await services.stores.list(workspaceId(req)) });
  });
  router.post('/', async (req, res) => {
    secretAnswer(res)
      .status(201)
      .json(await services.stores.create(workspace(req), req.body));
  });
  router.get('/:id', async (req, res) => {
    res.json(await services.stores.get(workspaceId(req), req.params.id));
  });
  router.put('/:id', async (req, res) => {
    res.json(await services.stores.update(workspace(req), req.params.id, req.body));
  });
  router.delete('/:id', async (req, res) => {
    await services.stores.remove(workspace(req), req.params.id);
    res.status(204).end();
  });
  router.get('/:id/events', async (req, res) => {
    res.json({ events: await services.stores.events(workspaceId(req), req.params.id) });
  });
  return router;
}
