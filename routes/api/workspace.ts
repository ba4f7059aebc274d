import { Router } from 'express';
import type { Services } from '../../services';
import { forgetContext, requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** /api/workspace: removing a member (the owner), or leaving (a member). */
export function workspaceRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  router.delete('/members/:userId', async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    const leaving = req.params.userId === user.id;
    await services.members.remove(workspace, user.id, req.params.userId, leaving ? req.sessionID : undefined);
    if (leaving) forgetContext(req);
    res.status(204).end();
  });
  return router;
}
