import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { insertJobsSql, QUEUES } from '../../db/jobs';
import type { Prepared } from '../../db/prepared';
import { queryPrepared } from '../../db/prepared';
import {
  AppError,
  ConflictError,
  NotFoundError,
  ValidationError,
  requestHash,
  moroccanPhone,
  bodyFields,
  camelOrSnake,
  isUuid,
  optionalText,
  parse,
  requiredText,
  msg,
} from '../shared';
import type { IdempotencyService } from '../shared';
import type { OperationService } from './operations';
import { CANCELLING_STATUSES, ORDER_STATUSES } from './status';
import type { OrderStatus } from './status';
import type { OrderFlag } from './flags';
import { DELIVERY_COLUMNS, deliveryOf } from './delivery';
import type { Delivery, DeliveryColumns } from './delivery';
import { OrderSearch, SEARCH_LIMITS } from './search';
import type { SearchLimits } from './search';
import { applyBounds, applyPosition, encodeCursor, POSITION_AT } from './filters';
import type { OrderFilters, Position } from './filters';

/** An order as every client (JSON API, Data API, pages) sees it. */
export interface Order {
  id: string;
  workspace_id: string;
  client_name: string;
  phone: string;
  store_name: string;
  products_name: string;
  address: string | null;
  /** The delivery city, kept apart from the address (≤ 100). */
  city: string | null;
  /** The customer's or the shop's remark (≤ 1,000). */
  note: string | null;
  status: OrderStatus;
  created_at: string;
  /** When the shop took the order (an imported file's date column); `created_at` is when it reached us. */
  placed_at: string | null;
  operation_id: string | null;
  /** What was risky about the order when it came in (see order-flags.ts); `[]` when nothing. */
  flags: OrderFlag[];
  /** The path the order came in by; set by us, never by the caller. */
  source: OrderSource;
  /** The store connection it came through, kept after the connection is deleted. */
  store_connection_id: string | null;
  /** The store's own id of the order. */
  external_id: string | null;
  /** What the shop calls the order (`#1001`). */
  external_ref: string | null;
  /** The amount to collect, with its currency's number of decimals (`"349.00"` MAD, `"89.350"` TND). */
  total_amount: string | null;
  /** ISO 4217; `MAD` when an amount is given without one. */
  currency: string | null;
  /** What happened at the door (services/deliveries); null until something is known. */
  delivery: Delivery | null;
}

/** The paths an order comes in by. */
export const ORDER_SOURCES = ['form', 'api', 'data_api', 'import', 'shopify', 'woocommerce', 'youcan', 'custom'] as const;
export type OrderSource = (typeof ORDER_SOURCES)[number];

/** Input field names (camelCase) and the column each one writes; the column name is also accepted. */
export const FIELD_COLUMNS = {
  clientName: 'client_name',
  phone: 'phone',
  storeName: 'store_name',
  productsName: 'products_name',
  address: 'address',
  city: 'city',
  note: 'note',
  externalId: 'external_id',
  externalRef: 'external_ref',
  totalAmount: 'total_amount',
  currency: 'currency',
  status: 'status',
} as const;
export type OrderField = keyof typeof FIELD_COLUMNS;
export type OrderInput = Partial<Record<OrderField, unknown>>;

/**
 * Reads the order fields of a body given in camelCase or snake_case (camelCase wins when both are
 * present). Anything else in the body is ignored, so ids and timestamps can never be set by a client.
 */
function normalizeOrderInput(body: unknown): OrderInput {
  const source = bodyFields(body);
  const input: OrderInput = {};
  for (const [field, column] of Object.entries(FIELD_COLUMNS) as Array<[OrderField, string]>) {
    const value = camelOrSnake(source, field, column);
    if (value !== undefined) input[field] = value;
  }
  return input;
}

