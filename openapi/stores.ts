import { z } from 'zod';
import { createSchema, EVENT_LOG_SIZE, EVENT_RESULTS, MAX_CONNECTIONS, STORE_KINDS, STORE_PLATFORMS, updateSchema } from '../services/stores';
import type { OpenApiBuilder, Route } from './builder';
import { named } from './builder';
import { BODY_ERRORS, errors, instant, NOT_FOUND, OWNER_ONLY, SESSION_ERRORS, uuid } from './common';

const count = z.number().int();
const StoreBody = named(
  'StoreConnection',
  z.looseObject({
    id: uuid,
    kind: z.enum(STORE_KINDS),
    name: z.string().meta({ description: "What becomes the orders' `store_name`" }),
    shop: z.string().nullable().meta({ description: "The store's address: `atlas.myshopify.com`, or a WooCommerce site's URL" }),
    cod_only: z.boolean().meta({ description: 'Orders paid online are ignored (they need no confirmation call)' }),
    enabled: z.boolean(),
    pending: z
      .boolean()
      .meta({ description: 'Being connected by the platform’s approval: its webhooks are not registered yet (removed after an hour if never finished)' }),
    disabled_reason: z.enum(['uninstalled']).nullable().meta({ description: '`uninstalled`: the shop removed our Shopify app, which disabled the connection' }),
    connected_by: z.enum(['oauth', 'manual']).meta({ description: '`oauth`: connected in one click; `manual`: keys pasted' }),
    intake_url: z.string().meta({ description: 'Where the store sends its orders: `{PUBLIC_BASE_URL}/hooks/stores/{id}`' }),
    write_back: z.looseObject({ enabled: z.boolean(), last_error: z.string().nullable() }).meta({ description: 'Never the credentials' }),
    reconnect_needed: z.boolean().meta({
      description:
        'Shopify no longer renews the connection’s access token (a refresh was refused): write-back stops until the owner reconnects (the approval again, for the same shop; the connection keeps its id and orders). Orders keep arriving meanwhile.',
    }),
    reconnect_before: z.string().nullable().meta({
      description:
        '`2027-01-01` for a Shopify connection made in one click that holds a non-expiring token, which Shopify refuses from that day: reconnect before it. Null otherwise.',
    }),
    created_at: instant,
    last_event_at: instant.nullable(),
    counts: z.looseObject({ created: count, rejected: count }).meta({ description: 'Events of the last 7 days' }),
  }),
);
const WithSecret = StoreBody.extend({
  secret: z
    .string()
    .meta({ description: 'The signing key we made (a `custom` connection, or WooCommerce without a `secret`): in this answer only, `no-store`' }),
});
const EventBody = named(
  'StoreEvent',
  z.looseObject({
    received_at: instant,
    topic: z.string(),
    external_id: z.string().nullable(),
    result: z.enum(EVENT_RESULTS),
    order_id: uuid.nullable(),
    reason: z.string().nullable().meta({ description: 'For `rejected`: which field was wrong, in the words of a form error' }),
  }),
);

const STORE = {
  id: '4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d',
  kind: 'shopify',
  name: 'Atlas',
  shop: 'atlas.myshopify.com',
  cod_only: true,
  enabled: true,
  pending: false,
  disabled_reason: null,
  connected_by: 'manual',
  intake_url: 'https://ocs.example.com/hooks/stores/4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d',
  write_back: { enabled: false, last_error: null },
  reconnect_needed: false,
  reconnect_before: null,
  created_at: '2026-11-24T09:00:00.000Z',
  last_event_at: null,
  counts: { created: 0, rejected: 0 },
};
const NOT_FOUND_STORE = NOT_FOUND('Store connection');

function route(r: Omit<Route, 'tag' | 'security'>): Route {
  return { tag: 'Stores', security: ['session'], ...r };
}

/** Names as a sentence lists them: `a, b and c`. */
function listed(names: string[], conjunction: 'and' | 'or'): string {
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} ${conjunction} ${names[names.length - 1]}` : names.join('');
}

/** The kinds whose signing key is chosen by `who` (the registry's), as code. */
const signedBy = (who: 'store' | 'store-or-us' | 'us') =>
  STORE_PLATFORMS.filter((platform) => platform.signingKey === who).map((platform) => `\`${platform.kind}\``);

