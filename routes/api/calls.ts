import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** /api/calls: the human call queue — claim the next due call, record its outcome. */
export function callsRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  router.post('/next', async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    const claimed = await services.calls.claimNext(workspace.id, user.id);
    if (!claimed) {
      res.status(204).end();
      return;
    }
    res.json(claimed);
  });
  router.post('/:callId/outcome', async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    res.json(await services.calls.recordHumanOutcome(workspace.id, user.id, req.params.callId, req.body, user.name));
  });
  return router;
}
