/**
 * An order's delivery as every representation shows it, and the words that name its statuses.
 * The columns live on `orders` (migration 20261126_43_01); this file is the one that reads them.
 */
export const DELIVERY_STATUSES = ['shipped', 'in_transit', 'out_for_delivery', 'delivered', 'refused', 'returned', 'lost'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * The statuses a parcel's journey ends with: delivery_counts counts these (the orders_count_deliveries
 * trigger is generated from this list, services/stats/db/orders_count_deliveries.sql.ts), and a
 * parcel in any other status is still under way.
 */
export const FINAL_DELIVERY_STATUSES = ['delivered', 'refused', 'returned', 'lost'] as const satisfies readonly DeliveryStatus[];
export type FinalDeliveryStatus = (typeof FINAL_DELIVERY_STATUSES)[number];

/** How many parcels ended, from a count per final status. */
export function endedDeliveries(counts: Record<FinalDeliveryStatus, number>): number {
  return FINAL_DELIVERY_STATUSES.reduce((n, status) => n + counts[status], 0);
}

/** Whether a delivery status ends the parcel's journey. */
export function isFinalDelivery(status: string | null | undefined): status is FinalDeliveryStatus {
  return (FINAL_DELIVERY_STATUSES as readonly string[]).includes(status ?? '');
}

/**
 * What a piece of delivery news says: a status, or `attempted` — the courier could not deliver yet
 * (no answer, postponed, unreachable). An attempt changes the carrier's words only, never the status.
 */
export const DELIVERY_WORDS = [...DELIVERY_STATUSES, 'attempted'] as const;
export type DeliveryWord = (typeof DELIVERY_WORDS)[number];

/** Where a delivery event came from. */
export type DeliverySource = 'person' | 'import' | 'carrier' | 'store';

export interface Delivery {
  status: DeliveryStatus;
  carrier: string | null;
  tracking_number: string | null;
  carrier_status: string | null;
  updated_at: string;
}

export interface DeliveryColumns {
  delivery_status?: DeliveryStatus | null;
  delivery_carrier?: string | null;
  delivery_tracking_number?: string | null;
  delivery_carrier_status?: string | null;
  delivery_at?: Date | string | null;
  /** webhook_order's and a stored answer's form: the delivery already built. */
  delivery?: (Omit<Delivery, 'updated_at'> & { updated_at: string | Date }) | null;
}

/** The delivery of an order's row (its columns, or the object webhook_order and stored answers hold); null when none. */
export function deliveryOf(row: DeliveryColumns): Delivery | null {
  if (row.delivery !== undefined) {
    if (row.delivery === null) return null;
    return { ...row.delivery, updated_at: new Date(row.delivery.updated_at).toISOString() };
  }
  if (!row.delivery_status || !row.delivery_at) return null;
  return {
    status: row.delivery_status,
    carrier: row.delivery_carrier ?? null,
    tracking_number: row.delivery_tracking_number ?? null,
    carrier_status: row.delivery_carrier_status ?? null,
    updated_at: new Date(row.delivery_at).toISOString(),
  };
}

export function isDeliveryWord(value: unknown): value is DeliveryWord {
  return (DELIVERY_WORDS as readonly unknown[]).includes(value);
}
