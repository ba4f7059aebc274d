import type { IncomingHttpHeaders } from 'node:http';
import type { IncomingOrder, StoreAdapter, StoreMessage } from '../reader';
import { decoded, digestOf, fields, header, hmacMatches, joined, orderId, productsLine, storeTime, text, UnreadableMessage } from '../reader';

/**
 * WooCommerce's order webhooks (`order.created`, `order.updated`, `order.deleted`), signed with
 * X-WC-Webhook-Signature: the base64 HMAC-SHA256 of the raw body by the webhook's secret. Its
 * delivery id changes on every send, so a delivery is named by the order's id and date_modified.
 */
const TOPICS = ['order.created', 'order.updated', 'order.deleted'];

/** WooCommerce's JSON carries HTML entities in what WordPress wrote (`Ship Your Idea &ndash; Tee`): decoded once. */
function decodedFields(address: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(['first_name', 'last_name', 'address_1', 'address_2', 'city', 'phone'].map((name) => [name, decoded(address[name])]));
}

function map(order: Record<string, unknown>): IncomingOrder {
  const shippingGiven = decodedFields(fields(order.shipping));
  const billing = decodedFields(fields(order.billing));
  // A checkout that asks for the billing address only leaves the shipping one empty.
  const shipping = joined([shippingGiven.address_1, shippingGiven.address_2, shippingGiven.city], '') ? shippingGiven : billing;
  const nameOf = (who: Record<string, unknown>) => joined([who.first_name, who.last_name], ' ');
  return {
    externalId: orderId(order.id),
    externalRef: text(order.number) || null,
    clientName: nameOf(shippingGiven) || nameOf(billing),
    phone: text(shippingGiven.phone) || text(billing.phone),
    address: joined([shipping.address_1, shipping.address_2, shipping.city], ', ') || null,
    city: text(shipping.city) || null,
    productsName: productsLine(order.line_items, (item) => decoded(item.name)),
    note: decoded(order.customer_note) || null,
    updatedAt: storeTime(order.date_modified_gmt),
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
  read(body: unknown, headers: IncomingHttpHeaders, raw: Buffer): StoreMessage {
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
    // date_modified has one-second resolution: two updates within a second differ by their content.
    return { topic, action: 'order', key: `${incoming.externalId}:${modified}:${digestOf(raw)}`, order: incoming };
  },
};
