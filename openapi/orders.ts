import { z } from 'zod';
import { DELIVERY_STATUSES, DELIVERY_WORDS } from '../services/deliveries';
import { DEFAULT_LIMIT, DELIVERY_FILTERS, MAX_LIMIT, ORDER_STATUSES, contentSchema, editSchema, ORDER_FLAGS } from '../services/orders';
import { ORDER_SOURCES, STORE_KINDS } from '../services/stores';
import type { OpenApiBuilder, Parameter, Route, Security } from './builder';
import { named } from './builder';
import type { ErrorExamples } from './common';
import { BODY_ERRORS, DATA_API_ERRORS, errors, IDEMPOTENCY_ERRORS, idempotencyKey, instant, NOT_FOUND, replayedHeader, SESSION_ERRORS, uuid } from './common';
import { OperationBody } from './operations';

export const OrderStatus = named('OrderStatus', z.enum(ORDER_STATUSES).meta({ description: 'The ten statuses of an order' }));
const OrderSource = named(
  'OrderSource',
  z.enum(ORDER_SOURCES).meta({
    description: `The path the order came in by, set by us, never by the caller: \`form\` (the orders page), \`api\`, \`data_api\`, \`import\` (a CSV file), or the kind of store connection: ${STORE_KINDS.map((kind) => `\`${kind}\``).join(', ')}. Orders older than this field: \`api\``,
  }),
);
export const OrderFlag = named(
  'OrderFlag',
  z.enum(ORDER_FLAGS).meta({
    description:
      '`possible_duplicate`: the same phone had an order in the 48 hours before, with the same products (ignoring case, accents and spaces), not ended `unconfirmed`; the order is still called. `blocked_phone`: the phone was on the workspace\'s block list (`/api/settings/blocked-phones`); the order was created `unconfirmed` with its operation cancelled (no call, no credit), and "call again" still queues one. `refused_before`: the same phone had an order whose delivery ended `refused` or `returned` in the 180 days before.',
  }),
);

export const DeliveryStatus = named(
  'DeliveryStatus',
  z.enum(DELIVERY_STATUSES).meta({
    description:
      'What happened at the door: `shipped` (handed to a carrier), `in_transit`, `out_for_delivery`, `delivered`, `refused` (refused at the door, or cancelled by the customer), `returned` (back at the shop), `lost`. Any may follow any other.',
  }),
);

/** What a piece of delivery news says: a status, or an attempt. */
export const DeliveryNews = named(
  'DeliveryNews',
  z.enum(DELIVERY_WORDS).meta({
    description:
      "A delivery status, or `attempted`: the courier could not deliver yet (no answer, postponed, unreachable). An attempt changes the carrier's words (`carrier_status`) and their time only, never the delivery status, and is kept in the history as an attempt.",
  }),
);
const DeliveryBody = named(
  'Delivery',
  z
    .looseObject({
      status: DeliveryStatus,
      carrier: z.string().nullable().meta({ description: 'At most 100 characters' }),
      tracking_number: z.string().nullable().meta({ description: 'At most 100 characters; unique among the orders of a workspace' }),
      carrier_status: z.string().nullable().meta({ description: "The carrier's own words for the last status, as received (at most 200)" }),
      updated_at: instant.meta({ description: 'The time of the last event applied' }),
    })
    .nullable()
    .meta({ description: 'null until something is known about the delivery' }),
);
const DELIVERY_EXAMPLE = {
  status: 'delivered',
  carrier: 'Ozon Express',
  tracking_number: 'OZ123456789MA',
  carrier_status: 'Livré',
  updated_at: '2026-11-27T15:02:11.000Z',
};

