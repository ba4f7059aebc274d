import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { AppError, ConflictError, ValidationError, formatDecimal, formatNumber, isOwner, msg } from '../../services/shared';
import type { Language } from '../../services/shared';
import {
  ORDER_STATUSES,
  COUNT_CAP,
  FIELD_COLUMNS,
  InvalidStatusError,
  ORDER_FLAGS,
  DELIVERY_FILTERS,
  decodeCursor,
  encodeCursor,
  readFilters,
  forCaller,
} from '../../services/orders';
import type { OrderStatus, Order, OrderFlag } from '../../services/orders';
import { DELIVERY_STATUSES } from '../../services/deliveries';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { errorsByInput, formValues, pageMessage, redirectWithNotice, typedAmount } from './forms';
import type { FormState } from './forms';
import { formatDate, groupedPhone } from './view-helpers';
import { languageOf } from '../middleware/i18n';

/**
 * The inputs of the new-order and edit forms (views/partials/order-fields.ejs), named after the
 * columns they write: not the order's columns, but some of the fields a caller may write
 * (db/order-fields.ts; the status has a form of its own). The form's values hold them to that.
 */
const ORDER_FORM_INPUTS = ['client_name', 'phone', 'store_name', 'products_name', 'address', 'city', 'note', 'total_amount', 'currency'] as const;
type WritableColumn<C extends (typeof FIELD_COLUMNS)[keyof typeof FIELD_COLUMNS]> = C;
type OrderFormValues = Record<WritableColumn<(typeof ORDER_FORM_INPUTS)[number]>, string>;

/** The service names bad fields in camelCase; the form's inputs are named after the columns. */
const FORM_FIELD: Record<string, string> = FIELD_COLUMNS;

/** The delivery form's inputs, by the names the service gives its fields. */
const DELIVERY_FORM_FIELD: Record<string, string> = {
  status: 'delivery_status',
  carrier: 'carrier',
  trackingNumber: 'tracking_number',
  carrierStatus: 'carrier_status',
  at: 'delivery_status',
};

/** Orders shown on one page of /orders: `size` in the URL, one of these. */
const PAGE_SIZES = [25, 50, 100] as const;
const DEFAULT_PAGE_SIZE = 50;

function pageSize(req: Request): number {
  const wanted = Number(req.query.size);
  return (PAGE_SIZES as readonly number[]).includes(wanted) ? wanted : DEFAULT_PAGE_SIZE;
}

/** The form's values with the amount as the service reads it (see typedAmount). */
function withTypedAmount(values: Record<string, string>): Record<string, string> {
  const amount = typedAmount(values.total_amount);
  return amount === null ? values : { ...values, total_amount: amount };
}

function queryString(params: Record<string, string>): string {
  const text = new URLSearchParams(params).toString();
  return text ? `?${text}` : '';
}

function isStatus(value: unknown): value is OrderStatus {
  return (ORDER_STATUSES as readonly unknown[]).includes(value);
}

/** The edit form of a stored order, written as its staff type it: "06 12 34 56 78", "249,00" in French. */
function formOf(order: Order, lang: Language): OrderFormValues {
  return {
    client_name: order.client_name,
    phone: groupedPhone(order.phone),
    store_name: order.store_name,
    products_name: order.products_name,
    address: order.address ?? '',
    city: order.city ?? '',
    note: order.note ?? '',
    total_amount: order.total_amount ? formatDecimal(order.total_amount, lang) : '',
    currency: order.currency ?? '',
  };
}

/** The `flag` filter of the list, as the status filter: absent or empty means all; else one flag. */
function flagFilter(req: Request): OrderFlag | null {
  const given = req.query.flag;
  if (given === undefined || given === '') return null;
  if (!(ORDER_FLAGS as readonly unknown[]).includes(given))
    throw new ValidationError({ flag: msg('unknownOneOf', { label: 'flag', allowed: ORDER_FLAGS.join(', ') }) });
  return given as OrderFlag;
}

/** The `delivery` filter of the list: absent or empty means any; else a delivery status or `none`. */
function deliveryFilter(req: Request): string | null {
  const given = req.query.delivery;
  if (given === undefined || given === '') return null;
  if (!(DELIVERY_FILTERS as readonly unknown[]).includes(given))
    throw new ValidationError({ delivery: msg('deliveryFilterUnknown', { allowed: DELIVERY_FILTERS.join(', ') }) });
  return given as string;
}

/**
 * Where a status change made from another page (the call page, a look-alike order's page) sends
 * the member back: one of our order or call pages, never an address given from elsewhere.
 */
