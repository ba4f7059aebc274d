import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { DUPLICATE_WINDOW_HOURS, INPUT_FIELDS } from '../../db/order-fields';
import { queryPrepared } from '../../db/prepared';
import { AppError, ConflictError, NotFoundError, requestHash, isUuid, parse, msg } from '../../services/shared';
import type { IdempotencyService } from '../../services/shared';
import type { OperationService } from './operations';
import { CANCELLING_STATUSES, ORDER_STATUSES } from './status';
import type { OrderStatus } from './status';
import { ANONYMISED_PHONE } from './anonymise';
import { OrderSearch, SEARCH_LIMITS } from './search';
import type { SearchLimits } from './search';
import { applyBounds, applyPosition, encodeCursor, positionCondition, POSITION_AT } from './filters';
import type { OrderFilters, Position } from './filters';
import type { Order, OrderSource, ValidOrder } from './model';
import { normalizeOrderInput, checkStatus, DEFAULT_CURRENCY, editSchema, checkDecimals, validNewOrder, toOrder } from './model';
import type { StoreOrigin, PageRow } from './sql';
import {
  toColumns,
  ORDER_FIELDS,
  CREATE_ORDER,
  CREATE_ORDER_PREPARED,
  CREATE_STORE_ORDER,
  createValues,
  FOREIGN_KEY_VIOLATION,
  CREATE_FROM_STORE_MESSAGE,
  CREATE_ORDERS,
  PAGE_FIELDS,
  LIST_NEWEST,
  LIST_OLDER,
} from './sql';

/** Counts of a filtered listing stop here (the list shows "10,000+"): a count costs what it counts. */
export const COUNT_CAP = 10_000;

/** One page of a listing, newest first, with the positions to page on from either end. */
export interface OrderPage {
  orders: Order[];
  /** More orders lie beyond this page in the direction it was read. */
  more: boolean;
  newest: Position | null;
  oldest: Position | null;
}

export interface PageRequest {
  limit: number;
  position: Position | null;
  direction: 'older' | 'newer';
}

/** The other orders of a customer (same phone), newest first, and a count of each status among them. */
export interface CustomerHistory {
  orders: Order[];
  total: number;
  earlier: number;
  by_status: Partial<Record<OrderStatus, number>>;
}

/** Rows read per query when a whole list is streamed. */
const STREAM_BATCH = 1000;

export interface CreatedOrder {
  order: Order;
  /** True when an Idempotency-Key retry returned the order created by the first request. */
  replayed: boolean;
}

/** Orders of one workspace; every query is scoped by the workspace id it is given. */
export class OrderService {
  private readonly search: OrderSearch;

  constructor(
    private readonly knex: Knex,
    private readonly idempotency: IdempotencyService,
    private readonly operations: OperationService,
    searchLimits: SearchLimits = SEARCH_LIMITS,
  ) {
    this.search = new OrderSearch(knex, (query) => this.pageColumns(query), searchLimits);
  }

  /** One page of the workspace's orders matching the filters, by keyset on (created_at, id). */
  async page(workspaceId: string, filters: OrderFilters, request: PageRequest): Promise<OrderPage> {
    const rows = filters.q ? await this.search.rows<PageRow>(workspaceId, filters, request) : await this.pageRows(workspaceId, filters, request);
    const more = rows.length > request.limit;
    const shown = rows.slice(0, request.limit);
    if (request.direction === 'newer') shown.reverse();
    const position = (row: { position_at: string; id: string } | undefined) => (row ? { at: row.position_at, id: row.id } : null);
    return { orders: shown.map(toOrder), more, newest: position(shown[0]), oldest: position(shown[shown.length - 1]) };
  }

  /** Without a search: walk the newest-first index from the position. */
  private pageRows(workspaceId: string, filters: OrderFilters, request: PageRequest) {
    if (
      filters.statuses.length === 0 &&
      filters.flags.length === 0 &&
      !filters.deliveries?.length &&
      !filters.assignee &&
      !filters.pay &&
      !filters.from &&
      !filters.to &&
      request.direction === 'older'
    ) {
      // The hot listing (the API's lists, a stream's batches): pre-built and prepared.
      const { position, limit } = request;
      return position
        ? queryPrepared<PageRow>(this.knex, LIST_OLDER, [workspaceId, limit + 1, position.at, position.id])
        : queryPrepared<PageRow>(this.knex, LIST_NEWEST, [workspaceId, limit + 1]);
    }
    const query = this.pageColumns(this.knex.from('orders as o')).where('o.workspace_id', workspaceId);
    applyBounds(this.knex, query, filters);
    return applyPosition(query, request.position, request.direction).limit(request.limit + 1);
  }

