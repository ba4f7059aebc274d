import type { IncomingHttpHeaders } from 'node:http';
import type { IncomingFulfillment, IncomingOrder, StoreAdapter, StoreMessage } from '../reader';
import { fields, header, hmacMatches, joined, orderId, productsLine, storeTime, text, UnreadableMessage } from '../reader';

/**
 * Shopify's order webhooks (`orders/create`, `orders/updated`, `orders/cancelled`) and its
 * shipments (`fulfillments/create`, `fulfillments/update`), signed with
 * X-Shopify-Hmac-Sha256: the base64 HMAC-SHA256 of the raw body by the shop's webhook signing key
 * (or an app's client secret). X-Shopify-Webhook-Id names a delivery, the same on its retries.
 */
const TOPICS = ['orders/create', 'orders/updated', 'orders/cancelled'];
const FULFILLMENT_TOPICS = ['fulfillments/create', 'fulfillments/update'];

/**
 * A fulfillment's `shipment_status` (Shopify's list: label_printed, label_purchased,
 * attempted_delivery, ready_for_pickup, picked_up, carrier_picked_up, confirmed, delayed, failure,
 * in_transit, out_for_delivery, delivered) in our delivery words. `picked_up` is a local pick-up
 * collected by the customer: delivered. `carrier_picked_up`: the carrier has the parcel.
 * `attempted_delivery` is an attempt: the carrier's words change, and the parcel may be saved by a
 * follow-up call. The others (label_printed, label_purchased, confirmed, ready_for_pickup, delayed…)
 * change only the carrier's words.
 */
const SHIPMENT_STATUS: Record<string, IncomingFulfillment['status']> = {
  carrier_picked_up: 'in_transit',
  in_transit: 'in_transit',
  out_for_delivery: 'out_for_delivery',
  delivered: 'delivered',
  picked_up: 'delivered',
  failure: 'refused',
  attempted_delivery: 'attempted',
};

/** A fulfillment (`fulfillments/create`, `fulfillments/update`); its own `status` "cancelled" undoes what it said. */
function fulfillment(body: Record<string, unknown>): IncomingFulfillment {
  const shipment = text(body.shipment_status);
  return {
    externalId: orderId(body.order_id),
    id: text(body.id).slice(0, 200) || null,
    cancelled: text(body.status) === 'cancelled',
    carrier: text(body.tracking_company).slice(0, 100) || null,
    trackingNumber: text(body.tracking_number).slice(0, 100) || null,
    // No shipment status yet: the parcel was handed to the carrier.
    status: !shipment ? 'shipped' : Object.hasOwn(SHIPMENT_STATUS, shipment) ? SHIPMENT_STATUS[shipment] : null,
    carrierStatus: shipment.slice(0, 200) || null,
    at: storeTime(body.updated_at) ?? storeTime(body.created_at),
  };
}

/** Cash on delivery: a gateway named so (any case), or nothing paid yet. */
function cashOnDelivery(order: Record<string, unknown>): boolean {
  const gateways = Array.isArray(order.payment_gateway_names) ? order.payment_gateway_names.map(text) : [];
  return gateways.some((name) => /cash on delivery|\bcod\b/i.test(name)) || text(order.financial_status) === 'pending';
}

/**
 * The amount to collect and its currency. After an order edit, `current_total_price` is the truth
 * (`total_price` stays as ordered); in a multi-currency shop the customer pays the presentment money,
 * not the shop's currency.
 */
function amount(order: Record<string, unknown>): { totalAmount: string | null; currency: string | null } {
  const presentment = fields(fields(order.current_total_price_set).presentment_money);
  if (text(presentment.amount))
    return { totalAmount: text(presentment.amount), currency: text(presentment.currency_code) || text(order.presentment_currency) || null };
  return { totalAmount: text(order.current_total_price) || text(order.total_price) || null, currency: text(order.currency) || null };
}

