import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** /api/settings/calls: attempts, retry interval and calling hours of the caller's workspace. */
export function settingsRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  router.get('/calls', async (req, res) => {
    res.json(await services.callSettings.get(workspaceOf(req).workspace.id));
  });
  router.put('/calls', async (req, res) => {
    res.json(await services.callSettings.update(workspaceOf(req).workspace.id, req.body));
  });
  return router;
}