  /**
   * How many orders match the filters, newer than `newerThan` when given (a page's position), counted
   * up to COUNT_CAP + 1: a number above COUNT_CAP reads "more than 10,000". A search counts as
   * OrderSearch finds its rows; without one, the newest-first indexes are walked no further than the cap.
   */
  async countUpTo(workspaceId: string, filters: OrderFilters, newerThan: Position | null = null): Promise<number> {
    if (filters.q) return this.search.count(workspaceId, filters, newerThan, COUNT_CAP);
    const query = this.knex.from('orders as o').where('o.workspace_id', workspaceId);
    applyBounds(this.knex, query, filters);
    if (newerThan) {
      const { sql, bindings } = positionCondition('o', newerThan, 'newer');
      query.whereRaw(sql, bindings);
    }
    query.select(this.knex.raw('1')).limit(COUNT_CAP + 1);
    const [row] = await this.knex.from(query.as('c')).count<Array<{ n: string }>>({ n: '*' });
    return Number(row.n);
  }

  /** How many orders match the filters but their status, by status (the chips of a search), up to COUNT_CAP + 1 in all. */
  async countByStatus(workspaceId: string, filters: OrderFilters): Promise<Record<OrderStatus, number>> {
    const found = await this.search.countByStatus(workspaceId, { ...filters, statuses: [] }, COUNT_CAP);
    return Object.fromEntries(ORDER_STATUSES.map((status) => [status, found.get(status) ?? 0])) as Record<OrderStatus, number>;
  }

  /** A paged API answer: `{orders, next_cursor}`. */
  async listPage(workspaceId: string, filters: OrderFilters, limit: number, cursor: Position | null): Promise<{ orders: Order[]; next_cursor: string | null }> {
    const page = await this.page(workspaceId, filters, { limit, position: cursor, direction: 'older' });
    return { orders: page.orders, next_cursor: page.more && page.oldest ? encodeCursor(page.oldest) : null };
  }

  /** Every order of the workspace, newest first, handed over a batch at a time (memory stays flat). */
  async *batches(workspaceId: string, filters: OrderFilters = { statuses: [], flags: [], q: null, from: null, to: null }): AsyncGenerator<Order[]> {
    let position: Position | null = null;
    for (;;) {
      const page = await this.page(workspaceId, filters, { limit: STREAM_BATCH, position, direction: 'older' });
      if (page.orders.length > 0) yield page.orders;
      if (!page.more) return;
      position = page.oldest;
    }
  }

  /** The customer's other orders (same phone in the workspace): the newest 20, and their statuses. */
  async history(workspaceId: string, order: Order, shown = 20): Promise<CustomerHistory> {
    // An anonymised order's phone is every anonymised order's: it has no customer to show.
    if (order.phone === ANONYMISED_PHONE) return { orders: [], total: 0, earlier: 0, by_status: {} };
    const others = () => this.knex.from('orders as o').where({ 'o.workspace_id': workspaceId, 'o.phone': order.phone }).whereNot('o.id', order.id);
    const [rows, counts] = await Promise.all([
      others()
        .select(ORDER_FIELDS)
        .orderBy([
          { column: 'o.created_at', order: 'desc' },
          { column: 'o.id', order: 'desc' },
        ])
        .limit(shown),
      others()
        .groupBy('o.status')
        .select(
          'o.status',
          this.knex.raw('count(*)::int AS n'),
          this.knex.raw('count(*) FILTER (WHERE (o.created_at, o.id) < (?::timestamptz, ?::uuid))::int AS earlier', [order.created_at, order.id]),
        ),
    ]);
    const byStatus: Partial<Record<OrderStatus, number>> = {};
    let total = 0;
    let earlier = 0;
    for (const row of counts) {
      byStatus[row.status as OrderStatus] = row.n;
      total += row.n;
      earlier += row.earlier;
    }
    return { orders: rows.map(toOrder), total, earlier, by_status: byStatus };
  }