export class InvalidStatusError extends AppError {
  constructor() {
    super(400, msg('unknownOneOf', { label: 'status', allowed: ORDER_STATUSES.join(', ') }), 'INVALID_STATUS', { allowed: ORDER_STATUSES });
  }
}

function checkStatus(status: unknown): OrderStatus | undefined {
  if (status === undefined) return undefined;
  if (!(ORDER_STATUSES as readonly unknown[]).includes(status)) throw new InvalidStatusError();
  return status as OrderStatus;
}

/** The currency of an amount given without one: the shops this service serves are Moroccan. */
export const DEFAULT_CURRENCY = 'MAD';

const AMOUNT_MESSAGE = msg('amountInvalid');

/**
 * The amount to collect, as a number or as plain decimal text (`349`, `349.5`; `349,50` too),
 * kept as typed to three decimals at most; empty (or null) means none. Forms and spreadsheets read
 * what people type (`1 250,00`) with parseAmount before it comes here.
 */
const amount = z
  .union([z.number({ error: AMOUNT_MESSAGE }), z.string({ error: AMOUNT_MESSAGE })], { error: AMOUNT_MESSAGE })
  .nullable()
  .optional()
  .transform((value, ctx) => {
    if (value === null || value === undefined || (typeof value === 'string' && value.trim() === '')) return null;
    const text = typeof value === 'number' ? String(value) : value.trim().replace(',', '.');
    const m = /^(\d{1,12})(?:\.(\d{1,3}))?$/.exec(text);
    if (!m) {
      ctx.addIssue({ code: 'custom', message: AMOUNT_MESSAGE });
      return z.NEVER;
    }
    return `${m[1].replace(/^0+(?=\d)/, '')}${m[2] ? `.${m[2]}` : ''}`;
  })
  .meta({
    description:
      'The amount to collect: a number or decimal text with at most the currency\'s number of decimals (`349`, `"349.50"`; TND 3); answered with them (`"349.00"`)',
  });

/** The amount to collect and its currency, as an order's content and a caller's outcome carry them. */
export const amountFields = {
  totalAmount: amount,
  currency: z
    .string({ error: msg('currencyText') })
    .trim()
    .toUpperCase()
    .regex(/^([A-Z]{3})?$/, msg('currencyInvalid'))
    .nullable()
    .optional()
    .transform((value) => value || null),
};

export const contentSchema = z.object({
  clientName: requiredText('Client name', 200),
  phone: moroccanPhone,
  storeName: requiredText('Store name', 200),
  productsName: requiredText('Products', 1000),
  // An empty (or null) address means "no address".
  address: optionalText('Address', 500),
  city: optionalText('City', 100),
  note: optionalText('Note', 1000),
  externalId: optionalText('External id', 200),
  externalRef: optionalText('External reference', 200),
  ...amountFields,
});
// The store's id of an order is what its later messages find it by: set once, never edited.
export const editSchema = contentSchema.omit({ externalId: true }).partial();

/** `placedAt`: when the shop took the order, known from an import only. */
export type ValidOrder = z.infer<typeof contentSchema> & { status: OrderStatus; placedAt?: string | null };

/** ISO 4217 minor units other than 2 (the migration 20261125_40 gives SQL the same list). */
const MINOR_UNITS: Record<string, number> = {
  ...Object.fromEntries(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((c) => [c, 3])),
  ...Object.fromEntries(
    ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'].map((c) => [c, 0]),
  ),
};

/** How many decimals an amount in `currency` has (MAD 2, TND 3). */
function minorUnits(currency: string | null | undefined): number {
  return MINOR_UNITS[currency ?? DEFAULT_CURRENCY] ?? 2;
}

/** An amount with more decimals than its currency has (349.505 MAD) is refused, by the amount's field. */
export function checkDecimals(amount: string | null | undefined, currency: string | null | undefined): void {
  const decimals = amount?.split('.')[1]?.length ?? 0;
  if (decimals > minorUnits(currency)) throw new ValidationError({ totalAmount: AMOUNT_MESSAGE });
}

