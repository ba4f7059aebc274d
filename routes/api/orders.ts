import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** The caller's workspace's orders: /api/orders (update by PUT) and /data/v1/orders (by PATCH). */
export function ordersRouter(services: Services, updateMethod: 'put' | 'patch' = 'put'): Router {
  const router = Router();
  router.use(requireApiWorkspace);

  router.get('/', async (req, res) => {
    res.json({ orders: await services.orders.list(workspaceOf(req).workspace.id) });
  });
  router.post('/', async (req, res) => {
    const { order, replayed } = await services.orders.create(workspaceOf(req).workspace.id, req.body, {
      idempotencyKey: req.get('Idempotency-Key'),
    });
    if (replayed) res.set('Idempotent-Replayed', 'true');
    res.status(201).json(order);
  });
  router.get('/:id', async (req, res) => {
    res.json(await services.orders.get(workspaceOf(req).workspace.id, req.params.id));
  });
  router[updateMethod]('/:id', async (req, res) => {
    res.json(await services.orders.update(workspaceOf(req).workspace.id, req.params.id, req.body));
  });
  router.get('/:id/operations', async (req, res) => {
    res.json({ operations: await services.operations.list(workspaceOf(req).workspace.id, req.params.id) });
  });
  router.post('/:id/operations', async (req, res) => {
    res.status(201).json(await services.operations.requeue(workspaceOf(req).workspace.id, req.params.id));
  });
  router.delete('/:id', async (req, res) => {
    await services.orders.remove(workspaceOf(req).workspace.id, req.params.id);
    res.status(204).end();
  });
  return router;
}
