import { Router } from 'express';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { verifySignature } from '../integrations/signing';
import type { Services } from '../services';
import type { AgentReport } from '../services/calls';
import type { IntakeConnection } from '../services/stores';
import type { HookBodyLimits } from './middleware/hook-bodies';
import { hookBodies, refuse } from './middleware/hook-bodies';
import { ConflictError, NotFoundError, ValidationError, jsonTooDeep, parse, refuseUnsafeText, msg } from '../services/shared';
import { OUTCOMES } from '../services/orders';

export const ended = z
  .object(
    {
      outcome: z.enum(OUTCOMES, { error: msg('oneOf', { label: 'outcome', allowed: OUTCOMES.join(', ') }) }),
      duration_seconds: z
        .number({ error: msg('wholeNonNegative', { label: 'duration_seconds' }) })
        .int(msg('wholeNonNegative', { label: 'duration_seconds' }))
        .min(0, msg('wholeNonNegative', { label: 'duration_seconds' }))
        .max(86_400, msg('tooLarge', { label: 'duration_seconds' })),
      summary: z
        .string({ error: msg('notText', { label: 'summary' }) })
        .max(2000, msg('tooLong', { label: 'summary', max: '2,000' }))
        .nullable()
        .optional(),
      changes: z
        .string({ error: msg('notText', { label: 'changes' }) })
        .max(2000, msg('tooLong', { label: 'changes', max: '2,000' }))
        .nullable()
        .optional(),
      callback_at: z.iso
        .datetime({ offset: true, error: msg('isoDateTime', { label: 'callback_at' }) })
        .nullable()
        .optional(),
    },
    { error: msg('mustBeObject', { label: 'data' }) },
  )
  .refine((d) => d.outcome !== 'postponed' || !!d.callback_at, { path: ['callback_at'], message: msg('requiredForPostponed', { label: 'callback_at' }) });