/** A new order's fields by the rules of POST /api/orders (status defaults to pending), or the errors. */
export function validNewOrder(input: OrderInput): ValidOrder {
  const status = checkStatus(input.status) ?? 'pending';
  const order = parse(contentSchema, input);
  const currency = order.currency ?? (order.totalAmount ? DEFAULT_CURRENCY : null);
  checkDecimals(order.totalAmount, currency);
  return { ...order, currency, status };
}

type Columns = Partial<Record<(typeof FIELD_COLUMNS)[OrderField], string | null>>;

function toColumns(data: Partial<Record<OrderField, string | null | undefined>>): Columns {
  const columns: Columns = {};
  for (const [field, value] of Object.entries(data)) {
    if (value !== undefined && Object.hasOwn(FIELD_COLUMNS, field)) columns[FIELD_COLUMNS[field as OrderField]] = value;
  }
  return columns;
}

const ORDER_FIELDS = [
  'o.id',
  'o.workspace_id',
  'o.client_name',
  'o.phone',
  'o.store_name',
  'o.products_name',
  'o.address',
  'o.city',
  'o.note',
  'o.status',
  'o.created_at',
  'o.placed_at',
  'o.operation_id',
  'o.flags',
  'o.source',
  'o.store_connection_id',
  'o.external_id',
  'o.external_ref',
  'o.total_amount',
  'o.currency',
  ...DELIVERY_COLUMNS,
];

/**
 * New orders, each with its pending outbound operation for the workspace's order handler and the
 * job that dispatches it, in one statement: one round trip, atomic without a transaction of its own,
 * and nothing written when the workspace has no order handler. `insertOrders` is the INSERT into
 * orders (it reads the `handler` CTE, gives each order a new uuid as operation_id, the id its
 * operation is created with, and returns at least id, workspace_id and operation_id); `answer` is
 * what the statement returns. The first parameter is the workspace.
 *
 * The orders' flags and, for a blocked number, the `unconfirmed` status are set by the database as
 * each row goes in (the orders_flag_risky trigger): `insertOrders` returns `flags`, and an order
 * flagged `blocked_phone` gets its operation cancelled from the start, with no job to dispatch it.
 * An operation is due at once, or at the next opening of the calling hours (`call_due_at`).
 */
function createOrdersSql(insertOrders: string, answer: string, before = ''): string {
  return `
  WITH ${before} handler AS (
    SELECT id, workspace_id FROM agents WHERE workspace_id = ?::uuid AND is_order_handler LIMIT 1
  ), o AS (
    ${insertOrders}
  ), op AS (
    INSERT INTO operations (id, workspace_id, order_id, agent_id, direction, status, next_attempt_at)
    SELECT o.operation_id, o.workspace_id, o.id, handler.id, 'outbound', s.status, CASE WHEN s.status = 'pending' THEN call_due_at(o.workspace_id, now()) END
      FROM o, handler, LATERAL (SELECT CASE WHEN 'blocked_phone' = ANY(o.flags) THEN 'cancelled' ELSE 'pending' END AS status) s
    RETURNING id, status
  ), job AS (
    ${insertJobsSql(QUEUES.operationDue.name, "(SELECT id FROM op WHERE status = 'pending') AS op", "jsonb_build_object('operationId', op.id)", 'op.id::text')}
  )
  ${answer}`;
}

/** An order's columns as a new order's statement returns them. */
const RETURNED = `id, workspace_id, client_name, phone, store_name, products_name, address, city, note, status, created_at, placed_at,
    operation_id, flags, source, store_connection_id, external_id, external_ref, total_amount, currency`;

