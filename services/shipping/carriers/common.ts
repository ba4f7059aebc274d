import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { sameSecret } from '../../../integrations/secret-compare';
import type { CarrierAnswer, CarrierLimits, CarrierSession, CarrierUpdate, CreateOutcome, MadeParcel, PushOutcome, ShippingAdapter } from './types';

/**
 * What every adapter reads the same way: a JSON answer without trusting its shape, the carrier's
 * words bounded, a signature, a time. Each carrier's paths, shapes and words stay in its own file.
 */

/** A carrier's reason as a person reads it: trimmed, on one line, at most 300 characters. */
export function reasonOf(words: string): string {
  return words.replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** The answer's body as JSON, or undefined when it is not JSON. */
export function jsonOf(answer: CarrierAnswer): unknown {
  try {
    return JSON.parse(answer.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** An object's fields, or none. */
export function fields(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Text of a string or number field; anything else is ''. */
export function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
}

/** An array field, or the `data` array inside it (carriers wrap lists either way). */
export function listOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  const data = fields(value).data;
  if (Array.isArray(data)) return data;
  return Array.isArray(fields(data).data) ? (fields(data).data as unknown[]) : [];
}

/**
 * The words a carrier puts in an error answer, wherever it puts them (`message`, `error`,
 * `errors` as a list or as fields of lists), else `HTTP n`.
 */
export function carrierWords(answer: CarrierAnswer): string {
  const body = jsonOf(answer);
  const found: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string' && value.trim()) found.push(value.trim());
    else if (Array.isArray(value)) for (const item of value) collect(item);
    else if (value && typeof value === 'object') for (const item of Object.values(value)) collect(item);
  };
  const top = fields(body);
  for (const key of ['message', 'error', 'errors', 'msg']) collect(top[key]);
  if (found.length > 0) return reasonOf([...new Set(found)].join('; '));
  const plain = typeof body === 'string' ? body : '';
  return reasonOf(plain || `HTTP ${answer.status ?? ''}`.trim());
}

/** The outcome of an answer that is not a success: none, 5xx → unanswered; 401/403 → credentials; 429 → throttled; other 4xx → refused. */
export function failedOutcome(answer: CarrierAnswer): CreateOutcome {
  if (answer.status === null) return { kind: 'unanswered', reason: reasonOf(answer.failure ?? 'no answer') };
  if (answer.status >= 500) return { kind: 'unanswered', reason: `the carrier answered HTTP ${answer.status}` };
  if (answer.status === 401 || answer.status === 403) return { kind: 'credentials_refused', reason: carrierWords(answer) };
  if (answer.status === 429) return { kind: 'throttled', retryAfterMs: retryAfterMs(answer) ?? 1000 };
  return { kind: 'refused', reason: carrierWords(answer) };
}

/** Retry-After in seconds (or an HTTP date), in milliseconds; undefined when absent. */
export function retryAfterMs(answer: CarrierAnswer): number | undefined {
  const value = answer.headers['retry-after'];
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

/** Why a check got no usable answer, for the owner: the client's words (timed out …) or the HTTP status. */
export function notAnswered(answer: CarrierAnswer): string {
  return `the carrier did not answer (${answer.status === null ? (answer.failure ?? 'no answer') : `HTTP ${answer.status}`})`;
}

export const isSuccess = (answer: CarrierAnswer): boolean => answer.status !== null && answer.status >= 200 && answer.status < 300;

/** Whether `given` is the hex HMAC-SHA256 of the raw body by `secret`, compared in constant time. */
export function hexHmacMatches(raw: Buffer, secret: string, headers: IncomingHttpHeaders, header: string): boolean {
  const given = headers[header];
  if (typeof given !== 'string' || !secret) return false;
  const expected = crypto.createHmac('sha256', secret).update(raw).digest('hex');
  return sameSecret(given.trim().toLowerCase(), expected);
}

/** A pushed body as JSON, or undefined. */
export function pushedJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A carrier's time as ISO 8601: an ISO time as given, `2026-11-27 15:02:11` without a zone read in
 * the carrier's own zone (Morocco and Algeria are both UTC+01:00), a Unix time in seconds; else null.
 */
export function carrierTime(value: unknown, zone = '+01:00'): string | null {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return new Date(value * 1000).toISOString();
  const written = text(value);
  if (!written) return null;
  const local = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(:\d{2}(\.\d+)?)?)$/.exec(written);
  const at = Date.parse(local ? `${local[1]}T${local[2]}${zone}` : written);
  return Number.isFinite(at) ? new Date(at).toISOString() : null;
}

/** A carrier's word as compared: case, accents and runs of spaces aside. */
export function wordKey(words: string): string {
  return words
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\s_.,;:!'’"()\-/]+/g, ' ')
    .trim();
}

/** A made parcel from its parts as the carrier named them. */
export function madeParcel(tracking: string, labelUrl: unknown, carrierStatus: unknown): MadeParcel {
  return { tracking, labelUrl: text(labelUrl) || null, carrierStatus: text(carrierStatus) || null };
}

/** Whether bytes are a PDF document (what a label must be). */
export const isPdf = (body: Buffer): boolean => body.subarray(0, 5).toString('latin1') === '%PDF-';

/** What a label may weigh. */
export const LABEL_MAX_BYTES = 5 * 1024 * 1024;

/** An amount to two decimals (carriers that take centimes). */
export const twoDecimals = (amount: number): number => Math.round(amount * 100) / 100;

/** A signed push's news: the updates it carried (a parcel's tracking number and the carrier's words), or unreadable when none. */
export function newsOf(updates: CarrierUpdate[]): PushOutcome {
  const complete = updates.filter((update) => update.tracking && update.words);
  return complete.length > 0 && complete.length === updates.length ? { kind: 'updates', updates } : { kind: 'unreadable' };
}

/**
 * The pace of a carrier that publishes no rate (Sendit, Ozon Express, Digylog): 4 calls at once
 * (carriers.md 3) bound it; 100 a second is only a ceiling against a runaway loop, above what 4
 * calls at once can reach at their answer times (4 answers of 50 ms: 80 a second). One parcel per
 * call, as their APIs take them.
 */
export const UNPUBLISHED_RATE: CarrierLimits = { perSecond: 100, concurrency: 4, batch: 1 };

/** A text with every secret of the account blotted out (a carrier that echoes its key in an error). */
function blotted(words: string, secrets: string[]): string {
  let clean = words;
  for (const value of secrets) if (value.length >= 4) clean = clean.split(value).join('…');
  return clean;
}

/**
 * An adapter whose reasons and errors never carry the account's secret credentials, whatever the
 * carrier wrote back: every reason it returns, and every error it throws, goes through `blotted`.
 * (A store name or a network id, shown back anyway, stays.)
 */
export function withoutCredentials(adapter: ShippingAdapter): ShippingAdapter {
  const secretsOf = (session: CarrierSession) => adapter.credentials.filter((field) => field.secret).map((field) => session.credentials[field.name] ?? '');
  const clean = <T>(value: T, secrets: string[]): T =>
    value && typeof value === 'object' && 'reason' in value && typeof value.reason === 'string' ? { ...value, reason: blotted(value.reason, secrets) } : value;
  const guard = async <T>(session: CarrierSession, work: () => Promise<T>): Promise<T> => {
    try {
      return clean(await work(), secretsOf(session));
    } catch (err) {
      throw new Error(blotted(err instanceof Error ? err.message : String(err), secretsOf(session)));
    }
  };
  const { lookup, cancel, label, status } = adapter;
  return {
    ...adapter,
    check: (session) => guard(session, () => adapter.check(session)),
    cities: (session) => guard(session, () => adapter.cities(session)),
    create: (session, parcels) =>
      guard(session, async () => {
        const outcomes = await adapter.create(session, parcels);
        return new Map([...outcomes].map(([reference, outcome]) => [reference, clean(outcome, secretsOf(session))]));
      }),
    lookup: lookup && ((session, reference, tracking) => guard(session, () => lookup(session, reference, tracking))),
    cancel: cancel && ((session, tracking) => guard(session, () => cancel(session, tracking))),
    label: label && ((session, parcel) => guard(session, () => label(session, parcel))),
    status: status && ((session, tracking) => guard(session, () => status(session, tracking))),
  };
}
