import { z } from 'zod';
import { ended } from '../routes/inbound/calls';
import { OUTCOMES } from '../services/calls';
import { EVENT_RESULTS, STORE_PLATFORMS } from '../services/stores';
import type { OpenApiBuilder } from './builder';
import { errors, REQUEST_ERRORS } from './common';

const callId = z.uuid().describe('The call this report is about: the id in `callback_url`');
const report = z.union([
  z.object({ type: z.literal('call.started'), data: z.object({ call_id: callId }) }).meta({ title: 'call.started' }),
  z.object({ type: z.literal('call.ended'), data: ended.safeExtend({ call_id: callId }) }).meta({ title: 'call.ended' }),
]);

export function register(b: OpenApiBuilder): void {
  b.tag('Voice agent reports', "What a voice agent sends back about a call we asked it to make, signed with the agent's secret (Standard Webhooks).");
  b.add({
    method: 'post',
    path: '/hooks/calls/{callId}',
    tag: 'Voice agent reports',
    security: ['hookSignature'],
    summary: 'Report on a call: started, or ended with its outcome',
    description:
      'Authenticated by the `webhook-id`, `webhook-timestamp` and `webhook-signature` headers alone (no session), verified over the raw body. Every report names its call in `data.call_id`, which must be the call of the URL. Idempotent by `webhook-id`: a report already processed for this call answers 200 again and changes nothing; a `webhook-id` belongs to one report of one agent, so the same id sent for another call of the agent is refused (409 `replayed`). `callback_at` is required for `postponed`.',
    parameters: [
      {
        name: 'webhook-id',
        in: 'header',
        required: true,
        description: 'A unique id per report (retries keep it), at most 256 characters',
        schema: z.string().max(256),
        example: 'msg_2Yh7pQ',
      },
      {
        name: 'webhook-timestamp',
        in: 'header',
        required: true,
        description: 'Unix seconds, within 5 minutes of our clock',
        schema: z.string(),
        example: '1795423500',
      },
      {
        name: 'webhook-signature',
        in: 'header',
        required: true,
        description: '`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` (several separated by spaces)',
        schema: z.string(),
      },
    ],
    body: {
      schema: report,
      example: {
        type: 'call.ended',
        data: {
          call_id: '6f1c2b1e-5d0a-4c8e-9a57-3b2f8e4d9c10',
          outcome: 'confirmed',
          duration_seconds: 74,
          summary: 'Confirmed for Thursday',
          changes: null,
          callback_at: null,
        },
      },
    },
    responses: {
      200: { description: 'Recorded (or already recorded)', schema: z.looseObject({ ok: z.literal(true) }), example: { ok: true } },
      ...errors({
        400: {
          description:
            '`unreadable_body`: bytes that are not UTF-8, or JSON nested over 64 levels (refused before the signature is checked). VALIDATION_ERROR: a `webhook-id` over 256 characters; or (signature valid, report not) not JSON, text with a NUL character or an unpaired surrogate, an unknown `type`, a `data.call_id` that is not this call, a bad `data` field',
          example: {
            error: 'Validation failed',
            code: 'VALIDATION_ERROR',
            fields: { outcome: `outcome must be one of: ${OUTCOMES.join(', ')}` },
          },
        },
        401: {
          description: 'The signature does not verify (missing headers, wrong signature, timestamp outside the 5-minute window)',
          example: { error: 'invalid_signature' },
        },
        404: { description: 'No voice call with this id (answered before the body is read; the connection is closed)', example: { error: 'not_found' } },
        408: {
          description: 'The body did not arrive within `HOOKS_BODY_TIMEOUT_SECONDS` (30 s); the connection is closed',
          example: { error: 'request_timeout' },
        },
        409: {
          description:
            '`call_closed`: the call already ended with another result; `replayed`: this `webhook-id` was already used for another call of the agent',
          example: { error: 'call_closed' },
        },
        413: { description: 'PAYLOAD_TOO_LARGE: over 100 kB', example: { error: 'Request body is too large (limit 100 kB)', code: 'PAYLOAD_TOO_LARGE' } },
        415: REQUEST_ERRORS[415],
        429: {
          description:
            'Over the per-IP limit on /hooks (600 a minute by default, `HOOKS_LIMIT_PER_IP`), with `Retry-After` (seconds), `RateLimit` and `RateLimit-Policy` headers; or more than `HOOKS_BODIES_PER_IP` (32) bodies arriving at once from one address (nothing read, the connection closed)',
          example: { error: 'rate_limited' },
        },
        500: { description: 'An unexpected error', example: { error: 'Internal server error' } },
      }),
    },
  });
  b.tag('WhatsApp webhook', "What Meta's WhatsApp Cloud API sends about a WhatsApp agent's messages, signed with the Meta app's secret.");
  const whatsappErrors = errors({
    404: { description: 'No WhatsApp agent with this id', example: { error: 'not_found' } },
    429: { description: 'Over the per-IP limit on /hooks (`HOOKS_LIMIT_PER_IP` a minute)', example: { error: 'rate_limited' } },
    500: { description: 'An unexpected error', example: { error: 'Internal server error' } },
  });
  b.add(
    {
      method: 'get',
      path: '/hooks/whatsapp/{agentId}',
      tag: 'WhatsApp webhook',
      security: [],
      summary: "Meta's subscription check",
      description: "Answers the `hub.challenge` as plain text when `hub.mode` is `subscribe` and `hub.verify_token` is the agent's; 403 otherwise.",
      parameters: [
        { name: 'hub.mode', in: 'query', required: true, description: 'subscribe', schema: z.string(), example: 'subscribe' },
        { name: 'hub.verify_token', in: 'query', required: true, description: "The agent's verify token, shown on its page", schema: z.string() },
        { name: 'hub.challenge', in: 'query', required: true, description: 'What to answer', schema: z.string(), example: '1158201444' },
      ],
      responses: {
        200: { description: 'The challenge, as text/plain', media: 'text/plain', example: '1158201444' },
        ...errors({ 403: { description: 'Not the verify token', example: { error: 'forbidden' } } }),
        ...whatsappErrors,
      },
    },
    {
      method: 'post',
      path: '/hooks/whatsapp/{agentId}',
      tag: 'WhatsApp webhook',
      security: ['hookSignature'],
      summary: 'Messages and statuses of a WhatsApp agent',
      description:
        "`X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the app secret>`, checked before anything is parsed. A `button` (or `interactive` `button_reply`) whose payload is `confirm:{call_id}` or `cancel:{call_id}` ends that call `confirmed` or `unconfirmed`; a text or media message from the customer ends their waiting call `no-answer` with the text as its `reply` and hands the order to the agent's fallback; statuses `sent`, `delivered`, `read` are recorded, `failed` ends the call `failed`. Each message and status is applied once, by its id. Anything signed is answered 200.",
      body: { schema: z.looseObject({}), example: { object: 'whatsapp_business_account', entry: [{ changes: [{ value: { messages: [], statuses: [] } }] }] } },
      responses: {
        200: { description: 'Signed: applied, or nothing to do', schema: z.looseObject({ ok: z.literal(true) }), example: { ok: true } },
        ...errors({
          400: {
            description: 'Bytes that are not UTF-8, or JSON nested over 64 levels: refused before the signature is checked or anything parsed',
            example: { error: 'unreadable_body' },
          },
          401: { description: 'A missing or wrong signature: nothing is recorded', example: { error: 'invalid_signature' } },
          408: {
            description: 'The body did not arrive within `HOOKS_BODY_TIMEOUT_SECONDS` (30 s); the connection is closed',
            example: { error: 'request_timeout' },
          },
          413: { description: 'PAYLOAD_TOO_LARGE: over 1 MB', example: { error: 'Request body is too large (limit 1 MB)', code: 'PAYLOAD_TOO_LARGE' } },
          415: REQUEST_ERRORS[415],
        }),
        ...whatsappErrors,
      },
    },
  );
  b.tag('Store intake', "Orders a connected store sends by itself (see /api/stores), signed with the store's key.");
  b.add({
    method: 'post',
    path: '/hooks/stores/{id}',
    tag: 'Store intake',
    security: ['hookSignature'],
    summary: "A store's order message",
    description: [
      "The connection's `intake_url`. No session: the store's signature over the raw body is the only key, checked before anything is read.",
      ...STORE_PLATFORMS.filter((platform) => platform.signingKey !== 'us').map((platform) => platform.intakeDoc),
      "A connection made in one click is signed with the app's client secret, shared by every shop: it takes a message only when `X-Shopify-Shop-Domain` names its shop (401 otherwise); Shopify's `app/uninstalled` disables it only when the signed body is Shopify's record of that shop (`myshopify_domain`). Every number of a store's JSON is read as text: ids above 2^53 stay exact.",
      ...STORE_PLATFORMS.filter((platform) => platform.signingKey === 'us').map((platform) => platform.intakeDoc),
      'Every signed message we understand is answered 200 whatever became of the order (`created`, `updated`, `cancelled`, `duplicate`, `ignored_paid`, `ignored_unchanged`, `rejected`): the outcome is in the connection\'s event log. A cancellation is read from the signed body only (Shopify `cancelled_at`; WooCommerce `status: cancelled`, or `order.deleted` with the body `{"id": N}`); a signed body holding a NUL character or an unpaired surrogate, is `rejected`; one nested over 64 levels is unreadable (400).',
    ].join(' '),
    body: { schema: z.looseObject({}), example: { id: 5678901234, name: '#1001', total_price: '349.00', currency: 'MAD' } },
    responses: {
      200: {
        description: 'Understood; what became of it',
        schema: z.looseObject({ ok: z.literal(true), result: z.enum([...EVENT_RESULTS, 'ignored']) }),
        example: { ok: true, result: 'created' },
      },
      ...errors({
        400: {
          description: 'Signed, but not a message of this store we can read (not JSON, no order id, no delivery id)',
          example: { error: 'unreadable_body' },
        },
        401: { description: 'A missing or wrong signature: nothing is recorded', example: { error: 'invalid_signature' } },
        404: {
          description: 'No enabled connection with this id (answered before the body is read; the connection is closed)',
          example: { error: 'not_found' },
        },
        408: {
          description: 'The body did not arrive within `HOOKS_BODY_TIMEOUT_SECONDS` (30 s); the connection is closed',
          example: { error: 'request_timeout' },
        },
        413: { description: 'PAYLOAD_TOO_LARGE: over 1 MB', example: { error: 'Request body is too large (limit 1 MB)', code: 'PAYLOAD_TOO_LARGE' } },
        415: REQUEST_ERRORS[415],
        429: {
          description:
            'More refused messages (400, 401, 404, 413) from one IP in a minute than `HOOKS_LIMIT_PER_IP` (messages answered 200 are never counted); or more than `HOOKS_BODIES_PER_IP` (32) bodies arriving at once from one address (nothing read, the connection closed)',
          example: { error: 'rate_limited' },
        },
        500: { description: 'An unexpected error', example: { error: 'Internal server error' } },
      }),
    },
  });
  b.add({
    method: 'post',
    path: '/hooks/stores/{id}/keys',
    tag: 'Store intake',
    security: [],
    summary: "WooCommerce's keys for a one-click connection",
    description:
      "The `callback_url` of WooCommerce's `/wc-auth/v1/authorize`: the shop's server posts the REST key pair it made when the owner approved. No session: accepted once, for the live single-use `user_id` nonce we sent, naming this connection while it is being set up.",
    body: {
      schema: z.looseObject({}),
      example: { key_id: 1, user_id: 'nonce', consumer_key: 'ck_…', consumer_secret: 'cs_…', key_permissions: 'read_write' },
    },
    responses: {
      200: { description: 'Keys taken', schema: z.looseObject({ ok: z.literal(true) }), example: { ok: true } },
      ...errors({
        400: { description: 'Bytes that are not UTF-8, or JSON nested over 64 levels', example: { error: 'unreadable_body' } },
        404: {
          description:
            'No connection being set up with this id and nonce (unknown, used or expired nonce), or keys that are not text we can keep (a NUL character, an unpaired surrogate)',
          example: { error: 'not_found' },
        },
        408: { description: 'The body did not arrive in time; the connection is closed', example: { error: 'request_timeout' } },
        413: { description: 'Over 16 kB', example: { error: 'payload_too_large' } },
        500: { description: 'An unexpected error', example: { error: 'Internal server error' } },
      }),
    },
  });
  b.add({
    method: 'post',
    path: '/hooks/shopify/privacy',
    tag: 'Store intake',
    security: ['hookSignature'],
    summary: "Shopify's privacy topics",
    description:
      "`X-Shopify-Topic`: `customers/data_request` (acknowledged), `customers/redact` (deletes the orders named in `orders_to_redact`, and the customer's by phone, of the shop's connections made in one click), `shop/redact` (deletes the shop's connections made in one click and their orders; a connection the shop made by hand with its own key is never touched). Signed with the Shopify app's client secret (`X-Shopify-Hmac-Sha256`); 404 when no Shopify app is configured.",
    body: { schema: z.looseObject({}), example: { shop_id: 954889, shop_domain: 'atlas.myshopify.com', customer: { id: 191167 }, orders_to_redact: [299938] } },
    responses: {
      200: { description: 'Done', schema: z.looseObject({ ok: z.literal(true) }), example: { ok: true } },
      ...errors({
        400: {
          description: 'Not UTF-8, nested over 64 levels, not JSON, text with a NUL character or an unpaired surrogate, no shop_domain, or another topic',
          example: { error: 'unreadable_body' },
        },
        401: { description: 'A missing or wrong signature', example: { error: 'invalid_signature' } },
        404: { description: 'No Shopify app configured', example: { error: 'not_found' } },
        408: { description: 'The body did not arrive in time; the connection is closed', example: { error: 'request_timeout' } },
        413: { description: 'Over 64 kB', example: { error: 'payload_too_large' } },
        500: { description: 'An unexpected error', example: { error: 'Internal server error' } },
      }),
    },
  });
}