/** One new order: no row comes back without an order handler (nor, after `onConflict`, for a conflict). */
function createOrderSql(onConflict: string): string {
  return createOrdersSql(
    `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, address, city, note, status, operation_id,
                        source, store_connection_id, external_id, external_ref, total_amount, currency, external_updated_at)
      SELECT handler.workspace_id, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, gen_random_uuid(),
             ?::text, ?::uuid, ?::text, ?::text, ?::numeric, ?::text, ?::timestamptz FROM handler
      ${onConflict}
      RETURNING ${RETURNED}`,
    'SELECT o.* FROM o',
  );
}
/** POST /api/orders and the pages. */
const CREATE_ORDER = createOrderSql('');
/** The same, prepared: parsed and planned once per connection (the hot path of order creation). */
const CREATE_ORDER_PREPARED = numbered('ocs-create-order', CREATE_ORDER);
/**
 * A store's order: a second one for the same (connection, store id), from a message arriving in
 * parallel, waits for the first to commit and then writes nothing, operation and job included.
 */
const CREATE_STORE_ORDER = createOrderSql('ON CONFLICT (store_connection_id, external_id) WHERE store_connection_id IS NOT NULL DO NOTHING');

/** Where an order came from, which the caller's body never says; a store's order also says when the store last changed it. */
export interface StoreOrigin {
  source: OrderSource;
  storeConnectionId: string | null;
  externalUpdatedAt?: string | null;
}

/** The bind values of CREATE_ORDER and CREATE_STORE_ORDER, in their order. */
function createValues(workspaceId: string, data: ValidOrder, origin: StoreOrigin): Knex.RawBinding[] {
  return [
    workspaceId,
    data.clientName,
    data.phone,
    data.storeName,
    data.productsName,
    data.address ?? null,
    data.city ?? null,
    data.note ?? null,
    data.status,
    origin.source,
    origin.storeConnectionId,
    data.externalId ?? null,
    data.externalRef ?? null,
    data.totalAmount ?? null,
    data.currency ?? null,
    origin.externalUpdatedAt ?? null,
  ];
}

/** A statement written with knex's `?` placeholders, as a prepared statement with `$1`, `$2`… in their order. */
function numbered(name: string, sql: string): Prepared {
  let n = 0;
  return { name, text: sql.replace(/\?/g, () => `$${++n}`) };
}

/** Postgres's foreign_key_violation: CREATE_FROM_STORE_MESSAGE's claim named an order that did not go in. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * A store's message for an order we have never seen, in one statement (the hot path of a flash
 * sale): the message's event row is claimed as `created`, naming the order's id made here, and the
 * order is created only if the claim went in. The claim gives way to a delivery already logged and
 * to an order already there; then nothing is written. When the order itself gives way (no order
 * handler, or the same store order committed by a parallel message after our look), the claim names
 * an order that does not exist and its foreign key fails the whole statement: nothing is written
 * either, and the caller takes the careful path.
 */
const CREATE_FROM_STORE_MESSAGE: Prepared = numbered(
  'ocs-store-order',
  createOrdersSql(
    `INSERT INTO orders (id, workspace_id, client_name, phone, store_name, products_name, address, city, note, status, operation_id,
                      source, store_connection_id, external_id, external_ref, total_amount, currency, external_updated_at)
    SELECT ?::uuid, handler.workspace_id, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, gen_random_uuid(),
           ?::text, ?::uuid, ?::text, ?::text, ?::numeric, ?::text, ?::timestamptz FROM handler
     WHERE EXISTS (SELECT 1 FROM claim)
    ON CONFLICT (store_connection_id, external_id) WHERE store_connection_id IS NOT NULL DO NOTHING
    RETURNING id, workspace_id, operation_id, flags`,
    'SELECT o.id FROM o',
    `claim AS (
    INSERT INTO store_events (connection_id, topic, message_key, external_id, result, order_id)
    SELECT ?::uuid, ?::text, ?::text, ?::text, 'created', ?::uuid
     WHERE NOT EXISTS (SELECT 1 FROM orders WHERE store_connection_id = ?::uuid AND external_id = ?::text)
    ON CONFLICT (connection_id, message_key) WHERE message_key IS NOT NULL DO NOTHING
    RETURNING id
  ),`,
  ),
);

