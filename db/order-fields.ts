/**
 * An order's fields, each written once: its columns on `orders` and the representations that carry
 * it. Every list of an order's columns is made from this table: the selects, RETURNING and INSERT
 * column lists of services/orders/sql.ts, the CSV export's columns (services/orders/export.ts), the
 * order of a `call.requested` and its select (services/calls/queries.ts), webhook_order and the
 * fields an `order.updated` names (services/webhooks/db/webhook_order.sql.ts and
 * orders_webhook_events.sql.ts).
 * test/orders/representations.test.ts holds each representation to it.
 *
 * A field (its name is the name every representation gives it) says:
 * - `columns`: its columns on `orders` (its own name when not said; none for a field of the export
 *   made from the order's calls);
 * - `type`: its SQL type as a statement binds it (text when not said);
 * - `input`: the name a caller writes it by (camelCase; the column's name is accepted too): only
 *   these fields are written from a caller's body;
 * - `api`: the order's JSON (toOrder): the API, the Data API, the pages, a webhook's body as sent;
 * - `webhook`: webhook_order, the order a webhook event stores: its SQL, `o.<name>` when `true`;
 * - `csv`: the CSV export: its column's place in the file (1 first), or, for the delivery, which
 *   is several columns there, each column's name and place;
 * - `callRequested`: the order of a `call.requested` sent to a voice agent;
 * - `changed`: its place in an `order.updated`'s `changed_fields`, for a change that is one.
 *
 * The database's copy of a representation changes by a migration only: a change to `webhook` or
 * `changed` changes the text of webhook_order.sql.ts or orders_webhook_events.sql.ts, and
 * test/db/functions.test.ts fails until a new migration carries that text (docs/architecture.md).
 */
interface FieldSpec {
  readonly columns?: readonly string[];
  readonly type?: string;
  readonly input?: string;
  readonly api?: true;
  readonly webhook?: true | string;
  readonly csv?: number | Readonly<Record<string, number>>;
  readonly callRequested?: true;
  readonly changed?: number;
}

/** The id of the order's latest operation, as webhook_order has always given it. */
const LATEST_OPERATION = '(SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1)';

/** The delivery as toOrder builds it (services/orders/delivery.ts), null until something is known. */
const DELIVERY = `CASE WHEN o.delivery_status IS NULL THEN NULL ELSE jsonb_build_object(
        'status', o.delivery_status, 'carrier', o.delivery_carrier, 'tracking_number', o.delivery_tracking_number,
        'carrier_status', o.delivery_carrier_status, 'updated_at', o.delivery_at) END`;

/** In the order of the API's JSON. */
const ORDER_SHAPE = {
  id: { type: 'uuid', api: true, webhook: true, csv: 1, callRequested: true },
  workspace_id: { type: 'uuid', api: true, webhook: true },
  client_name: { input: 'clientName', api: true, webhook: true, csv: 3, callRequested: true, changed: 1 },
  phone: { input: 'phone', api: true, webhook: true, csv: 4, callRequested: true, changed: 2 },
  store_name: { input: 'storeName', api: true, webhook: true, csv: 5, callRequested: true, changed: 3 },
  products_name: { input: 'productsName', api: true, webhook: true, csv: 6, callRequested: true, changed: 4 },
  address: { input: 'address', api: true, webhook: true, csv: 7, callRequested: true, changed: 5 },
  city: { input: 'city', api: true, webhook: true, csv: 18, callRequested: true, changed: 6 },
  note: { input: 'note', api: true, webhook: true, csv: 19, callRequested: true, changed: 7 },
  status: { input: 'status', api: true, webhook: true, csv: 8, callRequested: true, changed: 11 },
  created_at: { type: 'timestamptz', api: true, webhook: true, csv: 2, callRequested: true },
  placed_at: { type: 'timestamptz', api: true, webhook: true, csv: 17, callRequested: true },
  operation_id: { type: 'uuid', api: true, webhook: LATEST_OPERATION },
  flags: { type: 'text[]', api: true, webhook: 'to_jsonb(o.flags)', csv: 11 },
  source: { api: true, webhook: true, csv: 12 },
  store_connection_id: { type: 'uuid', api: true, webhook: true },
  external_id: { input: 'externalId', api: true, webhook: true, csv: 13 },
  external_ref: { input: 'externalRef', api: true, webhook: true, csv: 14, callRequested: true, changed: 8 },
  total_amount: {
    input: 'totalAmount',
    type: 'numeric',
    api: true,
    webhook: 'round(o.total_amount, currency_minor_units(o.currency))::text',
    csv: 15,
    callRequested: true,
    changed: 9,
  },
  currency: { input: 'currency', api: true, webhook: true, csv: 16, callRequested: true, changed: 10 },
  delivery: {
    columns: ['delivery_status', 'delivery_carrier', 'delivery_tracking_number', 'delivery_carrier_status', 'delivery_at'],
    api: true,
    webhook: DELIVERY,
    csv: { delivery_status: 20, carrier: 21, tracking_number: 22, carrier_status: 23 },
  },
  /** The member the order is assigned to (docs/team.md), and since when; null: the pool. */
  assigned_to: { type: 'uuid', api: true, webhook: true },
  assigned_at: { type: 'timestamptz', api: true, webhook: true },
  /** The day a follow-up call's customer gave for the courier's next visit (YYYY-MM-DD). */
  rescheduled_for: { api: true, webhook: true },
  /** How many calls the order had, and the last one's outcome: the export's, from the order's calls. */
  calls: { columns: [], csv: 9 },
  last_outcome: { columns: [], csv: 10 },
} as const satisfies Record<string, FieldSpec>;