export function register(b: OpenApiBuilder): void {
  const stores = STORE_PLATFORMS.flatMap((platform) => ('title' in platform ? [platform.title] : []));
  b.tag(
    'Stores',
    `Store connections: a ${listed(stores, 'or')} store, or a custom sender (a spreadsheet), sends each new order to the connection's \`intake_url\`. Every member reads the connections and their event log; only the workspace owner adds, changes or deletes one (a member gets 403).`,
  );
  const one = '/api/stores/{id}';
  b.add(
    route({
      method: 'get',
      path: '/api/stores',
      summary: 'List the store connections',
      responses: {
        200: { description: 'Oldest first', schema: z.looseObject({ stores: z.array(StoreBody) }), example: { stores: [STORE] } },
        ...errors(SESSION_ERRORS),
      },
    }),
    route({
      method: 'post',
      path: '/api/stores',
      summary: 'Connect a store',
      description: `\`secret\` is the key the store signs with: required for ${listed(signedBy('store'), 'and')}, made by us for ${listed(signedBy('us'), 'and')} (and for ${listed(signedBy('store-or-us'), 'and')} when left out). At most ${MAX_CONNECTIONS} connections a workspace.`,
      body: { schema: createSchema, example: { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: 'the key from Notifications → Webhooks' } },
      responses: {
        201: { description: 'The connection; with `secret` when we made it', schema: z.union([WithSecret, StoreBody]), example: STORE },
        ...errors(SESSION_ERRORS, OWNER_ONLY, BODY_ERRORS, {
          409: {
            description: `TOO_MANY_STORES: the workspace has ${MAX_CONNECTIONS} connections`,
            example: { error: `A workspace has at most ${MAX_CONNECTIONS} store connections`, code: 'TOO_MANY_STORES' },
          },
        }),
      },
    }),
    route({
      method: 'get',
      path: one,
      summary: 'One store connection',
      description:
        'With `write_back.last_error`: why the outcome of an order could not be written back to the store after the last try (fixed words and the shop’s order number, such as `Order #1001: Shopify answered 401`); a later success clears it.',
      responses: {
        200: {
          description: 'The connection',
          schema: StoreBody,
          example: { ...STORE, write_back: { enabled: true, last_error: 'Order #1001: Shopify answered 401' } },
        },
        ...errors(SESSION_ERRORS, NOT_FOUND_STORE),
      },
    }),
    route({
      method: 'put',
      path: one,
      summary: 'Change a store connection',
      description: 'A disabled connection answers 404 to the store; `write_back: null` removes the credentials.',
      body: { schema: updateSchema, example: { cod_only: false } },
      responses: {
        200: { description: 'The connection', schema: StoreBody, example: { ...STORE, cod_only: false } },
        ...errors(SESSION_ERRORS, OWNER_ONLY, BODY_ERRORS, NOT_FOUND_STORE),
      },
    }),
    route({
      method: 'delete',
      path: one,
      summary: 'Delete a store connection',
      description: 'Its event log goes with it; its orders stay, with `store_connection_id` as it was.',
      responses: { 204: { description: 'Deleted' }, ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND_STORE) },
    }),
    route({
      method: 'get',
      path: `${one}/events`,
      summary: "A connection's event log",
      description: `The last ${EVENT_LOG_SIZE} messages that arrived, newest first, with what became of each.`,
      responses: {
        200: {
          description: 'Newest first',
          schema: z.looseObject({ events: z.array(EventBody) }),
          example: {
            events: [
              {
                received_at: '2026-11-24T09:01:00.000Z',
                topic: 'orders/create',
                external_id: '5678901234',
                result: 'created',
                order_id: '0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10',
                reason: null,
              },
            ],
          },
        },
        ...errors(SESSION_ERRORS, NOT_FOUND_STORE),
      },
    }),
  );
}