export const OrderBody = named(
  'Order',
  z.looseObject({
    id: uuid,
    workspace_id: uuid,
    client_name: z.string(),
    phone: z.string().meta({ description: 'Normalised: `+212` and nine digits' }),
    store_name: z.string(),
    products_name: z.string(),
    address: z.string().nullable(),
    city: z.string().nullable().meta({ description: 'The delivery city, e.g. `Marrakech` (at most 100 characters)' }),
    note: z.string().nullable().meta({ description: "The customer's or the shop's remark (at most 1,000 characters)" }),
    status: OrderStatus,
    created_at: instant,
    placed_at: instant.nullable().meta({ description: "When the shop took the order (an imported file's date column); null when unknown" }),
    operation_id: uuid.nullable().meta({ description: "The order's current (latest) operation" }),
    flags: z.array(OrderFlag).meta({ description: 'Set when the order is created, whatever path created it; `[]` when none' }),
    source: OrderSource,
    store_connection_id: uuid.nullable().meta({ description: 'The store connection it came through (kept when the connection is deleted)' }),
    external_id: z.string().nullable().meta({ description: "The store's own id of the order, e.g. `5678901234`" }),
    external_ref: z.string().nullable().meta({ description: 'What the shop calls the order, e.g. `#1001`' }),
    total_amount: z
      .string()
      .regex(/^\d+(\.\d{2,3})?$/)
      .nullable()
      .meta({ description: 'The amount to collect, with its currency\'s number of decimals (ISO 4217), e.g. `"349.00"` MAD, `"89.350"` TND' }),
    currency: z.string().nullable().meta({ description: 'ISO 4217; `MAD` when an amount was given without one' }),
    delivery: DeliveryBody,
    assigned_to: uuid
      .nullable()
      .meta({ description: 'The member the order is assigned to (docs/team.md): offered to them first by "Start next call"; null: anyone on shift' }),
    assigned_at: instant.nullable().meta({ description: 'When it was assigned (automatically when created, or by the owner)' }),
    rescheduled_for: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .nullable()
      .meta({ description: 'The day a follow-up call’s customer gave for the courier to come back (YYYY-MM-DD), to pass to the carrier' }),
  }),
);

export const ORDER_EXAMPLE = {
  id: '0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10',
  workspace_id: '5d2c7a40-8e8b-4f0e-9d1c-6a1b2c3d4e5f',
  client_name: 'Amina El Idrissi',
  phone: '+212612345678',
  store_name: 'Atlas',
  products_name: 'Argan oil 250 ml',
  address: 'Rue 12, Maarif',
  city: 'Casablanca',
  note: 'Call after 18:00',
  status: 'pending',
  created_at: '2026-11-23T13:05:00.000Z',
  placed_at: null,
  operation_id: '9a4e2b6c-1d3f-4a5b-8c7d-0e1f2a3b4c5d',
  flags: [],
  source: 'api',
  store_connection_id: null,
  external_id: null,
  external_ref: '#1001',
  total_amount: '349.00',
  currency: 'MAD',
  delivery: null,
  assigned_to: null,
  assigned_at: null,
  rescheduled_for: null,
};

const OrderList = z.looseObject({ orders: z.array(OrderBody) });
const OrderPage = named(
  'OrderPage',
  z.looseObject({
    orders: z.array(OrderBody),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next (older) page; null on the last page' }),
  }),
);

/** A new order: the service's own schema (camelCase; snake_case names are accepted too) and a status. */
const orderInput = contentSchema.extend({ status: z.enum(ORDER_STATUSES).optional().meta({ description: 'Default `pending`' }) });
const orderEdit = editSchema.extend({ status: z.enum(ORDER_STATUSES).optional() });
const INPUT_NOTE = 'Fields in camelCase or snake_case (`client_name`, …; camelCase wins when both are given); other fields are ignored.';

/** The listing parameters shared by the list and the export. */
export const FILTERS: Parameter[] = [
  {
    name: 'status',
    in: 'query',
    description: `One status, or several separated by commas: ${ORDER_STATUSES.join(', ')}`,
    schema: z.string(),
    example: 'pending,postponed',
  },
  {
    name: 'flag',
    in: 'query',
    description: `Orders with a flag: one, or several separated by commas (any of them): ${ORDER_FLAGS.join(', ')}`,
    schema: z.string(),
    example: 'possible_duplicate',
  },
  {
    name: 'delivery',
    in: 'query',
    description: `Orders whose delivery is in a status (one, or several separated by commas), \`none\` for orders with no delivery yet, or a state of their handing to a carrier account (\`unshipped\`: confirmed without a delivery or a parcel under way; \`ship_failed\`: the carrier refused its last parcel; \`needs_city\`: its parcel waits for a city choice): ${DELIVERY_FILTERS.join(', ')}`,
    schema: z.string(),
    example: 'refused,returned',
  },
  {
    name: 'q',
    in: 'query',
    description:
      'Search (at most 200 characters), case- and accent-insensitive, in the client name, store and products; a phone by its digits in any usual form',
    schema: z.string().max(200),
    example: 'helene',
  },
  {
    name: 'from',
    in: 'query',
    description: '`created_at` ≥ this: a date or date-time without offset is Morocco time; with `Z` or an offset it is that instant',
    schema: z.string(),
    example: '2026-11-01',
  },
  { name: 'to', in: 'query', description: '`created_at` < this (same forms as `from`)', schema: z.string(), example: '2026-12-01' },
  {
    name: 'assignee',
    in: 'query',
    description: 'Orders assigned to `mine` (the caller), `none` (nobody: the pool), or a member’s id',
    schema: z.string(),
    example: 'mine',
  },
  {
    name: 'pay',
    in: 'query',
    description:
      'With `member` and `period`: the orders behind a count of the pay view: `confirmed` (the member’s call confirmed them within the period) or `delivered` (they confirmed them and they were delivered within it)',
    schema: z.enum(['confirmed', 'delivered']),
    example: 'delivered',
  },
  { name: 'member', in: 'query', description: 'The member of `pay`', schema: z.string() },
  {
    name: 'period',
    in: 'query',
    description: 'The days of `pay`, Morocco time: `YYYY-MM-DD..YYYY-MM-DD`',
    schema: z.string(),
    example: '2026-10-01..2026-10-31',
  },
];

