import crypto from 'node:crypto';
import { sameSecret } from '../../integrations/secret-compare';

/** What Meta's webhook tells us, read out of its body; everything else in it is ignored. */
export type WhatsAppEvent =
  | { type: 'button'; id: string; from: string; action: 'confirm' | 'cancel'; callId: string; text: string }
  | { type: 'reply'; id: string; from: string; quoted: string | null; text: string }
  | { type: 'status'; id: string; messageId: string; status: 'sent' | 'delivered' | 'read' | 'failed'; at: Date; error: string | null };

/** One body never carries more than this many events we act on (Meta batches a few). */
const MAX_EVENTS = 1000;
/** Meta's ids are tens of characters; anything far longer is not Meta's and is ignored. */
const MAX_ID = 256;
const MAX_TEXT = 2000;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const PAYLOAD = new RegExp(`^(confirm|cancel):(${UUID})$`, 'i');
const STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;

/**
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the app secret>`,
 * compared in constant time over the exact bytes received (a re-serialised body breaks on emoji
 * and escaped slashes).
 */
export function validSignature(raw: Buffer, header: unknown, appSecret: string): boolean {
  if (typeof header !== 'string') return false;
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!match) return false;
  const expected = crypto.createHmac('sha256', appSecret).update(raw).digest();
  return sameSecret(Buffer.from(match[1], 'hex'), expected);
}

type Json = Record<string, unknown>;
const object = (value: unknown): Json | undefined => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
/** Text we keep: NUL removed (Postgres text cannot hold it), at most `max` characters. */
const text = (value: unknown, max = MAX_TEXT): string | undefined => (typeof value === 'string' ? value.replaceAll('\u0000', '').slice(0, max) : undefined);
const id = (value: unknown): string | undefined => {
  const s = text(value, MAX_ID + 1);
  return s && s.length <= MAX_ID ? s : undefined;
};

function readMessage(message: Json): WhatsAppEvent | undefined {
  const messageId = id(message.id);
  const from = typeof message.from === 'string' && /^\d{6,20}$/.test(message.from) ? message.from : undefined;
  if (!messageId || !from) return undefined;
  const type = typeof message.type === 'string' ? message.type : '';
  const button = object(message.button);
  const buttonReply = type === 'interactive' ? object(object(message.interactive)?.button_reply) : undefined;
  const pressed =
    type === 'button' ? { payload: button?.payload, title: button?.text } : buttonReply ? { payload: buttonReply.id, title: buttonReply.title } : undefined;
  if (pressed) {
    const payload = typeof pressed.payload === 'string' ? PAYLOAD.exec(pressed.payload) : null;
    if (!payload) return undefined;
    const action = payload[1].toLowerCase() as 'confirm' | 'cancel';
    return { type: 'button', id: messageId, from, action, callId: payload[2].toLowerCase(), text: text(pressed.title, 200) || action };
  }
  const quoted = id(object(message.context)?.id) ?? null;
  if (type === 'text') {
    const body = text(object(message.text)?.body)?.trim();
    return body ? { type: 'reply', id: messageId, from, quoted, text: body } : undefined;
  }
  // Audio, image, video, document, sticker, location, contacts… : the person reads "[audio]" and calls back.
  if (/^[a-z_]{1,30}$/.test(type) && type !== 'unsupported' && type !== 'system' && type !== 'reaction') {
    return { type: 'reply', id: messageId, from, quoted, text: `[${type}]` };
  }
  return undefined;
}

function readStatus(status: Json): WhatsAppEvent | undefined {
  const messageId = id(status.id);
  const value = STATUSES.find((s) => s === status.status);
  if (!messageId || !value) return undefined;
  const seconds = Number(status.timestamp);
  const at = Number.isFinite(seconds) && seconds > 0 && seconds < 1e11 ? new Date(seconds * 1000) : new Date();
  const firstError = object(list(status.errors)[0]);
  const error = value === 'failed' ? (text(firstError?.title, 200) ?? text(firstError?.message, 200) ?? 'failed') : null;
  return { type: 'status', id: `${messageId}:${value}`, messageId, status: value, at, error };
}

/** One change of a webhook body: the number it is for (`metadata.phone_number_id`, null when absent) and its events. */
export interface WhatsAppChange {
  phoneNumberId: string | null;
  events: WhatsAppEvent[];
}

/**
 * The changes of a webhook body `{"object": "whatsapp_business_account", "entry": [{"changes":
 * [{"value": {"metadata": {"phone_number_id": …}, "messages": [...], "statuses": [...]}}]}]}`, each
 * with the number it names (one app's callback URL serves all its numbers) and its messages and
 * statuses in the order they came. Whatever is not shaped like that (another object, missing
 * fields, wrong types) is skipped.
 */
export function readChanges(body: unknown): WhatsAppChange[] {
  const changes: WhatsAppChange[] = [];
  if (object(body)?.object !== 'whatsapp_business_account') return changes;
  let count = 0;
  for (const entry of list(object(body)?.entry)) {
    for (const change of list(object(entry)?.changes)) {
      const value = object(object(change)?.value);
      if (!value) continue;
      const numberId = object(value.metadata)?.phone_number_id;
      const events: WhatsAppEvent[] = [];
      for (const message of list(value.messages)) {
        const event = object(message) && readMessage(object(message)!);
        if (event) events.push(event);
      }
      for (const status of list(value.statuses)) {
        const event = object(status) && readStatus(object(status)!);
        if (event) events.push(event);
      }
      const kept = events.slice(0, MAX_EVENTS - count);
      count += kept.length;
      changes.push({ phoneNumberId: typeof numberId === 'string' && /^\d{1,30}$/.test(numberId) ? numberId : null, events: kept });
      if (count >= MAX_EVENTS) return changes;
    }
  }
  return changes;
}
