import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** /api/agents: the caller's workspace's agents and its order handler. */
export function agentsRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);

  router.get('/', async (req, res) => {
    res.json({ agents: await services.agents.list(workspaceOf(req).workspace.id) });
  });
  router.post('/', async (req, res) => {
    res.status(201).json(await services.agents.create(workspaceOf(req).workspace.id, req.body));
  });
  router.put('/:id', async (req, res) => {
    res.json(await services.agents.update(workspaceOf(req).workspace.id, req.params.id, req.body));
  });
  return router;
}
