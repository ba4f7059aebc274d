import type { IncomingHttpHeaders } from 'node:http';
import { verifySignature } from '../../../integrations/signing';
import type { CarrierAdapter } from './types';
import { CarrierMessageError } from './types';

/**
 * A carrier (or the shop's own script) that signs as our webhooks do (Standard Webhooks, with the
 * key we made), sending `{"type": "delivery.updated", "data": {tracking_number?, external_ref?,
 * order_id?, status, carrier_status?, at?}}`. `status` is one of ours.
 */
export const custom: CarrierAdapter = {
  verify: (raw: Buffer, headers: IncomingHttpHeaders, secret: string) => verifySignature(secret, raw, headers),
  read(body: unknown) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new CarrierMessageError('The body must be a JSON object');
    const message = body as Record<string, unknown>;
    if (message.type !== 'delivery.updated') return null;
    const data = message.data;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new CarrierMessageError('data must be an object');
    const d = data as Record<string, unknown>;
    return { trackingNumber: d.tracking_number, externalRef: d.external_ref, orderId: d.order_id, status: d.status, carrierStatus: d.carrier_status, at: d.at };
  },
};
