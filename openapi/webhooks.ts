import { z } from 'zod';
import { createSchema, MAX_ENDPOINTS, updateSchema, WEBHOOK_EVENTS } from '../services/webhooks';
import type { OpenApiBuilder, Route } from './builder';
import { named } from './builder';
import type { ErrorExamples } from './common';
import { BODY_ERRORS, errors, instant, NOT_FOUND, OWNER_ONLY, SESSION_ERRORS, uuid } from './common';

export const EndpointBody = named(
  'WebhookEndpoint',
  z.looseObject({
    id: uuid,
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    description: z.string().nullable(),
    enabled: z.boolean(),
    created_at: instant,
    disabled_reason: z.string().nullable(),
  }),
);
const WithSecret = EndpointBody.extend({ secret: z.string().meta({ description: 'The signing secret (`whsec_…`): in this answer only, `no-store`' }) });

export const DeliveryBody = named(
  'WebhookDelivery',
  z.looseObject({
    id: uuid,
    message_id: z.string().meta({ description: 'The `webhook-id` sent (the same on every try and on a resend)' }),
    event_type: z.enum(WEBHOOK_EVENTS),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: instant.nullable(),
    created_at: instant,
    delivered_at: instant.nullable(),
  }),
);

const url = z.string().meta({ description: 'A public https URL (no private or local address)' });
const ENDPOINT = {
  id: '1e2d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b',
  url: 'https://shop.example.com/hooks/ocs',
  events: ['order.created', 'call.ended'],
  description: 'Shop back office',
  enabled: true,
  created_at: '2026-11-23T09:00:00.000Z',
  disabled_reason: null,
};
const DELIVERY = {
  id: '2f3e4d5c-6b7a-4899-8a1b-2c3d4e5f6a7b',
  message_id: 'msg_2Yh…',
  event_type: 'webhook.test',
  status: 'pending',
  attempts: 0,
  last_status_code: null,
  last_error: null,
  next_attempt_at: '2026-11-23T09:00:00.000Z',
  created_at: '2026-11-23T09:00:00.000Z',
  delivered_at: null,
};
const DISABLED: ErrorExamples = {
  409: {
    description: 'WEBHOOK_DISABLED: enable the endpoint to send it events',
    example: { error: 'This endpoint is disabled: enable it to send it events', code: 'WEBHOOK_DISABLED' },
  },
};

function route(r: Omit<Route, 'tag' | 'security'>): Route {
  return { tag: 'Webhooks', security: ['session'], ...r };
}

export function register(b: OpenApiBuilder): void {
  b.tag(
    'Webhooks',
    "The workspace's webhook endpoints, their test event and delivery log. Every member reads them; only the workspace owner adds, changes, tests, resends to or deletes an endpoint, or sees its secret (a member gets 403). Events (`data`): `order.created` `{order}`, `order.updated` `{order, previous_status, changed_fields}`, `order.deleted` `{order}`, `order.delivery_updated` `{order}`, `call.ended` `{order, call}`, `customer.erased` `{phone_sha256, order_count, erased_at}` (a customer's orders were erased: the SHA-256, in hex, of the normalised phone `+212…`, never the phone), `webhook.test` `{}`.",
  );
  const one = `/api/webhooks/{id}`;
  b.add(
    route({
      method: 'get',
      path: '/api/webhooks',
      summary: 'List the endpoints',
      responses: {
        200: { description: 'Oldest first', schema: z.looseObject({ endpoints: z.array(EndpointBody) }), example: { endpoints: [ENDPOINT] } },
        ...errors(SESSION_ERRORS),
      },
    }),
    route({
      method: 'post',
      path: '/api/webhooks',
      summary: 'Add an endpoint',
      description: `Events default to all of them. At most ${MAX_ENDPOINTS} endpoints a workspace.`,
      body: {
        schema: createSchema.extend({ url }),
        example: { url: 'https://shop.example.com/hooks/ocs', events: ['order.created', 'call.ended'], description: 'Shop back office' },
      },
      responses: {
        201: { description: 'The endpoint with its signing `secret`', schema: WithSecret, example: { ...ENDPOINT, secret: 'whsec_…' } },
        ...errors(SESSION_ERRORS, OWNER_ONLY, BODY_ERRORS, {
          409: {
            description: `TOO_MANY_WEBHOOKS: the workspace has ${MAX_ENDPOINTS} endpoints`,
            example: { error: `A workspace has at most ${MAX_ENDPOINTS} webhook endpoints`, code: 'TOO_MANY_WEBHOOKS' },
          },
        }),
      },
    }),
    route({
      method: 'get',
      path: one,
      summary: 'Read an endpoint',
      responses: { 200: { description: 'The endpoint', schema: EndpointBody, example: ENDPOINT }, ...errors(SESSION_ERRORS, NOT_FOUND('Webhook endpoint')) },
    }),
    route({
      method: 'put',
      path: one,
      summary: 'Change an endpoint',
      description: 'Disabling drops its pending deliveries; enabled again, only events from then on are sent.',
      body: { schema: updateSchema.extend({ url: url.optional() }), example: { enabled: false } },
      responses: {
        200: { description: 'The endpoint', schema: EndpointBody, example: ENDPOINT },
        ...errors(SESSION_ERRORS, OWNER_ONLY, BODY_ERRORS, NOT_FOUND('Webhook endpoint')),
      },
    }),
    route({
      method: 'delete',
      path: one,
      summary: 'Delete an endpoint',
      description: 'Its pending deliveries go with it.',
      responses: { 204: { description: 'Deleted' }, ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND('Webhook endpoint')) },
    }),
    route({
      method: 'post',
      path: `${one}/rotate-secret`,
      summary: 'Rotate the signing secret',
      responses: {
        200: { description: 'The endpoint with its new `secret` (`no-store`)', schema: WithSecret, example: { ...ENDPOINT, secret: 'whsec_…' } },
        ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND('Webhook endpoint')),
      },
    }),
    route({
      method: 'post',
      path: `${one}/test`,
      summary: 'Send a webhook.test event',
      responses: {
        202: { description: 'The queued delivery', schema: DeliveryBody, example: DELIVERY },
        ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND('Webhook endpoint'), DISABLED),
      },
    }),
    route({
      method: 'get',
      path: `${one}/deliveries`,
      summary: 'The delivery log',
      description: 'The last 100 deliveries, newest first.',
      responses: {
        200: { description: 'The deliveries', schema: z.looseObject({ deliveries: z.array(DeliveryBody) }), example: { deliveries: [DELIVERY] } },
        ...errors(SESSION_ERRORS, NOT_FOUND('Webhook endpoint')),
      },
    }),
    route({
      method: 'post',
      path: `${one}/deliveries/{deliveryId}/resend`,
      summary: 'Send a message again',
      description: 'A new delivery of the same message, with the same `webhook-id`.',
      responses: {
        202: { description: 'The queued delivery', schema: DeliveryBody, example: DELIVERY },
        ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND('Webhook endpoint'), DISABLED),
      },
    }),
  );
}