/** The body as JSON, or `undefined` when it is not JSON (read once, before the signature is checked). */
function parseJson(raw: Buffer): unknown {
  if (jsonTooDeep(raw)) throw new ValidationError({ body: msg('bodyTooDeep', { max: 64 }) });
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A `webhook-id` names one report of one agent; a longer one is refused before anything is read. */
const MAX_WEBHOOK_ID_LENGTH = 256;

/** An authenticated report, read: it must name the call of the URL it was sent to. */
function readReport(body: unknown, callId: string): AgentReport {
  if (body === undefined) throw new ValidationError({ body: msg('bodyNotJson') });
  refuseUnsafeText(body);
  const type = (body as { type?: unknown })?.type;
  if (type !== 'call.started' && type !== 'call.ended') throw new ValidationError({ type: msg('reportType') });
  const named = ((body as { data?: unknown }).data as { call_id?: unknown } | null | undefined)?.call_id;
  if (named !== callId) throw new ValidationError({ call_id: msg('reportCallId') });
  if (type === 'call.started') return { type };
  const data = parse(ended, (body as { data?: unknown }).data);
  return {
    type,
    outcome: data.outcome,
    durationSeconds: data.duration_seconds,
    summary: data.summary ?? null,
    changes: data.changes ?? null,
    callbackAt: data.callback_at ? new Date(data.callback_at) : null,
  };
}

/** A WhatsApp webhook delivery: Meta batches a few messages and statuses, far under this. */
const WHATSAPP_BODY_LIMIT = '1mb';

/** A store's message: Shopify's largest orders stay well under this. */
const STORE_BODY_LIMIT = '1mb';
/** A carrier's message names one parcel: far under this. */
const CARRIER_BODY_LIMIT = '64kb';
const STORE_REFUSALS = { 400: 'unreadable_body', 401: 'invalid_signature', 404: 'not_found' } as const;

/** The signature did not verify (missing headers, wrong signature, timestamp outside the 5-minute window). */
class InvalidSignature extends Error {}

/**
 * /hooks/calls/:callId: a voice agent's reports, authenticated by their Standard Webhooks signature
 * alone (no session, no CSRF token), verified over the raw bytes; idempotent by webhook-id.
 * /hooks/stores/:id: a store's orders; /hooks/whatsapp/:agentId: Meta's webhook. Each body is read only once the call or connection its path
 * names is known (404 before, the body unread), under the limits of `hookBodies`.
 */
export function hooksRouter(services: Services, limits: HookBodyLimits): Router {
  const router = Router();
  const bodies = hookBodies(limits);

  const knownCall: RequestHandler = async (req, res, next) => {
    if (!(await services.calls.takesReports(String(req.params.callId)))) return void refuse(res, 404, 'not_found');
    next();
  };
  router.post('/calls/:callId', knownCall, bodies.raw('100kb'), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const webhookId = String(req.headers['webhook-id'] ?? '');
    if (webhookId.length > MAX_WEBHOOK_ID_LENGTH) {
      throw new ValidationError({ 'webhook-id': msg('tooLong', { label: 'webhook-id', max: MAX_WEBHOOK_ID_LENGTH }) });
    }
    const callId = String(req.params.callId);
    try {
      await services.calls.agentReport(callId, webhookId, (secret) => {
        if (!verifySignature(secret, raw, req.headers)) throw new InvalidSignature();
        return readReport(parseJson(raw), callId);
      });
    } catch (err) {
      if (err instanceof NotFoundError) return void res.status(404).json({ error: 'not_found' });
      if (err instanceof InvalidSignature) return void res.status(401).json({ error: 'invalid_signature' });
      if (err instanceof ConflictError) return void res.status(409).json({ error: err.code === 'REPLAYED' ? 'replayed' : 'call_closed' });
      throw err;
    }
    res.json({ ok: true });
  });

  // Meta's WhatsApp webhook: the subscription check, then signed deliveries (the signature over the
  // raw bytes before anything is parsed). Anything signed gets 200: Meta disables a failing webhook.
  router.get('/whatsapp/:agentId', async (req, res) => {
    const answer = await services.whatsapp.challenge(String(req.params.agentId), req.query);
    if (answer.status === 200) return void res.type('text/plain').send(answer.body);
    res.status(answer.status).json({ error: answer.status === 404 ? 'not_found' : 'forbidden' });
  });
  const knownWhatsApp: RequestHandler = async (req, res, next) => {
    if (!(await services.whatsapp.knows(String(req.params.agentId)))) return void refuse(res, 404, 'not_found');
    next();
  };
  router.post('/whatsapp/:agentId', knownWhatsApp, bodies.raw(WHATSAPP_BODY_LIMIT), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await services.whatsapp.receive(String(req.params.agentId), raw, req.headers['x-hub-signature-256']);
    if (answer.status === 200) return void res.json({ ok: true });
    res.status(answer.status).json({ error: answer.status === 401 ? 'invalid_signature' : 'not_found' });
  });

  // A store's orders: the signature over the raw bytes is the only key,
  // checked before anything is parsed or written. Every signed message we understand gets 200.
  const knownConnection: RequestHandler = async (req, res, next) => {
    const connection = await services.storeIntake.connection(String(req.params.id));
    if (!connection) return void refuse(res, 404, STORE_REFUSALS[404]);
    res.locals.connection = connection;
    next();
  };
  router.post('/stores/:id', knownConnection, bodies.raw(STORE_BODY_LIMIT), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await services.storeIntake.receive(res.locals.connection as IntakeConnection, raw, req.headers);
    if (answer.status === 200) return void res.json({ ok: true, result: answer.result });
    res.status(answer.status).json({ error: STORE_REFUSALS[answer.status] });
  });
  // A carrier's delivery news (docs/delivery.md): the same answers as a store's messages.
  const knownCarrier: RequestHandler = async (req, res, next) => {
    const connection = await services.deliveries.carriers.connection(String(req.params.id));
    if (!connection) return void refuse(res, 404, STORE_REFUSALS[404]);
    res.locals.carrier = connection;
    next();
  };
  router.post('/carriers/:id', knownCarrier, bodies.raw(CARRIER_BODY_LIMIT), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await services.deliveries.carriers.receive(res.locals.carrier, raw, req.headers);
    if (answer.status === 200) return void res.json({ ok: true, result: answer.result });
    res.status(answer.status).json({ error: STORE_REFUSALS[answer.status] });
  });
  // WooCommerce's server posts the keys of a one-click connection here: the single-use user_id nonce is the only key.
  router.post('/stores/:id/keys', bodies.raw('16kb'), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (await services.storeConnect.wooKeys(String(req.params.id), raw)) return void res.json({ ok: true });
    res.status(404).json({ error: 'not_found' });
  });

  // Shopify's privacy topics for the app, signed with its client secret.
  router.post('/shopify/privacy', bodies.raw('64kb'), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const status = await services.storeConnect.shopifyPrivacy(raw, req.headers);
    if (status === 200) return void res.json({ ok: true });
    res.status(status).json({ error: STORE_REFUSALS[status] });
  });
  return router;
}
