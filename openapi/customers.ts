import { z } from 'zod';
import type { OpenApiBuilder, Parameter } from './builder';
import { named } from './builder';
import { errors, OWNER_ONLY, SESSION_ERRORS } from './common';
import { ORDER_EXAMPLE, OrderBody } from './orders';

const phone: Parameter = {
  name: 'phone',
  in: 'path',
  required: true,
  description:
    'The phone in any form an order accepts (`0612345678`, `+212612345678`, `212612345678`, with spaces or dashes, Arabic-Indic digits), URL-encoded (`%2B212612345678`)',
  schema: z.string(),
  example: '0612345678',
};

const PHONE_400 = {
  400: {
    description: 'VALIDATION_ERROR: `fields.phone` when the path is no Moroccan phone number (`fields.unblock` when `unblock` is neither true nor false)',
    example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { phone: 'Enter a valid Moroccan phone number, e.g. 06 12 34 56 78' } },
  },
};

export const CustomerBody = named(
  'Customer',
  z.looseObject({
    phone: z.string().meta({ description: 'Normalised: `+212` and nine digits' }),
    orders: z.array(OrderBody).meta({ description: "Every order of the phone in the caller's workspace, newest first; `[]` for a phone it has none of" }),
  }),
);

const ErasureBody = named(
  'CustomerErasure',
  z.looseObject({
    erased: z.number().int().meta({ description: 'How many orders were anonymised (0 when the phone had none)' }),
    unblocked: z.boolean().meta({ description: "Whether the number's block-list entry was removed" }),
  }),
);

export function register(b: OpenApiBuilder): void {
  b.tag(
    'Customers',
    "A customer's request (law 09-08): every order of a phone number in the workspace, and their erasure. The dashboard's /customers/{phone} page exports them too (JSON with the calls' notes and replies and the delivery history, and CSV).",
  );
  b.add(
    {
      method: 'get',
      path: '/api/customers/{phone}',
      tag: 'Customers',
      security: ['session'],
      summary: "A customer's orders",
      description:
        "Every order of the phone in the caller's workspace, as `GET /api/orders/:id` shows each one. A phone with no orders is `200` with `orders: []`.",
      parameters: [phone],
      responses: {
        200: { description: 'The normalised phone and its orders', schema: CustomerBody, example: { phone: '+212612345678', orders: [ORDER_EXAMPLE] } },
        ...errors(SESSION_ERRORS, PHONE_400),
      },
    },
    {
      method: 'delete',
      path: '/api/customers/{phone}',
      tag: 'Customers',
      security: ['session'],
      summary: 'Erase a customer',
      description:
        "The workspace owner only. Anonymises at once every order of the phone in the caller's workspace (client name, phone, address, city and note; their calls' summaries, noted changes and replies), keeping statuses, amounts, dates and counters, so /stats is unchanged; stops their open calls; rewrites the webhook messages about them. No `order.updated` is sent for it: endpoints subscribed to `customer.erased` receive `{phone_sha256, order_count, erased_at}` (the SHA-256, in hex, of the normalised phone `+212…`), once, when an order was erased. `unblock` (in the body, or the query) `true` also removes the number from the block list (default `false`). The phone's next order is a new customer's: no duplicate flag, no history.",
      parameters: [
        phone,
        { name: 'unblock', in: 'query', description: '`true` or `false` (the body may say it instead)', schema: z.enum(['true', 'false']), example: 'true' },
      ],
      body: { schema: z.looseObject({ unblock: z.boolean().optional() }), example: { unblock: true }, required: false },
      responses: {
        200: { description: 'How many orders were erased', schema: ErasureBody, example: { erased: 3, unblocked: true } },
        ...errors(SESSION_ERRORS, OWNER_ONLY, PHONE_400),
      },
    },
  );
}