/**
 * A batch of new orders (an import), as one array per column, so the statement has the same
 * parameters whatever the batch's size. `$2` is how many orders the import has already created: the
 * batch's k-th order is created ($2 + k - 1) microseconds after now(), so a file's rows stay in its
 * order across batches. It answers how many orders it created.
 */
const CREATE_ORDERS = createOrdersSql(
  `INSERT INTO orders (id, workspace_id, client_name, phone, store_name, products_name, address, city, note, status, created_at, placed_at,
                      operation_id, source, external_id, external_ref, total_amount, currency)
    SELECT i.id, handler.workspace_id, i.client_name, i.phone, i.store_name, i.products_name, i.address, i.city, i.note, i.status,
           now() + (?::int + i.n - 1) * interval '1 microsecond', i.placed_at, gen_random_uuid(),
           'import', i.external_id, i.external_ref, i.total_amount, i.currency
      FROM handler, unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
                           ?::timestamptz[], ?::text[], ?::text[], ?::numeric[], ?::text[])
           WITH ORDINALITY AS i(id, client_name, phone, store_name, products_name, address, city, note, status, placed_at,
                                external_id, external_ref, total_amount, currency, n)
    RETURNING id, workspace_id, operation_id, flags`,
  'SELECT count(*)::int AS created FROM o',
);

/** A page's fields: created_at comes as the page position's text instead (see toOrder). */
const PAGE_FIELDS = ORDER_FIELDS.filter((field) => field !== 'o.created_at');

type PageRow = Omit<Order, 'created_at'> & { position_at: string };

/** The unfiltered listing, newest first: its first rows ($2 of them), and the rows older than a position. */
const LIST_SELECT = `SELECT ${PAGE_FIELDS.join(', ')}, ${POSITION_AT} FROM orders o`;
const LIST_NEWEST: Prepared = {
  name: 'ocs-orders-newest',
  text: `${LIST_SELECT} WHERE o.workspace_id = $1 ORDER BY o.created_at DESC, o.id DESC LIMIT $2`,
};
const LIST_OLDER: Prepared = {
  name: 'ocs-orders-older',
  text: `${LIST_SELECT} WHERE o.workspace_id = $1 AND (o.created_at, o.id) < ($3::timestamptz, $4::uuid) ORDER BY o.created_at DESC, o.id DESC LIMIT $2`,
};

/** The order's JSON, keys always in this order (a replayed response is byte-for-byte the first). */
/**
 * An amount as the API shows it, as text with its currency's decimals (`"349.00"` MAD, `"89.350"`
 * TND): the database driver reads numeric columns as numbers (db/knex.ts), and a webhook's stored
 * order has it as text already.
 */
export function amountText(value: number | string | null | undefined, currency?: string | null): string | null {
  return value === null || value === undefined ? null : Number(value).toFixed(minorUnits(currency));
}

type StoreFields = 'source' | 'store_connection_id' | 'external_id' | 'external_ref' | 'total_amount' | 'currency' | 'city' | 'note' | 'placed_at';