  /**
   * The orders a `possible_duplicate` flag is about, seen from either of them: the same phone, the
   * same products (case, accents and spaces aside, as the flag compares them), within
   * DUPLICATE_WINDOW_HOURS (48) before or after, whatever their status now (a caller sees which one
   * was cancelled). One range of the phone index.
   */
  async lookalikes(workspaceId: string, order: Order): Promise<Order[]> {
    if (order.phone === ANONYMISED_PHONE) return [];
    const rows = await this.knex
      .from('orders as o')
      .select(ORDER_FIELDS)
      .where({ 'o.workspace_id': workspaceId, 'o.phone': order.phone })
      .whereNot('o.id', order.id)
      .whereRaw(
        `o.created_at BETWEEN ?::timestamptz - interval '${DUPLICATE_WINDOW_HOURS} hours' AND ?::timestamptz + interval '${DUPLICATE_WINDOW_HOURS} hours'`,
        [order.created_at, order.created_at],
      )
      .whereRaw('order_products_key(o.products_name) = order_products_key(?)', [order.products_name])
      .orderBy([
        { column: 'o.created_at', order: 'desc' },
        { column: 'o.id', order: 'desc' },
      ])
      .limit(10);
    return rows.map(toOrder);
  }

  async get(workspaceId: string, id: string): Promise<Order> {
    if (!isUuid(id)) throw orderNotFound();
    const row = await this.knex.from('orders as o').select(ORDER_FIELDS).where({ 'o.workspace_id': workspaceId, 'o.id': id }).first();
    if (!row) throw orderNotFound();
    return toOrder(row);
  }

  /** Creates the order and its pending outbound operation for the handler agent, both or neither. */
  async create(workspaceId: string, body: unknown, options: { idempotencyKey?: string; source?: OrderSource } = {}): Promise<CreatedOrder> {
    const data = validNewOrder(normalizeOrderInput(body));
    const origin = { source: options.source ?? 'api', storeConnectionId: null };
    if (options.idempotencyKey === undefined) {
      return { order: await this.insert(this.knex, workspaceId, data, origin), replayed: false };
    }
    const result = await this.idempotency.once(workspaceId, options.idempotencyKey, requestHash(data), async (trx) => ({
      status: 201,
      body: await this.insert(trx, workspaceId, data, origin),
    }));
    // Stored as jsonb, which reorders keys.
    return { order: toOrder(result.body), replayed: result.replayed };
  }

  /**
   * Status changes at any time; content only while pending. The pending check is part of the
   * UPDATE itself, so a concurrent status change can never let a content edit through.
   */
  async update(workspaceId: string, id: string, body: unknown): Promise<Order> {
    if (!isUuid(id)) throw orderNotFound();
    const input = normalizeOrderInput(body);
    const status = checkStatus(input.status);
    const content = toColumns(parse(editSchema, input));
    if (content.currency) checkDecimals(content.total_amount, content.currency);
    const editsContent = Object.keys(content).length > 0;
    // An amount given without its currency is in MAD, unless the order already names one.
    const currency = content.total_amount && !content.currency ? { currency: this.knex.raw('coalesce(currency, ?)', [DEFAULT_CURRENCY]) } : {};
    const patch = { ...content, ...currency, ...(status ? { status } : {}) };
    if (Object.keys(patch).length === 0) return this.get(workspaceId, id);

    const row = await this.knex.transaction(async (trx) => {
      const updated = trx('orders')
        .where({ id, workspace_id: workspaceId })
        .modify((query) => {
          if (editsContent) query.where('status', 'pending');
        })
        .update(patch, '*');
      const order = await trx.with('updated', updated).from('updated as o').select(ORDER_FIELDS).first();
      if (order && status && CANCELLING_STATUSES.includes(status)) await this.operations.cancelOpen(trx, id);
      return order;
    });
    if (row) return toOrder(row);
    const exists = await this.knex('orders').where({ id, workspace_id: workspaceId }).first('id');
    if (!exists) throw orderNotFound();
    throw new ConflictError(msg('ORDER_NOT_EDITABLE'), 'ORDER_NOT_EDITABLE');
  }

  /** Deletes the order (its operations go with it); returns what it was, for the caller to report. */
  async remove(workspaceId: string, id: string): Promise<Pick<Order, 'id' | 'client_name'>> {
    if (!isUuid(id)) throw orderNotFound();
    const [deleted] = await this.knex('orders').where({ id, workspace_id: workspaceId }).delete(['id', 'client_name']);
    if (!deleted) throw orderNotFound();
    return deleted;
  }

