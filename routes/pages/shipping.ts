import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { SHIPPING_KINDS } from '../../services/shipping';
import { AppError, ConflictError, isOwner, ValidationError } from '../../services/shared';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { errorsByInput, pageMessage, redirectWithNotice } from './forms';
import { translateMessage } from './view-helpers';

/** The selected ids of a form (one value or many), as given. */
function idsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter((v): v is string => typeof v === 'string').slice(0, 1000);
}

/**
 * The carrier pages (docs/carriers.md): `/deliveries/carriers` (the accounts, a form per kind with
 * its guide), `/orders/ship` (confirmed orders to a carrier in one tap) and `/shipments/:id` (its
 * progress, the cities to choose, the results, the labels). Every one works without JavaScript.
 */
export function shippingPages(services: Services): Router {
  const router = Router();
  router.use(['/deliveries/carriers', '/orders/ship', '/shipments'], requirePageWorkspace);

  // The order page (rendered by the order pages) shows its parcel: read here, given to the view —
  // for the page itself only (`all` matches the exact path), not for its delete page or its forms' other routes.
  router.all('/orders/:id', async (req, res, next) => {
    const workspace = req.ctx?.workspace;
    if (workspace && req.params.id !== 'ship') res.locals.parcel = await services.shipments.parcelOf(workspace.id, String(req.params.id));
    next();
  });
  router.post('/orders/:id/parcel', requirePageWorkspace, async (req, res) => {
    const { workspace } = workspaceOf(req);
    const id = String(req.params.id);
    try {
      await services.parcels.decide(workspace.id, id, { action: req.body?.action, tracking: req.body?.tracking });
      await redirectWithNotice(req, res, `/orders/${id}`, req.t('shipping.decided'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await redirectWithNotice(req, res, `/orders/${id}`, req.t('shipping.trackingNeeded'));
    }
  });

  async function renderAccounts(req: Request, res: Response, status = 200, extra: Record<string, unknown> = {}) {
    const { workspace } = workspaceOf(req);
    const kind = typeof req.query.kind === 'string' && SHIPPING_KINDS.some((k) => k.kind === req.query.kind) ? req.query.kind : SHIPPING_KINDS[0]?.kind;
    const accounts = await services.carrierAccounts.list(workspace.id);
    const owned = isOwner(workspace) ? await Promise.all(accounts.map((a) => services.carrierAccounts.forOwner(workspace, a.id))) : accounts;
    // The owner's page carries the push URLs' tokens: never kept by a cache.
    if (isOwner(workspace)) res.set('Cache-Control', 'no-store');
    res
      .status(status)
      .render('shipping/carriers', { accounts: owned, kinds: SHIPPING_KINDS, kind, isOwner: isOwner(workspace), values: {}, errors: {}, ...extra });
  }
  router.get('/deliveries/carriers', (req, res) => renderAccounts(req, res));
  router.post('/deliveries/carriers/accounts', async (req, res) => {
    const body = req.body ?? {};
    const kind = typeof body.kind === 'string' ? body.kind : '';
    const spec = SHIPPING_KINDS.find((k) => k.kind === kind);
    const credentials = Object.fromEntries(
      (spec?.credentials ?? []).map((c) => [c.name, typeof body[`credential_${c.name}`] === 'string' ? body[`credential_${c.name}`] : '']),
    );
    const values = { name: typeof body.name === 'string' ? body.name : '', pickup_city_id: typeof body.pickup_city_id === 'string' ? body.pickup_city_id : '' };
    try {
      await services.carrierAccounts.create(workspaceOf(req).workspace, {
        kind,
        name: values.name,
        credentials,
        pickup_city_id: values.pickup_city_id || undefined,
        allow_open: body.allow_open === 'on',
        auto_ship: body.auto_ship === 'on',
      });
      await redirectWithNotice(req, res, '/deliveries/carriers', req.t('shipping.accountAdded', { name: values.name }));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      // A credential is never sent back to the page: the owner types it again.
      const errors = Object.fromEntries(Object.entries(errorsByInput(err)).map(([field, text]) => [field.replace(/^credentials\./, 'credential_'), text]));
      req.query.kind = kind;
      await renderAccounts(req, res, 400, { values, errors });
    }
  });
  router.post('/deliveries/carriers/accounts/:id/delete', async (req, res) => {
    try {
      await services.carrierAccounts.remove(workspaceOf(req).workspace, String(req.params.id));
      await redirectWithNotice(req, res, '/deliveries/carriers', req.t('shipping.accountRemoved'));
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      await redirectWithNotice(req, res, '/deliveries/carriers', translateMessage(req.t, pageMessage(err)));
    }
  });
  // The owner enters an account's keys again (refused, or changed at the carrier): checked there first.
  router.post('/deliveries/carriers/accounts/:id/keys', async (req, res) => {
    const { workspace } = workspaceOf(req);
    const id = String(req.params.id);
    const account = await services.carrierAccounts.get(workspace.id, id);
    const spec = SHIPPING_KINDS.find((k) => k.kind === account.kind);
    const body = req.body ?? {};
    const credentials = Object.fromEntries(
      (spec?.credentials ?? []).map((c) => [c.name, typeof body[`credential_${c.name}`] === 'string' ? body[`credential_${c.name}`] : '']),
    );
    try {
      await services.carrierAccounts.update(workspace, id, { credentials });
      await redirectWithNotice(req, res, '/deliveries/carriers', req.t('shipping.keysSaved', { name: account.name }));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const translate: (text: string) => string = res.locals.message;
      await redirectWithNotice(req, res, '/deliveries/carriers', Object.values(err.fields).map(translate).join(' '));
    }
  });

  /** The ship page: the confirmed orders not shipped yet (or those selected on /orders), all preselected. */
  router.get('/orders/ship', async (req, res) => {
    const { workspace } = workspaceOf(req);
    const [accounts, orders] = await Promise.all([
      services.carrierAccounts.list(workspace.id),
      services.shipments.shippable(workspace.id, idsOf(req.query.ids)),
    ]);
    res.render('shipping/ship', { accounts, orders, error: null, selected: new Set(orders.map((o) => o.id)) });
  });
  router.post('/orders/ship', async (req, res) => {
    const { workspace, user } = workspaceOf(req);
    const orderIds = idsOf(req.body?.orderIds);
    try {
      const { shipment_id } = await services.shipments.ship({ ...workspace, userId: user.id }, { accountId: String(req.body?.accountId ?? ''), orderIds });
      res.redirect(303, `/shipments/${shipment_id}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      const [accounts, orders] = await Promise.all([services.carrierAccounts.list(workspace.id), services.shipments.shippable(workspace.id, [])]);
      const error = err instanceof ValidationError ? Object.values(err.fields).map(res.locals.message).join(' ') : translateMessage(req.t, pageMessage(err));
      res.status(err.status).render('shipping/ship', { accounts, orders, error, selected: new Set(orderIds) });
    }
  });

  router.get('/shipments/:id', async (req, res) => {
    const { workspace } = workspaceOf(req);
    const shipment = await services.shipments.get(workspace.id, String(req.params.id));
    const waiting = shipment.parcels.some((p) => p.state === 'needs_city' || p.state === 'needs_amount');
    const cities = waiting ? await services.carrierAccounts.cities(shipment.account_id) : [];
    res.render('shipping/shipment', { shipment, cities, errors: {}, values: {} });
  });
  router.post('/shipments/:id/cities', async (req, res) => {
    const { workspace } = workspaceOf(req);
    // One select per order (`city_<order id>`), one amount field per order without one (`amount_<order id>`).
    const named = (prefix: string) =>
      Object.fromEntries(
        Object.entries(req.body ?? {}).flatMap(([name, value]) =>
          name.startsWith(prefix) && typeof value === 'string' && value.trim() ? [[name.slice(prefix.length), value]] : [],
        ),
      );
    const id = String(req.params.id);
    try {
      await services.shipments.resolve(workspace.id, id, { cities: named('city_'), amounts: named('amount_') });
      res.redirect(303, `/shipments/${id}`);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const shipment = await services.shipments.get(workspace.id, id);
      const cities = await services.carrierAccounts.cities(shipment.account_id);
      res.status(400).render('shipping/shipment', { shipment, cities, errors: errorsByInput(err), values: named('amount_') });
    }
  });
  // "Print labels" for a selection of shipped orders (`ids`, as the orders list's checkboxes send them).
  router.get('/orders/labels.pdf', requirePageWorkspace, async (req, res) => {
    const { workspace } = workspaceOf(req);
    const { pdf } = await services.shipments.labels(workspace.id, { orderIds: idsOf(req.query.ids) });
    if (!pdf) return void res.redirect(303, '/orders?delivery=shipped');
    res.set({ 'Content-Type': 'application/pdf', 'Content-Disposition': 'inline; filename="labels.pdf"' });
    res.send(Buffer.from(pdf));
  });
  router.get('/shipments/:id/labels.pdf', async (req, res) => {
    const { workspace } = workspaceOf(req);
    await services.shipments.get(workspace.id, String(req.params.id));
    const { pdf } = await services.shipments.labels(workspace.id, { shipmentId: String(req.params.id) });
    if (!pdf) return void res.redirect(303, `/shipments/${req.params.id}#labels`);
    res.set({ 'Content-Type': 'application/pdf', 'Content-Disposition': `inline; filename="labels-${req.params.id}.pdf"` });
    res.send(Buffer.from(pdf));
  });
  return router;
}
