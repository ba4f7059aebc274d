import type { DeliveryResult } from '../../../../integrations/http';
import type { WriteBackOrder, WriteBackStep } from '../write-back';
import { transportFailure } from '../write-back';

export interface WooCommerceTarget {
  /** The site's address as the connection keeps it (`https://atlas.ma`). */
  shop: string;
  credentials: { consumer_key: string; consumer_secret: string; set_status?: boolean };
}

/**
 * A store's order id as one segment of a path: percent-encoded, and never `.` or `..`, which a URL
 * resolves as "this folder" and "the folder above" (`orders/../notes`); null for those.
 */
export function pathSegment(id: string): string | null {
  const segment = encodeURIComponent(id);
  return segment === '.' || segment === '..' || segment === '' ? null : segment;
}

/** WooCommerce: a private note with the outcome and the call's summary; the order's status when the connection asks for it. */
export function wooCommerceSteps(target: WooCommerceTarget, order: WriteBackOrder): WriteBackStep[] {
  const { consumer_key, consumer_secret, set_status } = target.credentials;
  // Basic authentication, which WooCommerce accepts over https only (the caller refuses plain http in production).
  const headers = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`${consumer_key}:${consumer_secret}`).toString('base64')}`,
  };
  const segment = pathSegment(order.externalId);
  if (segment === null) throw new Error('wooCommerceSteps: an order id of "." or ".." names no order');
  const orderUrl = `${target.shop}/wp-json/wc/v3/orders/${segment}`;
  const failure = (result: DeliveryResult) => transportFailure('WooCommerce', result);
  const note = `Confirmation call: ${order.status}.${order.summary ? `\nSummary: ${order.summary}` : ''}`;
  const steps: WriteBackStep[] = [
    { request: { method: 'POST', url: `${orderUrl}/notes`, headers, body: JSON.stringify({ note, customer_note: false }) }, failure },
  ];
  if (set_status) {
    const status = order.status === 'confirmed' ? 'processing' : 'cancelled';
    steps.push({ request: { method: 'PUT', url: orderUrl, headers, body: JSON.stringify({ status }) }, failure });
  }
  return steps;
}
