import type { IncomingHttpHeaders } from 'node:http';
import type { IncomingOrder, StoreAdapter, StoreMessage } from './types';
import { fields, header, hmacMatches, joined, orderId, productsLine, text, UnreadableMessage } from './types';

/**
 * Shopify's order webhooks (`orders/create`, `orders/updated`, `orders/cancelled`), signed with
 * X-Shopify-Hmac-Sha256: the base64 HMAC-SHA256 of the raw body by the shop's webhook signing key
 * (or an app's client secret). X-Shopify-Webhook-Id names a delivery, the same on its retries.
 */
const TOPICS = ['orders/create', 'orders/updated', 'orders/cancelled'];

/** Cash on delivery: a gateway named so (any case), or nothing paid yet. */
function cashOnDelivery(order: Record<string, unknown>): boolean {
  const gateways = Array.isArray(order.payment_gateway_names) ? order.payment_gateway_names.map(text) : [];
  return gateways.some((name) => /cash on delivery|\bcod\b/i.test(name)) || text(order.financial_status) === 'pending';
}

function map(order: Record<string, unknown>): IncomingOrder {
  const shipping = fields(order.shipping_address);
  const billing = fields(order.billing_address);
  const customer = fields(order.customer);
  const nameOf = (who: Record<string, unknown>) => joined([who.first_name, who.last_name], ' ');
  return {
    externalId: orderId(order.id),
    externalRef: text(order.name) || null,
    clientName: nameOf(shipping) || nameOf(billing) || nameOf(customer),
    phone: [shipping.phone, order.phone, billing.phone, customer.phone].map(text).find(Boolean) ?? '',
    address: joined([shipping.address1, shipping.address2, shipping.city], ', ') || null,
    productsName: productsLine(order.line_items, (item) => item.name ?? item.title),
    totalAmount: text(order.total_price) || null,
    currency: text(order.currency) || null,
    cashOnDelivery: cashOnDelivery(order),
    cancelled: text(order.cancelled_at) !== '',
  };
}

export const shopify: StoreAdapter = {
  verify: (raw: Buffer, headers: IncomingHttpHeaders, secret: string) => hmacMatches(raw, secret, header(headers, 'x-shopify-hmac-sha256'), 'base64'),
  read(body: unknown, headers: IncomingHttpHeaders): StoreMessage {
    const topic = header(headers, 'x-shopify-topic') ?? '';
    if (!TOPICS.includes(topic)) return { topic: topic.slice(0, 100) || 'unknown', action: 'ignore' };
    const key = header(headers, 'x-shopify-webhook-id');
    if (!key) throw new UnreadableMessage('X-Shopify-Webhook-Id is missing');
    const order = map(fields(body));
    // The topic header is not signed: only the body's cancelled_at cancels.
    if (topic === 'orders/cancelled' && !order.cancelled) return { topic, action: 'unchanged', key, externalId: order.externalId };
    return { topic, action: 'order', key, order };
  },
};
