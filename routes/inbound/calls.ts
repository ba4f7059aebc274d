import { Router } from 'express';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { verifySignature } from '../../integrations/signing';
import type { Services } from '../../services';
import type { AgentReport } from '../../services/calls';
import type { InboundBodies } from '../middleware/inbound-bodies';
import { refuse } from '../middleware/inbound-bodies';
import { ConflictError, NotFoundError, ValidationError, parse, readInboundJson, msg } from '../../services/shared';
import { OUTCOMES } from '../../services/calls';

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

/** The body as JSON, by the one inbound reader: text Postgres refuses, or no JSON at all, is a 400 naming where. */
function parseJson(raw: Buffer): unknown {
  const body = readInboundJson(raw);
  if (!body.ok) throw new ValidationError({ [body.field]: body.message });
  return body.value;
}

/** A `webhook-id` names one report of one agent; a longer one is refused before anything is read. */
const MAX_WEBHOOK_ID_LENGTH = 256;

/** An authenticated report, read: it must name the call of the URL it was sent to. */
function readReport(body: unknown, callId: string): AgentReport {
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

/** The signature did not verify (missing headers, wrong signature, timestamp outside the 5-minute window). */
class InvalidSignature extends Error {}

/**
 * /hooks/calls/:callId: a voice agent's reports, authenticated by their Standard Webhooks signature
 * alone (no session, no CSRF token), verified over the raw bytes; idempotent by webhook-id.
 */
export function inboundCallsRouter(services: Services, bodies: InboundBodies): Router {
  const router = Router();
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
  return router;
}
