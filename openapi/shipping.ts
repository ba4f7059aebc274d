import { z } from 'zod';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { errors, NOT_FOUND, OWNER_ONLY, SESSION_ERRORS, instant, uuid } from './common';

const KINDS = ['sendit', 'ozon_express', 'digylog', 'yalidine'] as const;
const PARCEL_STATES = ['queued', 'sending', 'sent', 'failed', 'uncertain', 'needs_city', 'needs_amount', 'cancelled'] as const;

const CarrierAccountBody = named(
  'CarrierAccount',
  z.looseObject({
    id: uuid,
    kind: z.enum(KINDS),
    title: z.string().meta({ description: "The carrier's name: Sendit, Ozon Express, Digylog, Yalidine" }),
    name: z.string(),
    pickup_city_id: z.string().nullable().meta({ description: "The carrier's city where the courier collects the parcels (Sendit, Yalidine)" }),
    allow_open: z.boolean().meta({ description: 'The customer may open the parcel before paying' }),
    auto_ship: z.boolean().meta({ description: 'Each order of its stores is shipped as soon as it is confirmed (once)' }),
    stores: z.array(z.string()).meta({ description: 'The stores it ships by itself; empty: all' }),
    state: z.enum(['working', 'credentials_refused', 'unreachable']),
    state_since: instant.nullable(),
    state_reason: z.string().nullable().meta({ description: "The carrier's words when it refused the credentials or stopped answering" }),
    cities: z.number().int().meta({ description: "The cities (or districts) of the carrier's list kept for matching" }),
    cities_refreshed_at: instant.nullable(),
    unknown_words: z.record(z.string(), z.number().int()).meta({ description: 'Status words of the carrier no adapter knows yet, and how often each came' }),
    created_at: instant,
    push_url: z.string().nullable().optional().meta({
      description:
        "Owner only: the address to paste in the carrier's portal for its status notifications (with a random token for a carrier that does not sign; null for a carrier without push)",
    }),
  }),
);
const ACCOUNT_EXAMPLE = {
  id: '6a0f4c1e-2b3d-4e5f-8a9b-1c2d3e4f5a6b',
  kind: 'sendit',
  title: 'Sendit',
  name: 'Sendit Casa',
  pickup_city_id: '1',
  allow_open: true,
  auto_ship: false,
  stores: [],
  state: 'working',
  state_since: null,
  state_reason: null,
  cities: 412,
  cities_refreshed_at: '2026-11-29T06:00:00.000Z',
  unknown_words: {},
  created_at: '2026-11-29T06:00:00.000Z',
  push_url: 'https://confirm.example.ma/hooks/carrier-accounts/6a0f4c1e-2b3d-4e5f-8a9b-1c2d3e4f5a6b',
};

const ShipmentBody = named(
  'Shipment',
  z.looseObject({
    id: uuid,
    account_id: uuid,
    created_at: instant,
    counts: z.record(z.enum(PARCEL_STATES), z.number().int()),
    done: z.boolean().meta({ description: 'No parcel of it is queued or being sent' }),
    parcels: z.array(
      z.looseObject({
        order_id: uuid.nullable(),
        reference: z.string().meta({ description: "What the carrier knows the parcel by: the order's store reference, else its id" }),
        client_name: z.string().nullable(),
        city: z.string().nullable().meta({ description: "The order's city as written" }),
        state: z.enum(PARCEL_STATES),
        tracking_number: z.string().nullable(),
        label_url: z.string().nullable(),
        reason: z.string().nullable().meta({ description: "The carrier's reason for a refusal, as received" }),
        city_id: z.string().nullable().meta({ description: "The carrier's city it goes to" }),
      }),
    ),
  }),
);

const ACCOUNT_ERRORS = {
  400: {
    description:
      'VALIDATION_ERROR: an unknown kind, a missing credential (`fields["credentials.<name>"]`), credentials the carrier refused (the field and the carrier\'s reason), a pickup city not in its list',
    example: {
      error: 'Validation failed',
      code: 'VALIDATION_ERROR',
      fields: { 'credentials.secret_key': 'The carrier refused these credentials: Identifiants incorrects' },
    },
  },
};

