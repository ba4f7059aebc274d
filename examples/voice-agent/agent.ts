import http from 'node:http';
import { newMessageId, signedHeaders, verifySignature } from '../../integrations/signing';
import { resultFor } from './outcome';

export interface VoiceAgentOptions {
  /** The agent's signing secret, `whsec_…`, as shown on the agent's page. */
  secret: string;
  /** Wait before call.started, and again before call.ended. */
  delayMs?: number;
  /** Waits between the tries of one report (a report is tried once more per entry). */
  retryDelaysMs?: number[];
  log?: (line: string) => void;
}

interface CallRequested {
  type: 'call.requested';
  data: { call_id: string; callback_url: string; order: { phone: string } };
}

const MAX_BODY_BYTES = 100_000;
const REPORT_TIMEOUT_MS = 10_000;

/**
 * A reference voice agent: checks the signature of each call.requested, accepts it with 202 (once
 * per webhook-id), then "calls" the customer and reports call.started and call.ended, signed, to the
 * callback_url. Returns a server listening on nothing.
 */
export function createVoiceAgent(options: VoiceAgentOptions): http.Server {
  const { secret, delayMs = 2000, retryDelaysMs = [1000, 5000, 15_000], log = () => {} } = options;
  const accepted = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  /** Sends one report; retries (same webhook-id, fresh signature) on a network error, 429 or 5xx. */
  async function report(url: string, payload: object): Promise<void> {
    const body = JSON.stringify(payload);
    const messageId = newMessageId();
    for (let attempt = 0; ; attempt++) {
      let outcome: string;
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...signedHeaders(secret, messageId, body) },
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(REPORT_TIMEOUT_MS),
        });
        await res.body?.cancel();
        if (res.ok) return;
        outcome = `HTTP ${res.status}`;
        if (res.status !== 429 && res.status < 500) break; // our report is wrong: trying again will not help
      } catch (err) {
        outcome = err instanceof Error ? err.message : String(err);
      }
      if (attempt >= retryDelaysMs.length || !server.listening) {
        log(`giving up on a report to ${url}: ${outcome}`);
        return;
      }
      log(`report to ${url} failed (${outcome}); trying again`);
      await later(retryDelaysMs[attempt]);
    }
    log(`report to ${url} refused`);
  }

  async function placeCall(request: CallRequested): Promise<void> {
    const { call_id: callId, callback_url: url, order } = request.data;
    await later(delayMs);
    log(`call ${callId}: ringing ${order.phone}`);
    await report(url, { type: 'call.started', data: { call_id: callId } });
    await later(delayMs);
    const result = resultFor(order.phone);
    log(`call ${callId}: ${result.outcome}`);
    await report(url, { type: 'call.ended', data: { call_id: callId, ...result } });
  }

  const server = http.createServer((req, res) => {
    const answer = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return answer(405, { error: 'method_not_allowed' });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return answer(413, { error: 'too_large' });
      const raw = Buffer.concat(chunks);
      // Verify over the raw bytes, before parsing anything.
      if (!verifySignature(secret, raw, req.headers)) return answer(401, { error: 'invalid_signature' });
      const request = parseCallRequested(raw);
      if (!request) return answer(400, { error: 'not a call.requested' });
      const messageId = String(req.headers['webhook-id']);
      if (accepted.has(messageId)) return answer(202, { accepted: true }); // a retry: the call is already under way
      accepted.add(messageId);
      answer(202, { accepted: true });
      log(`call ${request.data.call_id}: accepted`);
      placeCall(request).catch((err) => log(`call ${request.data.call_id}: ${err instanceof Error ? err.message : err}`));
    });
  });
  server.on('close', () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  });
  return server;
}

function parseCallRequested(raw: Buffer): CallRequested | null {
  try {
    const body = JSON.parse(raw.toString('utf8'));
    const data = body?.data;
    const ok =
      body?.type === 'call.requested' && typeof data?.call_id === 'string' && typeof data?.callback_url === 'string' && typeof data?.order?.phone === 'string';
    return ok ? body : null;
  } catch {
    return null;
  }
}
