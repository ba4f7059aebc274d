import { Router } from 'express';
import type { Services } from '../../services';
import { forgetContext, requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';

/** /api/workspace: removing a member (the owner), or leaving (a member); the owner's invitation links and audit log. */
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
  router.get('/audit', async (req, res) => {
    const { older, newer } = req.query;
    res.set('Cache-Control', 'no-store').json(await services.audit.list(workspaceOf(req).workspace, { older, newer }));
  });
  router.get('/invitations', async (req, res) => {
    res.json({ invitations: await services.invitations.list(workspaceOf(req).workspace) });
  });
  router.post('/invitations', async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    const created = await services.invitations.create(workspace, user.id, req.body);
    // The join link is in this answer only.
    secretAnswer(res).status(201).json(created);
  });
  router.delete('/invitations/:id', async (req, res) => {
    await services.invitations.revoke(workspaceOf(req).workspace, req.params.id);
    res.status(204).end();
  });
  return router;
}