type Shape = typeof ORDER_SHAPE;
type ShapeField = keyof Shape;
/** The fields a representation carries. */
type Carried<R extends keyof FieldSpec> = { [K in ShapeField]: Shape[K] extends { readonly [P in R]: unknown } ? K : never }[ShapeField];
export type ApiField = Carried<'api'>;
export type CallRequestedField = Carried<'callRequested'>;
/** A caller's name of a field it may write, and the field. */
export type InputName = { [K in ShapeField]: Shape[K] extends { readonly input: infer I extends string } ? I : never }[ShapeField];
export type InputColumn = Carried<'input'>;
/** Each caller's name of a field and the column it writes. */
export type InputColumns = { readonly [F in InputColumn as Shape[F] extends { readonly input: infer I extends string } ? I : never]: F };
/** A column of the CSV export, by its English header. */
export type CsvColumn =
  | { [K in ShapeField]: Shape[K] extends { readonly csv: number } ? K : never }[ShapeField]
  | { [K in ShapeField]: Shape[K] extends { readonly csv: Readonly<Record<infer C extends string, number>> } ? C : never }[ShapeField];

const FIELDS = Object.entries(ORDER_SHAPE) as Array<[ShapeField, FieldSpec]>;
const columnsOf = ([name, spec]: [string, FieldSpec]): readonly string[] => spec.columns ?? [name];
const carrying = (representation: keyof FieldSpec) => FIELDS.filter(([, spec]) => spec[representation] !== undefined);

/** The fields of each representation, in the order of the API's JSON. */
export const API_FIELDS = carrying('api').map(([name]) => name) as ApiField[];
export const WEBHOOK_FIELDS = carrying('webhook').map(([name]) => name);
export const CALL_REQUESTED_FIELDS = carrying('callRequested').map(([name]) => name) as CallRequestedField[];

/** The columns the order's JSON is made from. */
export const API_COLUMNS = carrying('api').flatMap(columnsOf);

/** The columns a `call.requested`'s order is made from (services/calls/queries.ts). */
export const CALL_REQUESTED_COLUMNS = carrying('callRequested').flatMap(columnsOf);

/** The fields a caller writes: name, column and SQL type, in the order of the API's JSON. */
export const INPUT_FIELDS = carrying('input').map(([name, spec]) => ({
  input: spec.input as InputName,
  column: name as InputColumn,
  type: spec.type ?? 'text',
}));

/** The export's columns in the file's order: header, the field it is of, and the field's columns. */
export const CSV_COLUMNS = carrying('csv')
  .flatMap(([name, spec]) =>
    typeof spec.csv === 'number'
      ? [{ header: name as CsvColumn, at: spec.csv, field: name, columns: columnsOf([name, spec]) }]
      : Object.entries(spec.csv ?? {}).map(([header, at]) => ({ header: header as CsvColumn, at, field: name, columns: columnsOf([name, spec]) })),
  )
  .sort((a, b) => a.at - b.at);

/** The fields an `order.updated` names in `changed_fields`, in their order. */
export const CHANGED_FIELDS = FIELDS.filter(([, spec]) => spec.changed !== undefined)
  .sort(([, a], [, b]) => (a.changed ?? 0) - (b.changed ?? 0))
  .map(([name]) => name);

/**
 * webhook_order's pairs for jsonb_build_object: each webhook field's name and the SQL that reads it
 * from the order `o`, in the order of the API's JSON (services/webhooks/db/webhook_order.sql.ts).
 */
export const WEBHOOK_ORDER_SQL = carrying('webhook').map(([name, spec]) => ({ name, sql: spec.webhook === true ? `o.${name}` : spec.webhook }));

/**
 * A `possible_duplicate` is an order of the same phone and products within this many hours, before
 * or after (the orders_flag_risky trigger, and the lookalikes an order's page shows).
 */
export const DUPLICATE_WINDOW_HOURS = 48;
