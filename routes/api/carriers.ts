import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';

/** /api/carriers: the workspace's carrier connections (owner makes and removes them) and their logs. */
export function carriersRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  const carriers = services.deliveries.carriers;
  router.get('/', async (req, res) => {
    res.json({ carriers: await carriers.list(workspaceOf(req).workspace.id) });
  });
  router.post('/', async (req, res) => {
    secretAnswer(res)
      .status(201)
      .json(await carriers.create(workspaceOf(req).workspace, req.body));
  });
  router.delete('/:id', async (req, res) => {
    await carriers.remove(workspaceOf(req).workspace, req.params.id);
    res.status(204).end();
  });
  router.get('/:id/events', async (req, res) => {
    res.json({ events: await carriers.events(workspaceOf(req).workspace.id, req.params.id) });
  });
  return router;
}
