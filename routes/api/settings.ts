import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** /api/settings: the call settings (attempts, retry interval, calling hours), the retention and the block list of the caller's workspace. */
export function settingsRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  router.get('/calls', async (req, res) => {
    res.json(await services.callSettings.get(workspaceOf(req).workspace.id));
  });
  router.put('/calls', async (req, res) => {
    res.json(await services.callSettings.update(workspaceOf(req).workspace.id, req.body));
  });
  router.get('/retention', async (req, res) => {
    res.json(await services.retention.get(workspaceOf(req).workspace.id));
  });
  router.put('/retention', async (req, res) => {
    res.json(await services.retention.update(workspaceOf(req).workspace, req.body));
  });
  router.get('/blocked-phones', async (req, res) => {
    res.json({ blocked_phones: await services.blockedPhones.list(workspaceOf(req).workspace.id) });
  });
  router.post('/blocked-phones', async (req, res) => {
    res.status(201).json(await services.blockedPhones.add(workspaceOf(req).workspace.id, req.body));
  });
  router.delete('/blocked-phones/:phone', async (req, res) => {
    await services.blockedPhones.remove(workspaceOf(req).workspace.id, req.params.phone);
    res.status(204).end();
  });
  return router;
}