export function register(b: OpenApiBuilder): void {
  b.tag('Shipping', 'Confirmed orders handed to a carrier the service can call: accounts, shipments, labels, news.');
  b.add(
    {
      method: 'get',
      path: '/api/carrier-accounts',
      tag: 'Shipping',
      security: ['session'],
      summary: 'List the carrier accounts',
      description: 'Every member reads them; never their credentials.',
      responses: {
        200: {
          description: 'Oldest first',
          schema: z.looseObject({ carrier_accounts: z.array(CarrierAccountBody) }),
          example: { carrier_accounts: [ACCOUNT_EXAMPLE] },
        },
        ...errors(SESSION_ERRORS),
      },
    },
    {
      method: 'post',
      path: '/api/carrier-accounts',
      tag: 'Shipping',
      security: ['session'],
      summary: 'Add a carrier account',
      description:
        "Owner only. `{kind, name, credentials, pickup_city_id?, allow_open?, auto_ship?, stores?}`; the credentials each kind asks for: sendit `public_key`, `secret_key`; ozon_express `customer_id`, `api_key`; digylog `token`, `store`, `network`; yalidine `api_id`, `api_token`, `webhook_secret`. They are checked at the carrier first (a login, its city list), stored encrypted, and never answered. The carrier's city list is kept for matching.",
      body: {
        schema: z.looseObject({ kind: z.enum(KINDS), name: z.string(), credentials: z.record(z.string(), z.string()) }),
        example: { kind: 'sendit', name: 'Sendit Casa', credentials: { public_key: 'pk_…', secret_key: 'sk_…' }, pickup_city_id: '1' },
      },
      responses: {
        201: { description: 'The account, with its push URL', schema: CarrierAccountBody, example: ACCOUNT_EXAMPLE },
        ...errors(SESSION_ERRORS, OWNER_ONLY, ACCOUNT_ERRORS),
      },
    },
    {
      method: 'get',
      path: '/api/carrier-accounts/{id}',
      tag: 'Shipping',
      security: ['session'],
      summary: 'A carrier account',
      description: 'The owner also reads its `push_url`.',
      responses: {
        200: { description: 'The account', schema: CarrierAccountBody, example: ACCOUNT_EXAMPLE },
        ...errors(SESSION_ERRORS, NOT_FOUND('Carrier account')),
      },
    },
    {
      method: 'put',
      path: '/api/carrier-accounts/{id}',
      tag: 'Shipping',
      security: ['session'],
      summary: 'Change a carrier account',
      description:
        'Owner only. Any of `name`, `pickup_city_id`, `allow_open`, `auto_ship`, `stores`, `credentials` (checked at the carrier first; the account works again, and the parcels that waited for it go).',
      body: { schema: z.looseObject({}), example: { auto_ship: true } },
      responses: {
        200: { description: 'The account', schema: CarrierAccountBody, example: ACCOUNT_EXAMPLE },
        ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND('Carrier account'), ACCOUNT_ERRORS),
      },
    },
    {
      method: 'delete',
      path: '/api/carrier-accounts/{id}',
      tag: 'Shipping',
      security: ['session'],
      summary: 'Remove a carrier account',
      description:
        'Owner only. Refused while parcels are being sent with it or wait for a decision; its sent parcels go with it, and the orders keep their delivery.',
      responses: {
        204: { description: 'Removed' },
        ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND('Carrier account'), {
          409: {
            description: 'carrier_account_busy: parcels are being sent with it, or wait for a decision',
            example: {
              error: 'This account still has parcels being sent: wait for them, or decide on the uncertain ones, before removing it',
              code: 'carrier_account_busy',
            },
          },
        }),
      },
    },
    {
      method: 'get',
      path: '/api/carrier-accounts/{id}/cities',
      tag: 'Shipping',
      security: ['session'],
      summary: "The carrier's cities",
      description: "The account's copy of its carrier's city list (refreshed daily), by name.",
      responses: {
        200: {
          description: 'The cities',
          schema: z.looseObject({ cities: z.array(z.looseObject({ id: z.string(), name: z.string(), arabicName: z.string().nullable() })) }),
          example: { cities: [{ id: '3', name: 'Fes', arabicName: 'فاس' }] },
        },
        ...errors(SESSION_ERRORS, NOT_FOUND('Carrier account')),
      },
    },
    {
      method: 'post',
      path: '/api/shipments',
      tag: 'Shipping',
      security: ['session'],
      summary: 'Ship confirmed orders',
      description:
        "`{accountId, orderIds[]}` (1 to 500 confirmed orders of the workspace; `cities?`: order id → the carrier's city id, for orders whose city was not matched). Each order becomes one parcel: `queued` (a job makes it at the carrier), or `needs_city` (its city as written is not in the carrier's list without doubt) or `needs_amount`. An order has one live parcel: shipping it again is a 409 naming its tracking number.",
      body: {
        schema: z.looseObject({ accountId: uuid, orderIds: z.array(uuid) }),
        example: { accountId: ACCOUNT_EXAMPLE.id, orderIds: ['0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10'] },
      },
      responses: {
        202: { description: 'Queued', schema: z.looseObject({ shipment_id: uuid }), example: { shipment_id: '1d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a' } },
        ...errors(SESSION_ERRORS, NOT_FOUND('Carrier account'), {
          400: {
            description: 'VALIDATION_ERROR: no orders, over 500, an order not of the workspace or not confirmed',
            example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { orderIds: 'Only confirmed orders can be shipped (1 are not)' } },
          },
          409: {
            description: 'already_shipped: an order already has a live parcel, or a delivery',
            example: { error: '1 of these orders already have a parcel (tracking number SD100042)', code: 'already_shipped' },
          },
        }),
      },
    },
    {
      method: 'get',
      path: '/api/shipments/{id}',
      tag: 'Shipping',
      security: ['session'],
      summary: "A shipment's progress",
      description: "Each order's parcel: its state, tracking number, the carrier's reason when it refused.",
      responses: {
        200: {
          description: 'The shipment',
          schema: ShipmentBody,
          example: {
            id: '1d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a',
            account_id: ACCOUNT_EXAMPLE.id,
            created_at: '2026-11-29T06:10:00.000Z',
            counts: { queued: 0, sending: 0, sent: 1, failed: 0, uncertain: 0, needs_city: 0, needs_amount: 0, cancelled: 0 },
            done: true,
            parcels: [
              {
                order_id: '0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10',
                reference: '#2104',
                client_name: 'Amina Benali',
                city: 'Casa',
                state: 'sent',
                tracking_number: 'SD100042',
                label_url: 'https://app.sendit.ma/labels/SD100042.pdf',
                reason: null,
                city_id: '1',
              },
            ],
          },
        },
        ...errors(SESSION_ERRORS, NOT_FOUND('Shipment')),
      },
    },
    {
      method: 'post',
      path: '/api/shipments/{id}/cities',
      tag: 'Shipping',
      security: ['session'],
      summary: 'Choose the cities of the orders that needed one',
      description: "`{cities: {<order id>: <carrier's city id>}}`: each order is queued, and the choice remembered for that written city and account.",
      body: { schema: z.looseObject({ cities: z.record(z.string(), z.string()) }), example: { cities: { '0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10': '3' } } },
      responses: { 200: { description: 'The shipment', schema: ShipmentBody }, ...errors(SESSION_ERRORS, NOT_FOUND('Shipment')) },
    },
    {
      method: 'get',
      path: '/api/shipments/{id}/labels.pdf',
      tag: 'Shipping',
      security: ['session'],
      summary: "A shipment's labels in one PDF",
      description:
        "The carriers' labels of its sent parcels, merged in the shipment's order. `X-Labels-Missing`: how many parcels have no label (the carrier gives none, or it could not be read).",
      responses: {
        200: { description: 'The PDF', media: 'application/pdf' },
        ...errors(SESSION_ERRORS, NOT_FOUND('Shipment')),
      },
    },
    {
      method: 'post',
      path: '/api/orders/{id}/parcel',
      tag: 'Shipping',
      security: ['session'],
      summary: 'Decide on an uncertain parcel, or cancel a parcel',
      description:
        'A parcel whose carrier\'s answer was lost and that the carrier cannot be asked about: `{action: "created", tracking}` (read in the carrier\'s portal: the order is shipped with it) or `{action: "send_again"}`.',
      body: { schema: z.looseObject({ action: z.enum(['created', 'send_again', 'cancel']) }), example: { action: 'created', tracking: 'SD100042' } },
      responses: {
        200: { description: 'What the parcel is now', schema: z.looseObject({ state: z.enum(['sent', 'queued', 'cancelling']) }), example: { state: 'sent' } },
        ...errors(SESSION_ERRORS, NOT_FOUND('Parcel'), {
          400: { description: 'VALIDATION_ERROR: an unknown action, no tracking number', example: { error: 'Validation failed', code: 'VALIDATION_ERROR' } },
        }),
      },
    },
  );
  const pushErrors = errors({
    400: { description: 'Verified, but not a message of this carrier we can read', example: { error: 'unreadable_body' } },
    401: { description: 'A wrong signature or token: nothing is recorded', example: { error: 'invalid_signature' } },
    404: { description: 'No such account, or its carrier does not push (answered before the body is read)', example: { error: 'not_found' } },
    413: { description: 'PAYLOAD_TOO_LARGE: over 256 kB', example: { error: 'Request body is too large', code: 'PAYLOAD_TOO_LARGE' } },
    500: { description: 'An unexpected error', example: { error: 'Internal server error' } },
  });
  const pushAnswer = {
    description: 'Understood: how many updates named a parcel of the account; a subscription check is answered with its token as text',
    schema: z.looseObject({ ok: z.literal(true), updated: z.number().int(), ignored: z.number().int() }),
    example: { ok: true, updated: 1, ignored: 0 },
  };
  for (const [path, how] of [
    [
      '/hooks/carrier-accounts/{id}',
      'signed as the carrier signs (Sendit `X-Sendit-Signature`, Yalidine `X-YALIDINE-SIGNATURE`: hex HMAC-SHA256 of the raw body)',
    ],
    ['/hooks/carrier-accounts/{id}/{token}', 'for a carrier that does not sign (Ozon Express): the token of the account’s push URL is the proof'],
  ] as const) {
    b.add(
      {
        method: 'post',
        path,
        tag: 'Shipping',
        security: [],
        summary: "A carrier's status news",
        description: `The push URL of a carrier account, ${how}. Each update is written as delivery news of the parcel's order (source \`carrier\`).`,
        body: { schema: z.looseObject({}), example: { event: 'delivery.status.update', data: { code: 'SD100042', newStatus: 'DELIVERED' } } },
        responses: { 200: pushAnswer, ...pushErrors },
      },
      {
        method: 'get',
        path,
        tag: 'Shipping',
        security: [],
        summary: "A carrier's subscription check",
        description: 'Yalidine checks a webhook address with `?subscribe&crc_token=X`: answered with X.',
        responses: { 200: { description: 'The token, as text', media: 'text/plain' }, ...pushErrors },
      },
    );
  }
}