const LISTING: Parameter[] = [
  { name: 'limit', in: 'query', description: `Orders a page, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT})`, schema: z.string().regex(/^\d{1,4}$/), example: '50' },
  { name: 'cursor', in: 'query', description: '`next_cursor` of the previous page', schema: z.string() },
  ...FILTERS,
];

const VALIDATION_400: ErrorExamples = {
  400: {
    description: 'VALIDATION_ERROR (with `fields`), INVALID_STATUS (with `allowed`), INVALID_JSON, INVALID_IDEMPOTENCY_KEY',
    example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { clientName: 'Client name is required' } },
  },
};
const NO_HANDLER: ErrorExamples = {
  422: {
    description: 'NO_ORDER_HANDLER (with `redirectTo: "/agents"`); IDEMPOTENCY_KEY_REUSED: the key was used with another body',
    example: { error: 'Set an agent as order handler before creating orders', code: 'NO_ORDER_HANDLER', redirectTo: '/agents' },
  },
};

/**
 * The order routes, for the session API (`/api`, PUT) and the Data API (`/data/v1`, PATCH): the
 * same router (routes/api/orders.ts) answers both.
 */
export function orderRoutes(prefix: string, tag: string, security: Security[], updateMethod: 'put' | 'patch'): Route[] {
  const auth = security.includes('session') ? SESSION_ERRORS : DATA_API_ERRORS;
  const base = `${prefix}/orders`;
  return [
    {
      method: 'get',
      path: base,
      tag,
      security,
      summary: 'List the orders',
      description:
        "Without parameters: the contract's whole list `{orders}`, newest first, streamed. With any of `limit`, `cursor`, `status`, `flag`, `delivery`, `q`, `from`, `to`: one page `{orders, next_cursor}`, by keyset on (created_at, id).",
      parameters: LISTING,
      responses: {
        200: {
          description: 'The whole list, or one page when a listing parameter is given',
          schema: z.union([OrderPage, OrderList]),
          example: { orders: [ORDER_EXAMPLE], next_cursor: 'WyIyMDI2LTExLTIzVDEzOjA1OjAwLjAwMDAwMFoiLCIwYjZmMWY5ZSJd' },
        },
        ...errors(auth, {
          400: {
            description:
              'VALIDATION_ERROR: `fields` names each bad parameter (unknown status, limit out of range, a cursor we did not give, an impossible date, a parameter given twice)',
            example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { limit: 'limit must be a whole number from 1 to 500' } },
          },
        }),
      },
    },
    {
      method: 'post',
      path: base,
      tag,
      security,
      summary: 'Create an order',
      description: `Creates the order and its pending operation for the order handler. ${INPUT_NOTE}`,
      parameters: [idempotencyKey],
      body: {
        schema: orderInput,
        example: {
          clientName: 'Amina El Idrissi',
          phone: '06 12 34 56 78',
          storeName: 'Atlas',
          productsName: 'Argan oil 250 ml',
          address: 'Rue 12, Maarif, Casablanca',
          externalRef: '#1001',
          totalAmount: '349.00',
        },
      },
      responses: {
        201: { description: 'The order, with its `operation_id`', schema: OrderBody, example: ORDER_EXAMPLE, headers: replayedHeader },
        ...errors(auth, BODY_ERRORS, VALIDATION_400, IDEMPOTENCY_ERRORS, NO_HANDLER),
      },
    },
    {
      method: 'get',
      path: `${base}/{id}`,
      tag,
      security,
      summary: 'Read an order',
      responses: { 200: { description: 'The order', schema: OrderBody, example: ORDER_EXAMPLE }, ...errors(auth, NOT_FOUND('Order')) },
    },
    {
      method: updateMethod,
      path: `${base}/{id}`,
      tag,
      security,
      summary: 'Update an order',
      description: `Content fields only while the order is \`pending\`; \`status\` at any time (a final status cancels the open operation). ${INPUT_NOTE}`,
      body: { schema: orderEdit, example: { status: 'confirmed' } },
      responses: {
        200: { description: 'The updated order', schema: OrderBody, example: { ...ORDER_EXAMPLE, status: 'confirmed' } },
        ...errors(auth, BODY_ERRORS, VALIDATION_400, NOT_FOUND('Order'), {
          409: {
            description: 'ORDER_NOT_EDITABLE: content changes to an order that is no longer pending',
            example: { error: 'Only a pending order can be edited; its status can still be changed', code: 'ORDER_NOT_EDITABLE' },
          },
        }),
      },
    },
    {
      method: 'delete',
      path: `${base}/{id}`,
      tag,
      security,
      summary: 'Delete an order',
      description: 'Its operations and calls go with it.',
      responses: { 204: { description: 'Deleted' }, ...errors(auth, NOT_FOUND('Order')) },
    },
    {
      method: 'put',
      path: `${base}/{id}/delivery`,
      tag,
      security,
      summary: "Set an order's delivery",
      description:
        "A person's change, always applied (an event from a carrier older than the last one applied is only kept in the history). `carrier` and `trackingNumber` are kept when not given. `at` (ISO 8601, not in the future) defaults to now. `status` `attempted` records an attempt: the carrier's words change, the status stays. Sends `order.delivery_updated` when the delivery changes. Fields in camelCase or snake_case.",
      body: {
        schema: z.object({
          status: DeliveryNews,
          carrier: z.string().max(100).optional(),
          trackingNumber: z.string().max(100).optional(),
          carrierStatus: z.string().max(200).optional(),
          at: z.string().optional().meta({ description: 'ISO 8601 date-time, not in the future; default now' }),
        }),
        example: { status: 'delivered', carrier: 'Ozon Express', trackingNumber: 'OZ123456789MA', carrierStatus: 'Livré' },
      },
      responses: {
        200: { description: 'The order, with its delivery', schema: OrderBody, example: { ...ORDER_EXAMPLE, status: 'confirmed', delivery: DELIVERY_EXAMPLE } },
        ...errors(auth, BODY_ERRORS, NOT_FOUND('Order'), {
          400: {
            description:
              'VALIDATION_ERROR naming each bad field: unknown status, too long, `at` unreadable or in the future, a tracking number another order of the workspace has',
            example: {
              error: 'Validation failed',
              code: 'VALIDATION_ERROR',
              fields: { trackingNumber: 'This tracking number belongs to another order of the workspace' },
            },
          },
        }),
      },
    },
    {
      method: 'get',
      path: `${base}/{id}/delivery/events`,
      tag,
      security,
      summary: "An order's delivery history",
      description:
        "The news that changed the delivery, oldest first, and the news that arrived out of order (older than the last applied: kept, not applied); the same news received again adds nothing. `status` `attempted` is an attempt (the carrier's words changed, not the status). `by` is a user's name, a connection's name or a file name.",
      responses: {
        200: {
          description: 'The events',
          schema: z.looseObject({
            events: z.array(
              z.looseObject({
                status: DeliveryNews,
                carrier_status: z.string().nullable(),
                at: instant,
                source: z.enum(['person', 'import', 'carrier', 'store']),
                by: z.string().nullable(),
              }),
            ),
          }),
          example: { events: [{ status: 'shipped', carrier_status: 'Ramassé', at: '2026-11-26T09:00:00.000Z', source: 'import', by: 'ozon-2026-11-26.csv' }] },
        },
        ...errors(auth, NOT_FOUND('Order')),
      },
    },
    {
      method: 'get',
      path: `${base}/{id}/operations`,
      tag,
      security,
      summary: "An order's operations",
      description: 'Oldest first, each with its calls (an expired claim is not shown).',
      responses: {
        200: { description: 'The operations', schema: z.looseObject({ operations: z.array(OperationBody) }) },
        ...errors(auth, NOT_FOUND('Order')),
      },
    },
    {
      method: 'post',
      path: `${base}/{id}/operations`,
      tag,
      security,
      summary: 'Call again',
      description: 'Queues a new confirmation (due now) with the current order handler; the order is `pending` again.',
      responses: {
        201: { description: 'The new pending operation', schema: OperationBody },
        ...errors(auth, NOT_FOUND('Order'), {
          409: {
            description: 'OPERATION_OPEN: the order already has an open confirmation',
            example: { error: 'This order already has an open confirmation', code: 'OPERATION_OPEN' },
          },
          422: {
            description: 'NO_ORDER_HANDLER (with `redirectTo`)',
            example: { error: 'Set an agent as order handler before queuing a confirmation', code: 'NO_ORDER_HANDLER', redirectTo: '/agents' },
          },
        }),
      },
    },
  ];
}

export function register(b: OpenApiBuilder): void {
  b.tag('Orders', 'Orders of the signed-in user\'s workspace (session cookie), and their operations ("call again", call history).');
  b.add(...orderRoutes('/api', 'Orders', ['session'], 'put'));
}
