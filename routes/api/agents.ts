import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { doNotCompress } from '../middleware/compression';

/** /api/agents: the caller's workspace's agents, its order handler, voice agents' signing secrets (the owner's). */
export function agentsRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);

  router.get('/', async (req, res) => {
    res.json({ agents: await services.agents.list(workspaceOf(req).workspace.id) });
  });
  router.post('/', async (req, res) => {
    const agent = await services.agents.create(workspaceOf(req).workspace, req.body);
    // A voice agent's answer carries its secret, a WhatsApp agent's its verify token: never cached.
    if (agent.secret || agent.verify_token) {
      res.set('Cache-Control', 'no-store');
      doNotCompress(res);
    }
    res.status(201).json(agent);
  });
  router.put('/:id', async (req, res) => {
    res.json(await services.agents.update(workspaceOf(req).workspace, req.params.id, req.body));
  });
  router.post('/:id/rotate-secret', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    doNotCompress(res);
    res.json(await services.agents.rotateSecret(workspaceOf(req).workspace, req.params.id));
  });
  return router;
}
