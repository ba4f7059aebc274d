import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';

/** /api/carrier-accounts: the carrier accounts parcels are made with (every member reads; the owner changes). */
export function carrierAccountsRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  const accounts = services.carrierAccounts;
  router.get('/', async (req, res) => {
    res.json({ carrier_accounts: await accounts.list(workspaceOf(req).workspace.id) });
  });
  router.post('/', async (req, res) => {
    // The owner's answer carries the push URL, whose token is a secret: never cached, never compressed.
    secretAnswer(res)
      .status(201)
      .json(await accounts.create(workspaceOf(req).workspace, req.body));
  });
  router.get('/:id', async (req, res) => {
    secretAnswer(res).json(await accounts.forOwner(workspaceOf(req).workspace, req.params.id));
  });
  router.put('/:id', async (req, res) => {
    secretAnswer(res).json(await accounts.update(workspaceOf(req).workspace, req.params.id, req.body));
  });
  router.delete('/:id', async (req, res) => {
    await accounts.remove(workspaceOf(req).workspace, req.params.id);
    res.status(204).end();
  });
  router.get('/:id/cities', async (req, res) => {
    const account = await accounts.get(workspaceOf(req).workspace.id, req.params.id);
    res.json({ cities: await accounts.cities(account.id) });
  });
  return router;
}

/** /api/shipments: confirmed orders handed to a carrier account (202: each parcel is a job), and their progress. */
export function shipmentsRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);
  router.post('/', async (req, res) => {
    const { workspace, user } = workspaceOf(req);
    res.status(202).json(await services.shipments.ship({ ...workspace, userId: user.id }, req.body));
  });
  router.get('/:id', async (req, res) => {
    res.json(await services.shipments.get(workspaceOf(req).workspace.id, req.params.id));
  });
  router.get('/:id/labels.pdf', async (req, res) => {
    const workspaceId = workspaceOf(req).workspace.id;
    await services.shipments.get(workspaceId, req.params.id);
    const { pdf, missing } = await services.shipments.labels(workspaceId, { shipmentId: req.params.id });
    if (!pdf) return void res.status(404).json({ error: 'No parcel of this shipment has a label', missing });
    res.set({
      'Content-Type': 'application/pdf',
      'Content-Disposition': `inline; filename="labels-${req.params.id}.pdf"`,
      'X-Labels-Missing': String(missing.length),
    });
    res.send(Buffer.from(pdf));
  });
  router.post('/:id/cities', async (req, res) => {
    const workspaceId = workspaceOf(req).workspace.id;
    await services.shipments.resolve(workspaceId, req.params.id, req.body);
    res.json(await services.shipments.get(workspaceId, req.params.id));
  });
  return router;
}
