import type { IncomingHttpHeaders } from 'node:http';
import { verifySignature } from '../../../../integrations/signing';
import type { StoreAdapter, StoreMessage } from '../reader';
import { fields, header, orderId, text, UnreadableMessage } from '../reader';

/**
 * Our own order body from a sender of the shop's (a spreadsheet's script, a home-made store),
 * signed as our outbound webhooks are (Standard Webhooks, with the key we made): `{type, data}`.
 * `webhook-id` names a delivery; the timestamp must be within 5 minutes of our clock.
 */
const TOPICS = ['order.created', 'order.updated', 'order.cancelled'];

export const custom: StoreAdapter = {
  verify: (raw: Buffer, headers: IncomingHttpHeaders, secret: string) => verifySignature(secret, raw, headers),
  read(body: unknown, headers: IncomingHttpHeaders): StoreMessage {
    const message = fields(body);
    const topic = text(message.type);
    if (!TOPICS.includes(topic)) return { topic: topic.slice(0, 100) || 'unknown', action: 'ignore' };
    const key = header(headers, 'webhook-id');
    if (!key) throw new UnreadableMessage('webhook-id is missing');
    const data = fields(message.data);
    const externalId = orderId(data.external_id);
    if (topic === 'order.cancelled') return { topic, action: 'delete', key, externalId };
    return {
      topic,
      action: 'order',
      key,
      order: {
        externalId,
        externalRef: text(data.external_ref) || null,
        clientName: text(data.client_name),
        phone: text(data.phone),
        address: text(data.address) || null,
        productsName: text(data.products_name),
        totalAmount: text(data.total_amount) || null,
        currency: text(data.currency) || null,
        note: text(data.note) || null,
        city: text(data.city) || null,
        updatedAt: null,
        cashOnDelivery: data.paid !== true,
        cancelled: false,
      },
    };
  },
};
