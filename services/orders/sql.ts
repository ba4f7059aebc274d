import type { Knex } from 'knex';
import { insertJobsSql, QUEUES } from '../../db/jobs';
import { API_COLUMNS, INPUT_FIELDS } from '../../db/order-fields';
import type { Prepared } from '../../db/prepared';
import { POSITION_AT } from './filters';
import { firstOperationStatusSql } from './flags';
import type { Order, OrderSource, OrderField, ValidOrder } from './model';
import { FIELD_COLUMNS } from './model';

/**
 * The statements of the orders service: the columns it reads and writes, the INSERTs of one order,
 * of a store's order and of a batch, and the prepared listing queries.
 */
export type Columns = Partial<Record<(typeof FIELD_COLUMNS)[OrderField], string | null>>;

export function toColumns(data: Partial<Record<OrderField, string | null | undefined>>): Columns {
  const columns: Columns = {};
  for (const [field, value] of Object.entries(data)) {
    if (value !== undefined && Object.hasOwn(FIELD_COLUMNS, field)) columns[FIELD_COLUMNS[field as OrderField]] = value;
  }
  return columns;
}

/** The columns an order's JSON is made from (toOrder), of orders aliased `o`. */
export const ORDER_FIELDS = API_COLUMNS.map((column) => `o.${column}`);

