import { z } from 'zod';
import { AppError, ValidationError, moroccanPhone, bodyFields, camelOrSnake, optionalText, parse, requiredText, msg } from '../../services/shared';
import { ORDER_STATUSES } from './status';
import type { OrderStatus } from './status';
import type { OrderFlag } from './flags';
import { deliveryOf } from './delivery';
import type { Delivery, DeliveryColumns } from './delivery';
import { CALL_REQUESTED_FIELDS, INPUT_FIELDS } from '../../db/order-fields';
import type { ApiField, CallRequestedField, InputColumns } from '../../db/order-fields';

/**
 * An order as clients see it, and the rules of its fields: the input names, the zod schemas of a
 * new and an edited order, amounts and their decimals, and the mapper from a row to the JSON.
 */
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
  /** The member the order is assigned to (services/team); null: any confirmer may take it. */
  assigned_to: string | null;
  assigned_at: string | null;
  /** The day a follow-up's customer gave for the courier's next visit (YYYY-MM-DD). */
  rescheduled_for: string | null;
}

/** The paths an order comes in by besides a store connection, whose kind is the order's source (the stores' registry). */
export const ORDER_CHANNELS = ['form', 'api', 'data_api', 'import'] as const;
/** An order's source: one of ORDER_CHANNELS, or the kind of the store connection it came by (`ORDER_SOURCES` of `stores`). */
export type OrderSource = string;

/** Input field names (camelCase) and the column each one writes (db/order-fields.ts); the column name is also accepted. */
export const FIELD_COLUMNS = Object.fromEntries(INPUT_FIELDS.map((field) => [field.input, field.column])) as InputColumns;
export type OrderField = keyof typeof FIELD_COLUMNS;
export type OrderInput = Partial<Record<OrderField, unknown>>;

/**
 * Reads the order fields of a body given in camelCase or snake_case (camelCase wins when both are
 * present). Anything else in the body is ignored, so ids and timestamps can never be set by a client.
 */
export function normalizeOrderInput(body: unknown): OrderInput {
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

export function checkStatus(status: unknown): OrderStatus | undefined {
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

/**
 * ISO 4217 minor units other than 2. The SQL function `currency_minor_units` (webhook_order's
 * amounts) is generated from this table: db/currency_minor_units.sql.ts.
 */
export const MINOR_UNITS: Readonly<Record<string, number>> = {
  ...Object.fromEntries(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((c) => [c, 3])),
  ...Object.fromEntries(
    ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'].map((c) => [c, 0]),
  ),
};

/** The decimals of a currency the table does not name. */
export const USUAL_MINOR_UNITS = 2;

/** How many decimals an amount in `currency` has (MAD 2, TND 3). */
export function minorUnits(currency: string | null | undefined): number {
  return MINOR_UNITS[currency ?? DEFAULT_CURRENCY] ?? USUAL_MINOR_UNITS;
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

/**
 * An amount as the API shows it, as text with its currency's decimals (`"349.00"` MAD, `"89.350"`
 * TND): the database driver reads numeric columns as numbers (db/knex.ts), and a webhook's stored
 * order has it as text already.
 */
export function amountText(value: number | string | null | undefined, currency?: string | null): string | null {
  return value === null || value === undefined ? null : Number(value).toFixed(minorUnits(currency));
}

export type StoreFields =
  | 'source'
  | 'store_connection_id'
  | 'external_id'
  | 'external_ref'
  | 'total_amount'
  | 'currency'
  | 'city'
  | 'note'
  | 'placed_at'
  | 'assigned_to'
  | 'assigned_at'
  | 'rescheduled_for';

/** The order's JSON, keys always in this order (a replayed response is byte-for-byte the first). */
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
    // An answer stored for an Idempotency-Key before orders were assigned has none of these.
    assigned_to: row.assigned_to ?? null,
    assigned_at: row.assigned_at ? new Date(row.assigned_at).toISOString() : null,
    rescheduled_for: row.rescheduled_for ?? null,
  } satisfies Record<ApiField, unknown>;
}

/** The row a `call.requested`'s order is made from. */
export type CallRequestedRow = Pick<Order, 'id' | 'client_name' | 'phone' | 'store_name' | 'products_name' | 'status'> &
  Partial<Pick<Order, 'address' | 'city' | 'note' | 'external_ref' | 'currency'>> & {
    created_at: Date | string;
    placed_at?: Date | string | null;
    total_amount?: number | string | null;
  };

/**
 * The order a `call.requested` tells a voice agent about: the API's order cut to the fields the
 * definition gives it (db/order-fields.ts), among them what the agent asks the client to have ready
 * at delivery and the shop's order number.
 */
export function callRequestedOrder(row: CallRequestedRow): Pick<Order, CallRequestedField> {
  // The fields a call.requested leaves out are not read: their defaults stand in. (toOrder reads
  // placed_at as a Date or its text alike; its row type names only the text.)
  const order = toOrder({ workspace_id: '', operation_id: null, ...row, address: row.address ?? null } as Parameters<typeof toOrder>[0]);
  return Object.fromEntries(CALL_REQUESTED_FIELDS.map((field) => [field, order[field]])) as Pick<Order, CallRequestedField>;
}