export function toOrder(
  row: Omit<Order, 'created_at' | 'flags' | 'delivery' | StoreFields> & { flags?: OrderFlag[] } & Partial<Pick<Order, Exclude<StoreFields, 'total_amount'>>> & {
      total_amount?: number | string | null;
    } & DeliveryColumns &
    ({ created_at: Date | string } | { created_at?: undefined; position_at: string }),
): Order {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    client_name: row.client_name,
    phone: row.phone,
    store_name: row.store_name,
    products_name: row.products_name,
    address: row.address ?? null,
    // An answer stored for an Idempotency-Key before orders had a city, a note or an order date has none.
    city: row.city ?? null,
    note: row.note ?? null,
    status: row.status,
    // A page's rows carry created_at to the microsecond as ISO text (their position): cut to the
    // millisecond as a Date would, without parsing a date per row.
    created_at: row.created_at === undefined ? `${row.position_at.slice(0, 23)}Z` : new Date(row.created_at).toISOString(),
    placed_at: row.placed_at ? new Date(row.placed_at).toISOString() : null,
    operation_id: row.operation_id ?? null,
    // An answer stored for an Idempotency-Key before orders had flags has none.
    flags: row.flags ?? [],
    // Likewise an answer stored before orders had a source: every order then came by the API.
    source: row.source ?? 'api',
    store_connection_id: row.store_connection_id ?? null,
    external_id: row.external_id ?? null,
    external_ref: row.external_ref ?? null,
    total_amount: amountText(row.total_amount, row.currency),
    currency: row.currency ?? null,
    delivery: deliveryOf(row),
  };
}

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
    if (newerThan) query.whereRaw('(o.created_at, o.id) > (?::timestamptz, ?::uuid)', [newerThan.at, newerThan.id]);
    query.select(this.knex.raw('1')).limit(COUNT_CAP + 1);
    const [row] = await this.knex.from(query.as('c')).count<Array<{ n: string }>>({ n: '*' });
    return Number(row.n);
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

  /** How many orders of the workspace are in each status, from one grouped query. */
  async statusCounts(workspaceId: string): Promise<Record<OrderStatus, number>> {
    // Kept by triggers on orders (see the order_status_counts migration): ten numbers, not a count of every order.
    const rows: Array<{ status: OrderStatus; n: number }> = await this.knex('order_status_counts')
      .where({ workspace_id: workspaceId })
      .groupBy('status')
      .select('status', this.knex.raw('sum(n)::int AS n'));
    const counts = Object.fromEntries(ORDER_STATUSES.map((status) => [status, 0])) as Record<OrderStatus, number>;
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  /**
   * Folds the status counters' deltas into one row per workspace and status (the worker does this
   * every minute); the sums, and so every count read, are the same before and after.
   */
  async compactStatusCounts(minRows = 20): Promise<number> {
    const { rowCount } = await this.knex.raw(
      `WITH folded AS (
         DELETE FROM order_status_counts
          WHERE workspace_id IN (SELECT workspace_id FROM order_status_counts GROUP BY workspace_id HAVING count(*) > ?)
         RETURNING workspace_id, status, n)
       INSERT INTO order_status_counts (workspace_id, status, n)
       SELECT workspace_id, status, sum(n) FROM folded GROUP BY workspace_id, status HAVING sum(n) <> 0`,
      [minRows],
    );
    return rowCount ?? 0;
  }

  /** The customer's other orders (same phone in the workspace): the newest 20, and their statuses. */
  async history(workspaceId: string, order: Order, shown = 20): Promise<CustomerHistory> {
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
   * same products (case, accents and spaces aside, as the flag compares them), within 48 hours
   * before or after, whatever their status now (a caller sees which one was cancelled). One range
   * of the phone index.
   */
  async lookalikes(workspaceId: string, order: Order): Promise<Order[]> {
    const rows = await this.knex
      .from('orders as o')
      .select(ORDER_FIELDS)
      .where({ 'o.workspace_id': workspaceId, 'o.phone': order.phone })
      .whereNot('o.id', order.id)
      .whereRaw("o.created_at BETWEEN ?::timestamptz - interval '48 hours' AND ?::timestamptz + interval '48 hours'", [order.created_at, order.created_at])
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
    const columns = [
      column('id'),
      column('client_name'),
      column('phone'),
      column('store_name'),
      column('products_name'),
      column('address'),
      column('city'),
      column('note'),
      column('status'),
      column('placed_at'),
      column('external_id'),
      column('external_ref'),
      column('total_amount'),
      column('currency'),
    ];
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
