import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * A store's order as our intake reads it, whatever the store: plain text as the store wrote it,
 * checked afterwards by the rules of POST /api/orders (services/store-intake.ts).
 */
export interface IncomingOrder {
  externalId: string;
  externalRef: string | null;
  clientName: string;
  phone: string;
  address: string | null;
  productsName: string;
  totalAmount: string | null;
  currency: string | null;
  /** Paid on delivery (or not paid yet), so it needs a confirmation call. */
  cashOnDelivery: boolean;
  /** Cancelled in the store. */
  cancelled: boolean;
}

/** One signed message, read: what it asks of the order, and the key that names this delivery. */
export type StoreMessage =
  | { topic: string; action: 'order'; key: string; order: IncomingOrder }
  | { topic: string; action: 'delete'; key: string; externalId: string }
  /** A cancelling topic over a body that does not cancel: the topic header is not signed, so nothing changes. */
  | { topic: string; action: 'unchanged'; key: string; externalId: string }
  | { topic: string; action: 'ignore' };

/** What each kind of store knows: how it signs, and how its messages read. */
export interface StoreAdapter {
  verify(raw: Buffer, headers: IncomingHttpHeaders, secret: string): boolean;
  /** A store's unsigned hello when a subscription is made, answered 200 with nothing recorded. */
  isPing?(raw: Buffer): boolean;
  /** Throws UnreadableMessage when a signed body is not a message of this store we understand. */
  read(body: unknown, headers: IncomingHttpHeaders): StoreMessage;
}

export class UnreadableMessage extends Error {}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Whether `given` is the HMAC-SHA256 of the raw bytes by `secret`, in `encoding`. Compared as the
 * text the store sends, in constant time; timingSafeEqual needs equal lengths, checked first.
 */
export function hmacMatches(raw: Buffer, secret: string, given: string | undefined, encoding: 'base64' | 'hex'): boolean {
  if (!given) return false;
  const expected = Buffer.from(crypto.createHmac('sha256', secret).update(raw).digest(encoding));
  const received = Buffer.from(encoding === 'hex' ? given.trim().toLowerCase() : given.trim());
  return expected.length === received.length && crypto.timingSafeEqual(expected, received);
}

/** An object's fields, or none: a store's JSON read without trusting its shape. */
export function fields(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Text of a string or number field; anything else is none. */
export function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
}

/** The parts that are given, joined as a person writes them. */
export function joined(parts: unknown[], separator: string): string {
  return parts.map(text).filter(Boolean).join(separator);
}

/** Line items as `2 × Babouches, 1 × Tajine`. */
export function productsLine(items: unknown, name: (item: Record<string, unknown>) => unknown): string {
  if (!Array.isArray(items)) return '';
  return items
    .map(fields)
    .map((item) => `${text(item.quantity) || '1'} × ${text(name(item))}`)
    .join(', ');
}

/** The store's id of an order: a number or non-empty text, else the message is unreadable. */
export function orderId(value: unknown): string {
  const id = text(value);
  if (!id || id.length > 200) throw new UnreadableMessage('The order has no id');
  return id;
}