/** The columns a caller writes, and their placeholders with their types, in the order of createValues. */
const INPUT_COLUMNS = INPUT_FIELDS.map((field) => field.column).join(', ');
const INPUT_VALUES = INPUT_FIELDS.map((field) => `?::${field.type}`).join(', ');

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
 * An operation is due at once, or at the next opening of the calling hours (`call_due_at`), worked
 * out once per statement with the handler: every order of it has the same workspace and the same
 * now() (an import's batch of 1,000 called it 1,000 times).
 */
function createOrdersSql(insertOrders: string, answer: string, before = ''): string {
  return `
  WITH ${before} handler AS (
    SELECT id, workspace_id, call_due_at(workspace_id, now()) AS due_at FROM agents WHERE workspace_id = ?::uuid AND is_order_handler LIMIT 1
  ), o AS (
    ${insertOrders}
  ), op AS (
    INSERT INTO operations (id, workspace_id, order_id, agent_id, direction, status, next_attempt_at)
    SELECT o.operation_id, o.workspace_id, o.id, handler.id, 'outbound', s.status, CASE WHEN s.status = 'pending' THEN handler.due_at END
      FROM o, handler, LATERAL (SELECT ${firstOperationStatusSql('o.flags')} AS status) s
    RETURNING id, status
  ), job AS (
    ${insertJobsSql(QUEUES.operationDue.name, "(SELECT id FROM op WHERE status = 'pending') AS op", "jsonb_build_object('operationId', op.id)", 'op.id::text')}
  )
  ${answer}`;
}

/** An order's columns as a new order's statement returns them: those of its JSON. */
const RETURNED = API_COLUMNS.join(', ');

/** One new order: no row comes back without an order handler (nor, after `onConflict`, for a conflict). */
function createOrderSql(onConflict: string): string {
  return createOrdersSql(
    `INSERT INTO orders (workspace_id, ${INPUT_COLUMNS}, operation_id, source, store_connection_id, external_updated_at)
      SELECT handler.workspace_id, ${INPUT_VALUES}, gen_random_uuid(), ?::text, ?::uuid, ?::timestamptz FROM handler
      ${onConflict}
      RETURNING ${RETURNED}`,
    'SELECT o.* FROM o',
  );
}
/** POST /api/orders and the pages. */
export const CREATE_ORDER = createOrderSql('');
/** The same, prepared: parsed and planned once per connection (the hot path of order creation). */
export const CREATE_ORDER_PREPARED = numbered('ocs-create-order', CREATE_ORDER);
/**
 * A store's order: a second one for the same (connection, store id), from a message arriving in
 * parallel, waits for the first to commit and then writes nothing, operation and job included.
 */
export const CREATE_STORE_ORDER = createOrderSql('ON CONFLICT (store_connection_id, external_id) WHERE store_connection_id IS NOT NULL DO NOTHING');

/** Where an order came from, which the caller's body never says; a store's order also says when the store last changed it. */
export interface StoreOrigin {
  source: OrderSource;
  storeConnectionId: string | null;
  externalUpdatedAt?: string | null;
}

/** The bind values of CREATE_ORDER and CREATE_STORE_ORDER, in their order. */
export function createValues(workspaceId: string, data: ValidOrder, origin: StoreOrigin): Knex.RawBinding[] {
  return [workspaceId, ...INPUT_FIELDS.map((field) => data[field.input] ?? null), origin.source, origin.storeConnectionId, origin.externalUpdatedAt ?? null];
}

/** A statement written with knex's `?` placeholders, as a prepared statement with `$1`, `$2`… in their order. */
function numbered(name: string, sql: string): Prepared {
  let n = 0;
  return { name, text: sql.replace(/\?/g, () => `$${++n}`) };
}

/** Postgres's foreign_key_violation: CREATE_FROM_STORE_MESSAGE's claim named an order that did not go in. */
export const FOREIGN_KEY_VIOLATION = '23503';

/**
 * A store's message for an order we have never seen, in one statement (the hot path of a flash
 * sale): the message's event row is claimed as `created`, naming the order's id made here, and the
 * order is created only if the claim went in. The claim gives way to a delivery already logged and
 * to an order already there; then nothing is written. When the order itself gives way (no order
 * handler, or the same store order committed by a parallel message after our look), the claim names
 * an order that does not exist and its foreign key fails the whole statement: nothing is written
 * either, and the caller takes the careful path.
 */
export const CREATE_FROM_STORE_MESSAGE: Prepared = numbered(
  'ocs-store-order',
  createOrdersSql(
    `INSERT INTO orders (id, workspace_id, ${INPUT_COLUMNS}, operation_id, source, store_connection_id, external_updated_at)
    SELECT ?::uuid, handler.workspace_id, ${INPUT_VALUES}, gen_random_uuid(), ?::text, ?::uuid, ?::timestamptz FROM handler
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
 * A batch of new orders (an import), as one array per column (the id, the columns a caller writes,
 * placed_at), so the statement has the same parameters whatever the batch's size. `$2` is how many orders the import has already created: the
 * batch's k-th order is created ($2 + k - 1) microseconds after now(), so a file's rows stay in its
 * order across batches. It answers how many orders it created.
 */
export const CREATE_ORDERS = createOrdersSql(
  `INSERT INTO orders (id, workspace_id, ${INPUT_COLUMNS}, created_at, placed_at, operation_id, source)
    SELECT i.id, handler.workspace_id, ${INPUT_FIELDS.map((field) => `i.${field.column}`).join(', ')},
           now() + (?::int + i.n - 1) * interval '1 microsecond', i.placed_at, gen_random_uuid(), 'import'
      FROM handler, unnest(?::uuid[], ${INPUT_FIELDS.map((field) => `?::${field.type}[]`).join(', ')}, ?::timestamptz[])
           WITH ORDINALITY AS i(id, ${INPUT_COLUMNS}, placed_at, n)
    RETURNING id, workspace_id, operation_id, flags`,
  'SELECT count(*)::int AS created FROM o',
);

/** A page's fields: created_at comes as the page position's text instead (see toOrder). */
export const PAGE_FIELDS = ORDER_FIELDS.filter((field) => field !== 'o.created_at');

export type PageRow = Omit<Order, 'created_at'> & { position_at: string };

/** The unfiltered listing, newest first: its first rows ($2 of them), and the rows older than a position. */
const LIST_SELECT = `SELECT ${PAGE_FIELDS.join(', ')}, ${POSITION_AT} FROM orders o`;
export const LIST_NEWEST: Prepared = {
  name: 'ocs-orders-newest',
  text: `${LIST_SELECT} WHERE o.workspace_id = $1 ORDER BY o.created_at DESC, o.id DESC LIMIT $2`,
};
export const LIST_OLDER: Prepared = {
  name: 'ocs-orders-older',
  text: `${LIST_SELECT} WHERE o.workspace_id = $1 AND (o.created_at, o.id) < ($3::timestamptz, $4::uuid) ORDER BY o.created_at DESC, o.id DESC LIMIT $2`,
};
