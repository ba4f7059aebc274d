import type { Secrets } from '../../integrations/secrets';
import type { Knex } from 'knex';
import { z } from 'zod';
import { NotFoundError, ValidationError, msg, bodyFields, camelOrSnake, isUuid, optionalText, parse } from '../../services/shared';
import type { FieldErrors } from '../../services/shared';
import type { Order, OrderService, DeliverySource, DeliveryStatus, DeliveryWord } from '../orders';
import { applyDeliveryEvent } from './apply';
import { eventTime } from './time';
import { CarrierConnectionService } from './carriers';
import { ReportImport } from './import';
import { CarrierWords } from './words';
import { DELIVERY_WORDS, FINAL_DELIVERY_STATUSES, isDeliveryWord } from '../orders';

export { DELIVERY_STATUSES } from '../orders';
export { applyDeliveryEvent, applyDeliveryEvents, attemptedOrders, notifyDeliveryUpdated, undoDeliveryNews } from './apply';
export type { DeliveryEvent } from './apply';
export { REPORT_COLUMNS } from './import';
export { unknownRowsFrom } from './retry';
export { builtInWords } from './words';
export { DELIVERY_WORDS } from '../orders';

// `attempted`: the courier could not deliver yet; it changes the carrier's words only.
const statusSchema = z.custom<DeliveryWord>(isDeliveryWord, { message: msg('deliveryStatusUnknown', { allowed: DELIVERY_WORDS.join(', ') }) });

const personSchema = z.object({
  status: statusSchema,
  carrier: optionalText('Carrier', 100),
  trackingNumber: optionalText('Tracking number', 100),
  carrierStatus: optionalText('Carrier status', 200),
});

/** Runs a check; its field errors (codes kept) are added to `fields` and null returned instead. */
function collect<T>(fields: Record<string, string>, check: () => T): T | null {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    for (const [name, text] of Object.entries(err.fields)) {
      const coded = err.codes[name];
      fields[name] = coded ? msg(coded.code, coded.params) : text;
    }
    return null;
  }
}

/** A customer's refused parcels (see refusalsOf). */
export interface Refusals {
  /** Parcels of the phone's other orders whose delivery ended in the last 180 days. */
  parcels: number;
  /** Of those, refused or returned. */
  refused: number;
  orders: Array<{ id: string; created_at: string; products_name: string; status: DeliveryStatus; at: string }>;
}

/** One line of an order's delivery history, oldest first. */
export interface DeliveryHistoryEvent {
  /** A status, or `attempted` (an attempt: the carrier's words changed, not the status). */
  status: DeliveryWord;
  carrier_status: string | null;
  at: string;
  source: DeliverySource;
  by: string | null;
}

/**
 * Deliveries (delivery.md): an order's delivery, set by a person here, by a carrier's report
 * (./import), a carrier's hook (./carriers) or the store (Shopify's fulfillments), every one through
 * applyDeliveryEvent.
 */
export class DeliveryService {
  /** A shop's own carriers' words (settings). */
  readonly words: CarrierWords;
  /** A carrier's report (POST /api/deliveries/import, /deliveries/import). */
  readonly reports: ReportImport;
  /** Carriers that push (/api/carriers, /hooks/carriers/:id). */
  readonly carriers: CarrierConnectionService;

  constructor(
    private readonly knex: Knex,
    private readonly orders: OrderService,
    publicBaseUrl: string,
    secrets: Secrets,
  ) {
    this.words = new CarrierWords(knex);
    this.reports = new ReportImport(knex, this.words);
    this.carriers = new CarrierConnectionService(knex, publicBaseUrl, secrets);
  }

  /** PUT /api/orders/:id/delivery and the order page's form: a person's change, always applied. */
  async setByPerson(workspaceId: string, orderId: string, body: unknown, by: string): Promise<Order> {
    if (!isUuid(orderId)) throw new NotFoundError(msg('orderNotFound'));
    const source = bodyFields(body);
    const input = {
      status: source.status,
      carrier: source.carrier,
      trackingNumber: camelOrSnake(source, 'trackingNumber', 'tracking_number'),
      carrierStatus: camelOrSnake(source, 'carrierStatus', 'carrier_status'),
    };
    const fields: FieldErrors = {};
    const data = collect(fields, () => parse(personSchema, input));
    const at = collect(fields, () => eventTime(source.at));
    if (!data || !at) throw new ValidationError(fields);
    await this.knex.transaction(async (trx) => {
      const result = await applyDeliveryEvent(trx, { workspaceId, orderId, ...data, at, source: 'person', by });
      if (!result.found) throw new NotFoundError(msg('orderNotFound'));
      if (result.trackingTaken) throw new ValidationError({ trackingNumber: msg('trackingTaken') });
    });
    return this.orders.get(workspaceId, orderId);
  }

  /**
   * What the `refused_before` flag is about, as the call page shows it: the customer's other
   * parcels (same phone) whose delivery ended in the last 180 days, how many of them were refused
   * or returned, and those orders. One range of orders_workspace_phone_idx.
   */
  async refusalsOf(workspaceId: string, order: Order): Promise<Refusals> {
    const rows = await this.knex
      .from('orders as o')
      .where({ 'o.workspace_id': workspaceId, 'o.phone': order.phone })
      .whereNot('o.id', order.id)
      .whereIn('o.delivery_status', FINAL_DELIVERY_STATUSES)
      .whereRaw("o.delivery_at >= ?::timestamptz - interval '180 days'", [order.created_at])
      .orderBy('o.delivery_at', 'desc')
      .limit(50)
      .select('o.id', 'o.created_at', 'o.products_name', 'o.delivery_status', 'o.delivery_at');
    const refused = rows.filter((row) => row.delivery_status === 'refused' || row.delivery_status === 'returned');
    return {
      parcels: rows.length,
      refused: refused.length,
      orders: refused.map((row) => ({
        id: row.id,
        created_at: new Date(row.created_at).toISOString(),
        products_name: row.products_name,
        status: row.delivery_status,
        at: new Date(row.delivery_at).toISOString(),
      })),
    };
  }

  /** GET /api/orders/:id/delivery/events: the order's delivery history, oldest first. */
  async events(workspaceId: string, orderId: string): Promise<DeliveryHistoryEvent[]> {
    await this.orders.get(workspaceId, orderId);
    const rows = await this.knex('delivery_events')
      .where({ workspace_id: workspaceId, order_id: orderId })
      .orderBy([{ column: 'at' }, { column: 'received_at' }])
      .select('status', 'carrier_status', 'at', 'source', 'by');
    return rows.map((row) => ({ ...row, at: new Date(row.at).toISOString() }));
  }
}
