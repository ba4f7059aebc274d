import type { IncomingHttpHeaders } from 'node:http';
import type { IncomingOrder, StoreAdapter, StoreMessage } from './types';
import { fields, header, hmacMatches, joined, orderId, productsLine, text, UnreadableMessage } from './types';

/**
 * WooCommerce's order webhooks (`order.created`, `order.updated`, `order.deleted`), signed with
 * X-WC-Webhook-Signature: the base64 HMAC-SHA256 of the raw body by the webhook's secret. Its
 * delivery id changes on every send, so a delivery is named by the order's id and date_modified.
 */
const TOPICS = ['order.created', 'order.updated', 'order.deleted'];

function map(order: Record<string, unknown>): IncomingOrder {
  const shipping = fields(order.shipping);
  const billing = fields(order.billing);
  const nameOf = (who: Record<string, unknown>) => joined([who.first_name, who.last_name], ' ');
  return {
    externalId: orderId(order.id),
    externalRef: text(order.number) || null,
    clientName: nameOf(shipping) || nameOf(billing),
    phone: text(shipping.phone) || text(billing.phone),
    address: joined([shipping.address_1, shipping.address_2, shipping.city], ', ') || null,
    productsName: productsLine(order.line_items, (item) => item.name),
    totalAmount: text(order.total) || null,
    currency: text(order.currency) || null,
    cashOnDelivery: text(order.payment_method) === 'cod',
    cancelled: text(order.status) === 'cancelled',
  };
}

export const woocommerce: StoreAdapter = {
  verify: (raw: Buffer, headers: IncomingHttpHeaders, secret: string) => hmacMatches(raw, secret, header(headers, 'x-wc-webhook-signature'), 'base64'),
  // The activation ping, an unsigned form post, must get 200 or WooCommerce will not save the webhook.
  isPing: (raw: Buffer) => /^webhook_id=\d{1,20}$/.test(raw.toString('latin1')),
  read(body: unknown, headers: IncomingHttpHeaders): StoreMessage {
    const topic = header(headers, 'x-wc-webhook-topic') ?? '';
    if (!TOPICS.includes(topic)) return { topic: topic.slice(0, 100) || 'unknown', action: 'ignore' };
    const order = fields(body);
    if (topic === 'order.deleted') {
      const externalId = orderId(order.id);
      // The topic header is not signed: WooCommerce's deletion body is the id alone; a full order changes nothing.
      if (Object.keys(order).length > 1) return { topic, action: 'unchanged', key: `not-deleted:${externalId}`, externalId };
      return { topic, action: 'delete', key: `deleted:${externalId}`, externalId };
    }
    const modified = text(order.date_modified_gmt) || text(order.date_modified);
    if (!modified) throw new UnreadableMessage('The order has no date_modified');
    const incoming = map(order);
    return { topic, action: 'order', key: `${incoming.externalId}:${modified}`, order: incoming };
  },
};
