import { isLanguage, shopDay } from '../../services/shared';
import { Router } from 'express';
import type { Response } from 'express';
import type { Services } from '../../services';
import { asksForPages, forCaller, readFilters, readListingQuery, ORDER_STATUSES, inEnglish } from '../../services/orders';
import type { Order, OrderFilters, OrderSource } from '../../services/orders';
import { fileUpload, uploadedFile } from '../middleware/uploads';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { firstThenRest, sendChunks } from '../stream';

/**
 * Orders per JSON.stringify call. Each piece's text stays far below V8's large-object size (128 kB):
 * a longer string is built, flattened and encoded in fresh pages, four times the work for a batch of
 * 1,000 orders read as one piece.
 */
const JSON_PIECE = 50;
const COMMA = Buffer.from(',');

/** The orders' JSON as UTF-8 without the array's brackets (`o1,o2,…`), byte for byte JSON.stringify's. */
function jsonItems(orders: Order[]): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < orders.length; i += JSON_PIECE) {
    const piece = Buffer.from(JSON.stringify(orders.slice(i, i + JSON_PIECE)));
    if (parts.length > 0) parts.push(COMMA);
    parts.push(piece.subarray(1, piece.length - 1));
  }
  return Buffer.concat(parts);
}

/** `{"orders":[…]<rest>}` as res.json would send it (same bytes, type, length and ETag). */
function sendList(res: Response, orders: Order[], rest = ''): void {
  res.type('application/json');
  // A page (50 orders by default) is one piece: one string, encoded once by res.send, as res.json does.
  if (orders.length <= JSON_PIECE) return void res.send(`{"orders":${JSON.stringify(orders)}${rest}}`);
  res.send(Buffer.concat([Buffer.from('{"orders":['), jsonItems(orders), Buffer.from(`]${rest}}`)]));
}

/**
 * The contract's whole list, `{"orders":[…]}`. A list that fits in one batch is sent as one JSON
 * answer; a longer one is written a batch at a time, byte for byte the same, with memory bounded by
 * one batch. The first batches are read before anything is sent, so a failing database still
 * answers a clean 500.
 */
async function sendOrders(res: Response, batches: AsyncGenerator<Order[]>): Promise<void> {
  const first = await batches.next();
  const second = first.done ? first : await batches.next();
  if (second.done) return sendList(res, first.done ? [] : first.value);
  // A batch is never empty: its items need a comma before them, after the previous batch's.
  async function* body() {
    yield Buffer.concat([Buffer.from('{"orders":['), jsonItems(first.value as Order[])]);
    for (let batch = second; !batch.done; batch = await batches.next()) yield Buffer.concat([COMMA, jsonItems(batch.value)]);
    yield ']}';
  }
  res.type('application/json');
  await sendChunks(res, body());
}

/** The caller's workspace's orders: /api/orders (update by PUT) and /data/v1/orders (by PATCH). */
export function ordersRouter(services: Services, updateMethod: 'put' | 'patch' = 'put', source: OrderSource = 'api'): Router {
  const router = Router();
  router.use(requireApiWorkspace);

  router.get('/', async (req, res) => {
    const workspaceId = workspaceOf(req).workspace.id;
    if (!asksForPages(req.query)) return sendOrders(res, services.orders.batches(workspaceId));
    const { limit, cursor, ...filters } = readListingQuery(req.query, ORDER_STATUSES);
    const page = await services.orders.listPage(workspaceId, forCaller(filters, workspaceOf(req).user.id), limit, cursor);
    sendList(res, page.orders, `,"next_cursor":${JSON.stringify(page.next_cursor)}`);
  });
  router.post('/', async (req, res) => {
    const { order, replayed } = await services.orders.create(workspaceOf(req).workspace.id, req.body, {
      idempotencyKey: req.get('Idempotency-Key'),
      source,
    });
    if (replayed) res.set('Idempotent-Replayed', 'true');
    res.status(201).json(order);
  });
  // The owner's reassignment (session API only: the dashboard's selection).
  if (source === 'api')
    router.post('/assign', async (req, res) => {
      res.json(await services.team.reassign(workspaceOf(req).workspace, req.body));
    });
  router.get('/:id', async (req, res) => {
    res.json(await services.orders.get(workspaceOf(req).workspace.id, req.params.id));
  });
  router[updateMethod]('/:id', async (req, res) => {
    res.json(await services.orders.update(workspaceOf(req).workspace.id, req.params.id, req.body));
  });
  router.put('/:id/delivery', async (req, res) => {
    const ctx = workspaceOf(req);
    res.json(await services.deliveries.setByPerson(ctx.workspace.id, req.params.id, req.body, ctx.user.name));
  });
  router.get('/:id/delivery/events', async (req, res) => {
    res.json({ events: await services.deliveries.events(workspaceOf(req).workspace.id, req.params.id) });
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

/**
 * CSV in and out (session API only): POST /api/orders/import and GET /api/orders/export.csv, added
 * as two routes of `router` (the /api router) ahead of the orders' `/:id` routes. As routes rather
 * than a router mounted at /orders, every other /api/orders request passes them by a path test,
 * without entering and leaving a router (which defers its way out by a setImmediate).
 */
export function addOrderFileRoutes(router: Router, services: Services): void {
  router.post('/orders/import', requireApiWorkspace, fileUpload, async (req, res) => {
    const file = uploadedFile(req).bytes;
    // The store for rows without one: the form's `store` field, or `?store=` beside a raw body.
    const store = req.file ? req.body?.store : req.query.store;
    const { result, replayed } = await services.imports.importCsv(workspaceOf(req).workspace.id, file, {
      idempotencyKey: req.get('Idempotency-Key'),
      store,
    });
    if (replayed) res.set('Idempotent-Replayed', 'true');
    res.json(inEnglish(result));
  });
  router.get('/orders/export.csv', requireApiWorkspace, async (req, res) => {
    const filters = forCaller(readFilters(req.query, ORDER_STATUSES), workspaceOf(req).user.id);
    // The header in the exporter's language: `?lang=` (en: the API's names), else their saved choice.
    const language = isLanguage(req.query.lang) ? req.query.lang : (req.ctx?.user.language ?? 'en');
    const { workspace } = workspaceOf(req);
    const rows = await firstThenRest(services.exportCsv(workspace.id, filters, language));
    // Read once the first rows are: an export that failed before sending anything is not one.
    await services.audit.record({ workspaceId: workspace.id, action: 'orders_exported', target: { type: 'orders' }, details: exportDetails(filters) });
    res.set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="orders-${shopDay()}.csv"`,
      'Cache-Control': 'no-store',
    });
    await sendChunks(res, rows);
  });
}

/** What an export took, for the audit log: the filters given (none: every order). */
function exportDetails(filters: OrderFilters): Record<string, string | string[] | null> {
  const details: Record<string, string | string[] | null> = {};
  for (const [name, value] of Object.entries(filters)) {
    if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    details[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return details;
}
