import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { decodeHTML } from 'entities';
import { parse as parseLossless } from 'lossless-json';
import { sameSecret } from '../../../integrations/secret-compare';

/**
 * A store's order as our intake reads it, whatever the store: plain text as the store wrote it,
 * checked afterwards by the rules of POST /api/orders (services/stores/intake.ts).
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
  /** What the customer wrote with the order. */
  note: string | null;
  /** The city of the delivery address (the billing address's when there is no delivery address). */
  city: string | null;
  /** When the store last changed the order (ISO 8601), when it says: an older update changes nothing. */
  updatedAt: string | null;
  /** Paid on delivery (or not paid yet), so it needs a confirmation call. */
  cashOnDelivery: boolean;
  /** Cancelled in the store. */
  cancelled: boolean;
}

/**
 * A store's shipment of an order (Shopify's fulfillments): the carrier and tracking number, and the
 * delivery status it means in our words, or null when it changes nothing but the carrier's words.
 */
export interface IncomingFulfillment {
  /** The store's id of the order shipped. */
  externalId: string;
  /** The store's id of this shipment (an order may have several), or null when it gives none. */
  id: string | null;
  /** The shipment was cancelled: what it said is undone. */
  cancelled: boolean;
  carrier: string | null;
  trackingNumber: string | null;
  /** `attempted`: the courier could not deliver yet; it changes the carrier's words only (docs/delivery.md). */
  status: 'shipped' | 'in_transit' | 'out_for_delivery' | 'delivered' | 'refused' | 'attempted' | null;
  /** The store's own word for the shipment's status, as received. */
  carrierStatus: string | null;
  at: string | null;
}

/** One signed message, read: what it asks of the order, and the key that names this delivery. */
export type StoreMessage =
  | { topic: string; action: 'order'; key: string; order: IncomingOrder }
  | { topic: string; action: 'delete'; key: string; externalId: string }
  | { topic: string; action: 'fulfillment'; key: string; fulfillment: IncomingFulfillment }
  /** A cancelling topic over a body that does not cancel: the topic header is not signed, so nothing changes. */
  | { topic: string; action: 'unchanged'; key: string; externalId: string }
  | { topic: string; action: 'ignore' }
  /** The shop removed our app (Shopify's app/uninstalled): the connection stops. */
  | { topic: string; action: 'uninstalled' };

/** What each kind of store knows: how it signs, and how its messages read. */
export interface StoreAdapter {
  verify(raw: Buffer, headers: IncomingHttpHeaders, secret: string): boolean;
  /** A store's unsigned hello when a subscription is made, answered 200 with nothing recorded. */
  isPing?(raw: Buffer): boolean;
  /** Throws UnreadableMessage when a signed body is not a message of this store we understand. */
  read(body: unknown, headers: IncomingHttpHeaders, raw: Buffer): StoreMessage;
}

export class UnreadableMessage extends Error {}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Whether `given` is the HMAC-SHA256 of the raw bytes by `secret`, in `encoding`. Compared as the
 * text the store sends, in constant time (`sameSecret`).
 */
export function hmacMatches(raw: Buffer, secret: string, given: string | undefined, encoding: 'base64' | 'hex'): boolean {
  if (!given) return false;
  const expected = Buffer.from(crypto.createHmac('sha256', secret).update(raw).digest(encoding));
  const received = Buffer.from(encoding === 'hex' ? given.trim().toLowerCase() : given.trim());
  return sameSecret(received, expected);
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

/**
 * Line items as `2 × Babouches, 1 × Tajine`. `quantity` reads an item's quantity (by default its
 * `quantity`); an item whose quantity is 0 (edited out of the order) is left out.
 */
export function productsLine(
  items: unknown,
  name: (item: Record<string, unknown>) => unknown,
  quantity: (item: Record<string, unknown>) => unknown = (item) => item.quantity,
): string {
  if (!Array.isArray(items)) return '';
  return items
    .map(fields)
    .map((item) => ({ quantity: text(quantity(item)) || '1', name: text(name(item)) }))
    .filter((item) => !/^0+(\.0*)?$/.test(item.quantity))
    .map((item) => `${item.quantity} × ${item.name}`)
    .join(', ');
}

/** Sixteen digits in a row: a number that may be past 2^53 (9007199254740992), somewhere in the text. */
const LONG_NUMBER = /\d{16}/;

/**
 * A store's JSON with no number rounded: Shopify's ids exceed 2^53, which JSON.parse would round
 * (820982911946154508 → …154500). A body with a run of 16 digits anywhere is parsed by lossless-json,
 * every number kept as the text the store wrote; any other body holds only numbers JSON.parse reads
 * exactly, and is parsed by it (ten times faster: the flash sale's hot path). Throws SyntaxError on a
 * body that is not JSON.
 */
export function parseStoreJson(json: string): unknown {
  return LONG_NUMBER.test(json) ? parseLossless(json, null, (digits: string) => digits) : JSON.parse(json);
}

/** Text with its HTML entities decoded once (`Ship Your Idea &ndash; Tee` → `Ship Your Idea – Tee`). */
export function decoded(value: unknown): string {
  return decodeHTML(text(value)).trim();
}

/** A store's date-time as ISO 8601 (a Unix time in seconds, or a date with or without its zone), or null. */
export function storeTime(value: unknown, zoneless: 'utc' = 'utc'): string | null {
  const given = text(value);
  if (!given) return null;
  const seconds = /^\d{9,11}$/.test(given) ? Number(given) * 1000 : null;
  // A time written without a zone (WooCommerce's `_gmt` fields, `2026-11-24 10:42:07`) is UTC.
  const iso = given.replace(' ', 'T');
  const date = new Date(seconds ?? (zoneless === 'utc' && /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(iso) ? `${iso}Z` : iso));
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** A short digest of the raw body: a message's content, so that two different ones never share a key. */
export function digestOf(raw: Buffer): string {
  return crypto.createHash('sha256').update(raw).digest('base64url').slice(0, 22);
}

/** The store's id of an order: a number or non-empty text, else the message is unreadable. */
export function orderId(value: unknown): string {
  const id = text(value);
  if (!id || id.length > 200) throw new UnreadableMessage('The order has no id');
  return id;
}
