import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';

/** /api/webhooks: the workspace's webhook endpoints, their test event and delivery log. */
export function webhooksRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  const workspaceId = (req: Parameters<typeof workspaceOf>[0]) => workspaceOf(req).workspace.id;
  // The caller's workspace with their role: changing an endpoint is the owner's (403 otherwise).
  const workspace = (req: Parameters<typeof workspaceOf>[0]) => workspaceOf(req).workspace;

  router.get('/', async (req, res) => {
    res.json({ endpoints: await services.webhooks.list(workspaceId(req)) });
  });
  router.post('/', async (req, res) => {
    secretAnswer(res)
      .status(201)
      .json(await services.webhooks.create(workspace(req), req.body));
  });
  router.get('/:id', async (req, res) => {
    res.json(await services.webhooks.get(workspaceId(req), req.params.id));
  });
  router.put('/:id', async (req, res) => {
    res.json(await services.webhooks.update(workspace(req), req.params.id, req.body));
  });
  router.delete('/:id', async (req, res) => {
    await services.webhooks.remove(workspace(req), req.params.id);
    res.status(204).end();
  });
  router.post('/:id/rotate-secret', async (req, res) => {
    secretAnswer(res).json(await services.webhooks.rotateSecret(workspace(req), req.params.id));
  });
  router.post('/:id/test', async (req, res) => {
    res.status(202).json(await services.webhooks.sendTest(workspace(req), req.params.id));
  });
  router.get('/:id/deliveries', async (req, res) => {
    res.json({ deliveries: await services.webhooks.deliveries(workspaceId(req), req.params.id) });
  });
  router.post('/:id/deliveries/:deliveryId/resend', async (req, res) => {
    res.status(202).json(await services.webhooks.resend(workspace(req), req.params.id, req.params.deliveryId));
  });
  return router;
}