function backTo(value: string, fallback: string): string {
  return /^\/(orders|calls)\/[0-9a-f-]{36}$/.test(value) ? value : fallback;
}

/** The `status` filter of the list: absent or empty means all; anything else must be a status. */
function statusFilter(req: Request): OrderStatus | null {
  const given = req.query.status;
  if (given === undefined || given === '') return null;
  if (!isStatus(given)) throw new InvalidStatusError();
  return given;
}

export function orderPages(services: Services): Router {
  const router = Router();
  router.use('/orders', requirePageWorkspace);
  const workspaceId = (req: Request) => workspaceOf(req).workspace.id;

  router.get('/orders', async (req, res) => {
    const { workspace } = workspaceOf(req);
    const filter = statusFilter(req);
    const flag = flagFilter(req);
    const delivery = deliveryFilter(req);
    const { q, assignee, pay } = readFilters(
      {
        q: typeof req.query.q === 'string' ? req.query.q.slice(0, 200) : req.query.q,
        assignee: req.query.assignee,
        pay: req.query.pay,
        member: req.query.member,
        period: req.query.period,
      },
      ORDER_STATUSES,
    );
    const filters = forCaller(
      { statuses: filter ? [filter] : [], flags: flag ? [flag] : [], deliveries: delivery ? [delivery] : [], q, from: null, to: null, assignee, pay },
      workspaceOf(req).user.id,
    );
    // A stale or edited page link just shows the newest orders.
    const older = typeof req.query.cursor === 'string' ? decodeCursor(req.query.cursor) : null;
    const newer = !older && typeof req.query.before === 'string' ? decodeCursor(req.query.before) : null;
    const size = pageSize(req);
    // Totals come from the status counts, kept by triggers; with a search, a flag, a delivery or a team filter,
    // the chips count what matches (by status, up to COUNT_CAP in all), in one query that replaces the total's.
    const counted = Boolean(q || flag || delivery || assignee || pay);
    const [page, counts, paused, matching, members] = await Promise.all([
      services.orders.page(workspace.id, filters, { limit: size, position: newer ?? older, direction: newer ? 'newer' : 'older' }),
      services.stats.statusCounts(workspace.id),
      services.calls.pausedForCredits(workspace.id, workspace.owner_id),
      counted ? services.orders.countByStatus(workspace.id, filters) : Promise.resolve(null),
      services.team.settings.members(workspace.id),
    ]);
    // Where the page is: the number of newer orders under the same filters (none on the first page).
    const atStart = !older && !newer;
    const before = atStart || !page.newest ? 0 : await services.orders.countUpTo(workspace.id, filters, page.newest);
    const summaries = await services.callViews.summaries(
      workspace.id,
      page.orders.map((order) => order.id),
    );
    const sizeParam = (n: number): Record<string, string> => (n === DEFAULT_PAGE_SIZE ? {} : { size: String(n) });
    // Who the orders are assigned to, and the pay view's counts (team.md): kept by every link of the list.
    const teamKept = {
      ...(assignee ? { assignee } : {}),
      ...(pay ? { pay: pay.kind, member: pay.member, period: `${pay.from}..${pay.to}` } : {}),
    };
    const filtersKept = {
      ...(filter ? { status: filter } : {}),
      ...(flag ? { flag } : {}),
      ...(delivery ? { delivery } : {}),
      ...(q ? { q } : {}),
      ...teamKept,
    };
    const keep = { ...filtersKept, ...sizeParam(size) };
    const link = (extra: Record<string, string> = {}) => `/orders${queryString({ ...keep, ...extra })}`;
    // Reading newer orders, "more" means newer ones remain; reading older ones, it means older ones do.
    const hasNewer = newer ? page.more : older !== null;
    const hasOlder = newer ? true : page.more;
    const all = Object.values(counts).reduce((sum, n) => sum + n, 0);
    const chipCounts = matching ?? counts;
    const chipTotal = Object.values(chipCounts).reduce((sum, n) => sum + n, 0);
    const shownTotal = filter ? chipCounts[filter] : chipTotal;
    const lang = languageOf(req);
    const number = (n: number) => formatNumber(n, lang);
    const capped = (n: number) => (counted && n > COUNT_CAP ? req.t('listing.over', { n: number(COUNT_CAP) }) : number(n));
    const range =
      page.orders.length === 0
        ? null
        : before > COUNT_CAP
          ? req.t('listing.rangeFar', { n: number(COUNT_CAP), total: capped(shownTotal) })
          : req.t('listing.range', {
              from: number(before + 1),
              to: number(before + page.orders.length),
              total: capped(Math.max(shownTotal, before + page.orders.length)),
            });
    res.render('orders/index', {
      orders: page.orders,
      summaries,
      paused,
      total: all,
      // The chips' numbers: a status's orders among those the search, flag and delivery filters match.
      chipCounts,
      chipTotal: capped(chipTotal),
      chipsCapped: counted && chipTotal > COUNT_CAP,
      range,
      size,
      pageSizes: PAGE_SIZES,
      sizeLink: (n: number) => `/orders${queryString({ ...filtersKept, ...sizeParam(n) })}`,
      firstLink: hasNewer ? link() : null,
      counts,
      statuses: ORDER_STATUSES,
      filter,
      flag,
      flags: ORDER_FLAGS,
      q,
      chipLink: (status: string | null) =>
        `/orders${queryString({ ...(status ? { status } : {}), ...(flag ? { flag } : {}), ...(delivery ? { delivery } : {}), ...(q ? { q } : {}) })}`,
      // The same filters, the search left out.
      clearSearchLink: `/orders${queryString({ ...(filter ? { status: filter } : {}), ...(flag ? { flag } : {}), ...(delivery ? { delivery } : {}) })}`,
      flagLink: (wanted: string | null) =>
        `/orders${queryString({ ...(filter ? { status: filter } : {}), ...(wanted ? { flag: wanted } : {}), ...(delivery ? { delivery } : {}), ...(q ? { q } : {}) })}`,
      delivery,
      deliveryStatuses: DELIVERY_STATUSES,
      deliveryLink: (wanted: string | null) =>
        `/orders${queryString({ ...(filter ? { status: filter } : {}), ...(flag ? { flag } : {}), ...(wanted ? { delivery: wanted } : {}), ...(q ? { q } : {}) })}`,
      newerLink: hasNewer && page.newest ? link({ before: encodeCursor(page.newest) }) : null,
      olderLink: hasOlder && page.oldest ? link({ cursor: encodeCursor(page.oldest) }) : null,
      // The file's header row in the page's language (English: the API's names).
      assignee,
      pay,
      members,
      isOwner: isOwner(workspace),
      memberName: (id: string | null) => members.find((m) => m.user_id === id)?.name ?? null,
      assigneeLink: (wanted: string | null) =>
        `/orders${queryString({ ...(filter ? { status: filter } : {}), ...(flag ? { flag } : {}), ...(delivery ? { delivery } : {}), ...(q ? { q } : {}), ...(wanted ? { assignee: wanted } : {}) })}`,
      back: `/orders${queryString(keep)}`,
      exportLink: `/api/orders/export.csv${queryString({ ...filtersKept, ...(languageOf(req) === 'en' ? {} : { lang: languageOf(req) }) })}`,
    });
  });

  // The owner's selection on the list: the ticked orders to a member, or back to the pool.
  router.post('/orders/assign', async (req, res) => {
    const given = req.body?.order_ids;
    const orderIds = Array.isArray(given) ? given : typeof given === 'string' ? [given] : [];
    const to = typeof req.body?.user_id === 'string' && req.body.user_id !== '' ? req.body.user_id : null;
    const back = typeof req.body?.back === 'string' && /^\/orders(\?[^\s]*)?$/.test(req.body.back) ? req.body.back : '/orders';
    try {
      const { assigned } = await services.team.reassign(workspaceOf(req).workspace, { orderIds, userId: to });
      await redirectWithNotice(req, res, back, req.t('orders.assigned', { count: assigned }));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await redirectWithNotice(req, res, back, req.t('orders.assignNone'));
    }
  });

  async function renderNew(req: Request, res: Response, status = 200, form: FormState = {}) {
    const agents = await services.agents.list(workspaceId(req));
    res.status(status).render('orders/new', {
      hasHandler: agents.some((agent) => agent.is_order_handler),
      values: form.values ?? {},
      errors: form.errors ?? {},
    });
  }

  router.get('/orders/new', (req, res) => renderNew(req, res));

  router.post('/orders', async (req, res) => {
    const values = formValues(req, ORDER_FORM_INPUTS);
    try {
      const { order } = await services.orders.create(workspaceId(req), withTypedAmount(values), { source: 'form' });
      // A blocked number's order is declined at once: the notice says so, not "waiting for confirmation".
      const added = order.flags.includes('blocked_phone') ? 'orders.notice.addedBlocked' : 'orders.notice.added';
      await redirectWithNotice(req, res, '/orders', req.t(added, { name: order.client_name }));
    } catch (err) {
      if (err instanceof AppError && err.code === 'NO_ORDER_HANDLER') return redirectWithNotice(req, res, '/agents', req.t('orders.notice.noHandler'));
      if (!(err instanceof ValidationError)) throw err;
      await renderNew(req, res, 400, { values, errors: errorsByInput(err, FORM_FIELD) });
    }
  });

  async function renderOrder(req: Request, res: Response, status = 200, form: FormState & { deliveryValues?: Record<string, string> } = {}) {
    const order = await services.orders.get(workspaceId(req), String(req.params.id));
    const [anonymisedAt, calls, history, risk, deliveryEvents] = await Promise.all([
      services.retention.anonymisedAt(workspaceId(req), order.id),
      services.callViews.forOrder(workspaceId(req), order.id),
      services.orders.history(workspaceId(req), order),
      services.riskOf(workspaceId(req), order),
      services.deliveries.events(workspaceId(req), order.id),
    ]);
    res.status(status).render('orders/show', {
      order,
      anonymisedAt,
      calls,
      history,
      ...risk,
      deliveryEvents,
      deliveryStatuses: DELIVERY_STATUSES,
      deliveryValues: form.deliveryValues ?? {
        status: order.delivery?.status ?? 'shipped',
        carrier: order.delivery?.carrier ?? '',
        tracking_number: order.delivery?.tracking_number ?? '',
        carrier_status: '',
      },
      statuses: ORDER_STATUSES,
      values: form.values ?? formOf(order, languageOf(req)),
      errors: form.errors ?? {},
    });
  }

  router.get('/orders/:id', (req, res) => renderOrder(req, res));

  router.post('/orders/:id', async (req, res) => {
    const values = formValues(req, ORDER_FORM_INPUTS);
    try {
      const order = await services.orders.update(workspaceId(req), String(req.params.id), withTypedAmount(values));
      await redirectWithNotice(req, res, `/orders/${order.id}`, req.t('orders.notice.updated'));
    } catch (err) {
      if (err instanceof ValidationError) return renderOrder(req, res, 400, { values, errors: errorsByInput(err, FORM_FIELD) });
      if (err instanceof ConflictError) return renderOrder(req, res, 409, { errors: { form: pageMessage(err) } });
      throw err;
    }
  });

  router.post('/orders/:id/status', async (req, res) => {
    const { status, back } = formValues(req, ['status', 'back']);
    try {
      const order = await services.orders.update(workspaceId(req), String(req.params.id), { status });
      const changed = back
        ? req.t('orders.notice.otherStatus', { at: formatDate(order.created_at, languageOf(req)), status: req.t(`status.${order.status}`) })
        : req.t('orders.notice.status', { status: req.t(`status.${order.status}`) });
      await redirectWithNotice(req, res, backTo(back, `/orders/${order.id}`), changed);
    } catch (err) {
      if (!(err instanceof InvalidStatusError)) throw err;
      await renderOrder(req, res, 400, { errors: { status: pageMessage(err) } });
    }
  });

  router.post('/orders/:id/delivery', async (req, res) => {
    const values = formValues(req, ['status', 'carrier', 'tracking_number', 'carrier_status']);
    const ctx = workspaceOf(req);
    try {
      await services.deliveries.setByPerson(ctx.workspace.id, String(req.params.id), values, ctx.user.name);
      await redirectWithNotice(req, res, `/orders/${String(req.params.id)}`, req.t('delivery.saved'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderOrder(req, res, 400, { deliveryValues: values, errors: errorsByInput(err, DELIVERY_FORM_FIELD) });
    }
  });

  router.post('/orders/:id/operations', async (req, res) => {
    const id = String(req.params.id);
    try {
      await services.operations.requeue(workspaceId(req), id);
      await redirectWithNotice(req, res, `/orders/${id}`, req.t('orders.notice.queued'));
    } catch (err) {
      if (err instanceof ConflictError) return redirectWithNotice(req, res, `/orders/${id}`, req.t('orders.notice.alreadyQueued'));
      if (err instanceof AppError && err.code === 'NO_ORDER_HANDLER') {
        return redirectWithNotice(req, res, '/agents', req.t('orders.notice.noHandlerCall'));
      }
      throw err;
    }
  });

  router.get('/orders/:id/delete', async (req, res) => {
    const order = await services.orders.get(workspaceId(req), String(req.params.id));
    res.render('orders/delete', { order });
  });

  router.post('/orders/:id/delete', async (req, res) => {
    const order = await services.orders.remove(workspaceId(req), String(req.params.id));
    await redirectWithNotice(req, res, '/orders', req.t('orders.notice.deleted', { name: order.client_name }));
  });
  return router;
}
