import type { Knex } from 'knex';
import type { DeliverySource, DeliveryStatus } from './model';

/** One piece of delivery news, whoever brings it (a person, a carrier's file or hook, the store). */
export interface DeliveryEvent {
  workspaceId: string;
  orderId: string;
  status: DeliveryStatus;
  /** Given: replaces the order's; absent: the order keeps its own. */
  carrier?: string | null;
  trackingNumber?: string | null;
  /** The carrier's own words for this status, as received. */
  carrierStatus?: string | null;
  /** When it happened (ISO 8601 or a Date). */
  at: string | Date;
  source: DeliverySource;
  /** Who or what brought it: a user's name, a connection's name, a file name. */
  by: string | null;
}

export interface AppliedEvent {
  /** The order exists in the workspace (else nothing was written). */
  found: boolean;
  /** It became the order's current delivery (false: older than the last one applied, kept in the history only). */
  applied: boolean;
  /** The order's current delivery is different afterwards. */
  changed: boolean;
  /** The tracking number given belongs to another order of the workspace: the order kept its own. */
  trackingTaken: boolean;
}

/**
 * The event goes into the history; it becomes the current delivery unless it is older than the
 * last one applied (a person's change always applies); who confirmed the order by a call is noted
 * with it, for the statistics (orders_count_deliveries). One statement, under the order's row lock.
 */
const APPLY = `
  WITH cur AS (
    SELECT o.id, o.delivery_status, o.delivery_carrier, o.delivery_tracking_number, o.delivery_carrier_status, o.delivery_at
      FROM orders o WHERE o.id = ?::uuid AND o.workspace_id = ?::uuid FOR UPDATE
  ), given AS (
    SELECT ?::text AS status, ?::text AS carrier, ?::text AS tracking, ?::text AS carrier_status, ?::timestamptz AS at,
           ?::text AS source, ?::text AS by
  ), taken AS (
    SELECT EXISTS (SELECT 1 FROM orders x, given g, cur WHERE x.workspace_id = ?::uuid AND x.delivery_tracking_number = g.tracking AND x.id <> cur.id) AS taken
  ), ev AS (
    INSERT INTO delivery_events (workspace_id, order_id, status, carrier_status, at, source, by, applied)
    SELECT ?::uuid, cur.id, g.status, g.carrier_status, g.at, g.source, g.by,
           (g.source = 'person' OR cur.delivery_at IS NULL OR g.at >= cur.delivery_at)
      FROM cur, given g
    RETURNING applied
  ), upd AS (
    UPDATE orders o
       SET delivery_status = g.status,
           delivery_carrier = coalesce(g.carrier, o.delivery_carrier),
           delivery_tracking_number = CASE WHEN t.taken THEN o.delivery_tracking_number ELSE coalesce(g.tracking, o.delivery_tracking_number) END,
           delivery_carrier_status = g.carrier_status,
           delivery_at = g.at,
           delivery_confirmer_kind = c.kind,
           delivery_confirmer_id = c.who
      FROM ev, given g, taken t
      LEFT JOIN LATERAL (
        SELECT k.kind, CASE WHEN k.kind = 'human' THEN k.made_by ELSE op.agent_id END AS who
          FROM operations op JOIN calls k ON k.operation_id = op.id
         WHERE op.order_id = ?::uuid AND k.outcome IN ('confirmed', 'order-changed') AND k.dropped_at IS NULL
         ORDER BY k.ended_at DESC LIMIT 1) c ON true
     WHERE o.id = ?::uuid AND ev.applied
    RETURNING o.delivery_status, o.delivery_carrier, o.delivery_tracking_number, o.delivery_carrier_status
  )
  SELECT (SELECT count(*) FROM cur) > 0 AS found,
         coalesce((SELECT applied FROM ev), false) AS applied,
         EXISTS (SELECT 1 FROM upd, cur WHERE (upd.delivery_status, upd.delivery_carrier, upd.delivery_tracking_number, upd.delivery_carrier_status)
                   IS DISTINCT FROM (cur.delivery_status, cur.delivery_carrier, cur.delivery_tracking_number, cur.delivery_carrier_status)) AS changed,
         (SELECT taken FROM taken) AND ?::text IS NOT NULL AS tracking_taken`;

const NOTIFY = `
  SELECT webhook_event(o.workspace_id, 'order.delivery_updated', jsonb_build_object('order', webhook_order(o)))
    FROM orders o WHERE o.id = ?::uuid AND o.workspace_id = ?::uuid`;

/**
 * The one function every source of delivery news calls (a person, an import row, a carrier's hook,
 * a store's fulfillment, a future carrier adapter). Run it in the caller's transaction; a change of
 * the current delivery sends `order.delivery_updated` in the same transaction.
 */
export async function applyDeliveryEvent(db: Knex | Knex.Transaction, event: DeliveryEvent, options: { notify?: boolean } = {}): Promise<AppliedEvent> {
  const at = new Date(event.at).toISOString();
  const tracking = event.trackingNumber ?? null;
  const { rows } = await db.raw(APPLY, [
    event.orderId,
    event.workspaceId,
    event.status,
    event.carrier ?? null,
    tracking,
    event.carrierStatus ?? null,
    at,
    event.source,
    event.by,
    event.workspaceId,
    event.workspaceId,
    event.orderId,
    event.orderId,
    tracking,
  ]);
  const result = rows[0] as { found: boolean; applied: boolean; changed: boolean; tracking_taken: boolean };
  // `notify: false`: the caller knows no endpoint takes the event (an import asks once, not per row).
  if (result.changed && options.notify !== false) await db.raw(NOTIFY, [event.orderId, event.workspaceId]);
  return { found: result.found, applied: result.applied, changed: result.changed, trackingTaken: result.tracking_taken };
}