  /**
   * The one statement of `create` (see CREATE_ORDER); without an order handler it writes nothing.
   * `origin` is where the order came from, which the caller's body never says.
   */
  private async insert(db: Knex | Knex.Transaction, workspaceId: string, data: ValidOrder, origin: StoreOrigin): Promise<Order> {
    const values = createValues(workspaceId, data, origin);
    // Outside a transaction (every create but an idempotent one), as a prepared statement.
    const [row] =
      db === this.knex
        ? await queryPrepared<Parameters<typeof toOrder>[0]>(this.knex, CREATE_ORDER_PREPARED, values)
        : (await db.raw(CREATE_ORDER, values)).rows;
    if (!row) throw noOrderHandler();
    return toOrder(row);
  }

  /**
   * A store's new order in the caller's transaction, created as POST /api/orders creates one; null
   * when that store's order already exists (it was created meanwhile). 422 without an order handler.
   */
  async insertFromStore(
    trx: Knex.Transaction,
    workspaceId: string,
    data: ValidOrder,
    origin: StoreOrigin & { storeConnectionId: string },
  ): Promise<Order | null> {
    const { rows } = await trx.raw(CREATE_STORE_ORDER, createValues(workspaceId, data, origin));
    if (!rows[0]) await this.orderHandler(trx, workspaceId);
    return rows[0] ? toOrder(rows[0]) : null;
  }

  /**
   * A store's new order and its message's `created` event in one statement (see
   * CREATE_FROM_STORE_MESSAGE); null when anything gave way, with nothing written.
   */
  async insertFromStoreMessage(
    workspaceId: string,
    data: ValidOrder,
    origin: StoreOrigin & { storeConnectionId: string },
    event: { topic: string; key: string },
  ): Promise<string | null> {
    const id = crypto.randomUUID();
    const externalId = data.externalId ?? null;
    try {
      const [workspace, ...order] = createValues(workspaceId, data, origin);
      const claim = [origin.storeConnectionId, event.topic, event.key, externalId, id, origin.storeConnectionId, externalId];
      // The claim's values, then the handler's workspace, then the order's own id before its columns.
      const rows = await queryPrepared<{ id: string }>(this.knex, CREATE_FROM_STORE_MESSAGE, [...claim, workspace, id, ...order]);
      return rows[0]?.id ?? null;
    } catch (err) {
      if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) return null;
      throw err;
    }
  }

  /**
   * Creates validated orders in the caller's transaction by one statement, each with its operation
   * and dispatch job exactly as `create` makes them. Returns their ids in the given order. `before`
   * is how many orders the same import has already created: each order is a microsecond newer than
   * the one before it, so the list shows a file's last row first.
   */
  async insertBatch(trx: Knex.Transaction, workspaceId: string, orders: ValidOrder[], before: number): Promise<string[]> {
    if (orders.length === 0) return [];
    const batch = orders.map((data) => ({ ...toColumns(data), placed_at: data.placedAt ?? null, id: crypto.randomUUID() }));
    const column = (name: keyof (typeof batch)[number]) => batch.map((row) => row[name] ?? null);
    // A column with a missing address is an array holding nulls, which knex's types do not name.
    const columns = [column('id'), ...INPUT_FIELDS.map((field) => column(field.column)), column('placed_at')];
    const { rows } = await trx.raw(CREATE_ORDERS, [workspaceId, before, ...(columns as string[][])]);
    if (rows[0].created !== batch.length) throw noOrderHandler();
    return batch.map((row) => row.id);
  }

  /** A page's columns (the order's fields, created_at as the page position's text) of orders aliased `o`. */
  private pageColumns(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query.select(PAGE_FIELDS).select(this.knex.raw(POSITION_AT));
  }

  /** The workspace's order handler, whom every new order is queued for; 422 when there is none. */
  async orderHandler(db: Knex | Knex.Transaction, workspaceId: string): Promise<string> {
    const handler = await db('agents').where({ workspace_id: workspaceId, is_order_handler: true }).first('id');
    if (!handler) throw noOrderHandler();
    return handler.id;
  }
}

function noOrderHandler(): AppError {
  return new AppError(422, msg('noHandlerCreate'), 'NO_ORDER_HANDLER', { redirectTo: '/agents' });
}

function orderNotFound(): NotFoundError {
  return new NotFoundError(msg('orderNotFound'));
}
