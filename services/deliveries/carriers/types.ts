import type { IncomingHttpHeaders } from 'node:http';

/**
 * What a carrier adapter reads out of its carrier's message, still unchecked: the order it names
 * (our id, the tracking number or the store's reference) and the news. The connection service checks
 * the values and applies them with applyDeliveryEvent.
 */
export interface CarrierNews {
  trackingNumber?: unknown;
  externalRef?: unknown;
  orderId?: unknown;
  /** One of our delivery statuses, as the adapter mapped the carrier's. */
  status: unknown;
  carrierStatus?: unknown;
  at?: unknown;
}

/** One kind of carrier connection: how its messages are signed and how they read. */
export interface CarrierAdapter {
  verify(raw: Buffer, headers: IncomingHttpHeaders, secret: string): boolean;
  /** The news in a signed body; null for a message type that is not delivery news. Throws CarrierMessageError when unreadable. */
  read(body: unknown, headers: IncomingHttpHeaders): CarrierNews | null;
  /** What names one message, the same on its retries (a replay changes nothing); absent: the `webhook-id` header. */
  messageId?(headers: IncomingHttpHeaders, raw: Buffer): string | undefined;
}

/** A signed body that is not a message of this carrier we understand (400). */
export class CarrierMessageError extends Error {}