/** An address that has anything of a place in it (a billing-only checkout sends an empty shipping one, or none). */
function hasPlace(address: Record<string, unknown>): boolean {
  return joined([address.address1, address.address2, address.city], '') !== '';
}

function map(order: Record<string, unknown>): IncomingOrder {
  const shippingGiven = fields(order.shipping_address);
  const billing = fields(order.billing_address);
  // Billing-only checkouts: the billing address is where the order goes.
  const shipping = hasPlace(shippingGiven) ? shippingGiven : { ...billing, phone: shippingGiven.phone ?? billing.phone };
  const customer = fields(order.customer);
  const nameOf = (who: Record<string, unknown>) => joined([who.first_name, who.last_name], ' ');
  return {
    externalId: orderId(order.id),
    externalRef: text(order.name) || null,
    clientName: nameOf(shippingGiven) || nameOf(billing) || nameOf(customer),
    phone: [shippingGiven.phone, order.phone, billing.phone, customer.phone].map(text).find(Boolean) ?? '',
    address: joined([shipping.address1, shipping.address2, shipping.city], ', ') || null,
    city: text(shipping.city) || null,
    // After an edit, current_quantity is the truth: an item edited out has 0 and is left out.
    productsName: productsLine(
      order.line_items,
      (item) => item.name ?? item.title,
      (item) => item.current_quantity ?? item.quantity,
    ),
    ...amount(order),
    note: text(order.note) || null,
    updatedAt: storeTime(order.updated_at),
    cashOnDelivery: cashOnDelivery(order),
    cancelled: text(order.cancelled_at) !== '',
  };
}

/**
 * Whether a message was sent for `shop`: Shopify names the shop in `X-Shopify-Shop-Domain`. The
 * header is not signed, but a connection made in one click is verified with the app's one client
 * secret, shared by every shop: without this, a body signed for one shop would be taken at another's.
 */
export function sentForShop(headers: IncomingHttpHeaders, shop: string | null): boolean {
  const domain = header(headers, 'x-shopify-shop-domain')?.trim().toLowerCase();
  return !!domain && !!shop && domain === shop.toLowerCase();
}

/**
 * Whether a signed body is the shop record `app/uninstalled` carries, for `shop`. The topic header
 * is not signed: an order's body resent under that topic names no `myshopify_domain` and has line
 * items, so it uninstalls nothing.
 */
export function isShopRecordOf(body: unknown, shop: string | null): boolean {
  const record = fields(body);
  const domain = text(record.myshopify_domain).toLowerCase();
  return !!shop && domain === shop.toLowerCase() && record.line_items === undefined && record.order_id === undefined;
}

export const shopify: StoreAdapter = {
  verify: (raw: Buffer, headers: IncomingHttpHeaders, secret: string) => hmacMatches(raw, secret, header(headers, 'x-shopify-hmac-sha256'), 'base64'),
  read(body: unknown, headers: IncomingHttpHeaders): StoreMessage {
    const topic = header(headers, 'x-shopify-topic') ?? '';
    if (topic === 'app/uninstalled') return { topic, action: 'uninstalled' };
    if (!TOPICS.includes(topic) && !FULFILLMENT_TOPICS.includes(topic)) return { topic: topic.slice(0, 100) || 'unknown', action: 'ignore' };
    const key = header(headers, 'x-shopify-webhook-id');
    if (!key) throw new UnreadableMessage('X-Shopify-Webhook-Id is missing');
    if (FULFILLMENT_TOPICS.includes(topic)) return { topic, action: 'fulfillment', key, fulfillment: fulfillment(fields(body)) };
    const order = map(fields(body));
    // The topic header is not signed: only the body's cancelled_at cancels.
    if (topic === 'orders/cancelled' && !order.cancelled) return { topic, action: 'unchanged', key, externalId: order.externalId };
    return { topic, action: 'order', key, order };
  },
};
