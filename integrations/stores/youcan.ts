import type { IncomingHttpHeaders } from 'node:http';
import type { StoreAdapter, StoreMessage } from './types';
import { fields, header, hmacMatches, joined, orderId, productsLine, text } from './types';

/**
 * YouCan's `order.create`, signed with x-youcan-signature: the hex HMAC-SHA256 of the body by the
 * app's client secret. YouCan signs the bytes PHP's json_encode wrote (`\/`, `\u00e9`), so only the
 * raw body verifies, never a re-serialisation. One message per order: the order's id names it.
 */
const TOPIC = 'order.create';

/** Paid online only when YouCan says so; an order of unknown payment is called rather than lost. */
function paid(order: Record<string, unknown>): boolean {
  const payment = fields(order.payment);
  const status = text(payment.status) || text(order.payment_status);
  return /^(paid|1)$/i.test(status);
}

export const youcan: StoreAdapter = {
  verify: (raw: Buffer, headers: IncomingHttpHeaders, secret: string) => hmacMatches(raw, secret, header(headers, 'x-youcan-signature'), 'hex'),
  read(body: unknown): StoreMessage {
    const order = fields(body);
    const customer = fields(order.customer);
    const shipping = fields(fields(order.shipping).address);
    const externalId = orderId(order.id);
    return {
      topic: TOPIC,
      action: 'order',
      key: externalId,
      order: {
        externalId,
        externalRef: text(order.ref) || null,
        clientName: joined([customer.first_name, customer.last_name], ' '),
        phone: text(customer.phone),
        address: joined([shipping.first_line, shipping.second_line, shipping.city], ', ') || null,
        productsName: productsLine(order.variants, (item) => item.name ?? fields(fields(item.variant).product).name),
        totalAmount: text(order.total) || null,
        currency: text(order.currency) || null,
        cashOnDelivery: !paid(order),
        cancelled: false,
      },
    };
  },
};
