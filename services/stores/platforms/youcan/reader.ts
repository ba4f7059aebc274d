import type { IncomingHttpHeaders } from 'node:http';
import type { StoreAdapter, StoreMessage } from '../reader';
import { digestOf, fields, header, hmacMatches, joined, orderId, productsLine, storeTime, text } from '../reader';

/**
 * YouCan's `order.create`, signed with x-youcan-signature: the hex HMAC-SHA256 of the body by the
 * app's client secret. YouCan signs the bytes PHP's json_encode wrote (`\/`, `\u00e9`), so only the
 * raw body verifies, never a re-serialisation. One message per order: the order's id names it.
 */
const TOPIC = 'order.create';
const UPDATE = 'order.update';

/**
 * Paid online only when YouCan says so, by its status text (`paid`) or its status code; anything
 * else (unpaid, pending, unknown) is cash on delivery and is called rather than lost.
 */
function paid(order: Record<string, unknown>): boolean {
  const payment = fields(order.payment);
  if (/^paid$/i.test(text(payment.status_text))) return true;
  const status = text(payment.status) || text(order.payment_status);
  return /^(paid|1)$/i.test(status);
}

export const youcan: StoreAdapter = {
  verify: (raw: Buffer, headers: IncomingHttpHeaders, secret: string) => hmacMatches(raw, secret, header(headers, 'x-youcan-signature'), 'hex'),
  read(body: unknown, headers: IncomingHttpHeaders, raw: Buffer): StoreMessage {
    const order = fields(body);
    const customer = fields(order.customer);
    const shipping = fields(fields(order.shipping).address);
    const billing = fields(fields(order.billing).address ?? order.billing);
    const externalId = orderId(order.id);
    // An app's subscription to order.update sends the same body: the event name says which.
    const topic = [header(headers, 'x-youcan-event'), text(order.event)].includes(UPDATE) ? UPDATE : TOPIC;
    const updatedAt = storeTime(order.updated_at);
    return {
      topic,
      action: 'order',
      // One order.create per order; an update is named by its time and content, as WooCommerce's are.
      key: topic === TOPIC ? externalId : `${externalId}:${updatedAt ?? ''}:${digestOf(raw)}`,
      order: {
        externalId,
        externalRef: text(order.ref) || null,
        clientName: joined([customer.first_name, customer.last_name], ' ') || text(customer.full_name),
        phone: [customer.phone, shipping.phone, billing.phone].map(text).find(Boolean) ?? '',
        address: joined([shipping.first_line, shipping.second_line, shipping.city], ', ') || null,
        city: text(shipping.city) || null,
        note: text(order.notes) || null,
        updatedAt,
        productsName: productsLine(order.variants, (item) => item.name ?? fields(fields(item.variant).product).name),
        totalAmount: text(order.total) || null,
        currency: text(order.currency) || null,
        cashOnDelivery: !paid(order),
        cancelled: false,
      },
    };
  },
};
