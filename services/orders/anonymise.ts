import type { Knex } from 'knex';
import { FINAL_DELIVERY_STATUSES } from './delivery';

/**
 * Anonymising orders, the one way: the retention pass (retention.ts) and a customer's erasure
 * (customers.ts) both come here. What goes: the order's client name, phone, address, city and note;
 * its calls' summaries, summary codes, the changes a caller noted and the words of a customer's
 * WhatsApp reply. What stays: statuses, amounts, currencies, dates, store names, products, flags,
 * the delivery, each call's outcome, kind and times, and every counter, so that /stats over any
 * period shows the same figures. `anonymised_at` marks the order, and the update that sets it sends
 * no `order.updated` (the trigger's WHEN, migration 20261130_58_20).
 */

/** What an anonymised order carries instead of its customer's name and phone. */
export const ANONYMISED_NAME = '—';
/** Passes the phone column's check (+212 and nine digits), yet no Moroccan number starts with 0: no customer's. */
export const ANONYMISED_PHONE = '+212000000000';

/** The delivery statuses delivery_counts counts. */
const COUNTED_DELIVERIES = `(${FINAL_DELIVERY_STATUSES.map((status) => `'${status}'`).join(', ')})`;

/**
 * Anonymises the orders `picked` selects (a query of `id`s, locked by the caller), in one statement:
 * - the order: name and phone to the markers above, address, city and note to null;
 * - its calls: summary, summary code and the changes asked for to null; a reply's text to '' (a reply
 *   was made, which call_counts' "answered" reads, but its words are gone);
 * - delivery_counts and delivery_month_counts: `orders_count_deliveries` moves a delivered order's
 *   count from its city to "no city"; the same statement moves it back, so /stats' cities read the
 *   same (delivery_day_counts has no city: the trigger's changes cancel out there).
 * `orders_webhook_changes` does not fire for it (migration 20261130_58_20), and no counter another
 * trigger keeps reads a column changed here. Returns the orders anonymised.
 */
export async function anonymiseOrders(db: Knex | Knex.Transaction, picked: string, bindings: readonly Knex.Value[]): Promise<number> {
  const { rows } = await db.raw<{ rows: Array<{ n: string }> }>(
    `WITH picked AS (SELECT p.id, o.city AS old_city FROM (${picked}) p JOIN orders o ON o.id = p.id WHERE o.anonymised_at IS NULL),
     done AS (
       UPDATE orders o SET client_name = ?, phone = ?, address = NULL, city = NULL, note = NULL, anonymised_at = now()
         FROM picked WHERE o.id = picked.id
       RETURNING o.id, o.workspace_id, o.delivery_at, o.store_name, picked.old_city, o.currency, o.delivery_status,
                 o.delivery_confirmer_kind, o.delivery_confirmer_id, o.total_amount),
     calls_done AS (
       UPDATE calls c SET summary = NULL, summary_code = NULL, changes = NULL, reply = CASE WHEN c.reply IS NULL THEN NULL ELSE '' END
         FROM operations p JOIN done ON done.id = p.order_id
        WHERE c.operation_id = p.id
          AND (c.summary IS NOT NULL OR c.summary_code IS NOT NULL OR c.changes IS NOT NULL OR c.reply <> '')
       RETURNING c.id),
     moves AS (
       -- Each counted delivery's city moves back to '': +1 on the old city, -1 on '' (by day and by month).
       SELECT workspace_id, (delivery_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, city, coalesce(currency, '') AS currency,
              delivery_status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind, delivery_confirmer_id, n, amount
         FROM (SELECT d.*, d.old_city AS city, 1 AS n, coalesce(d.total_amount, 0) AS amount FROM done d
               UNION ALL
               SELECT d.*, '' AS city, -1 AS n, -coalesce(d.total_amount, 0) AS amount FROM done d) m
        WHERE delivery_status IN ${COUNTED_DELIVERIES} AND coalesce(old_city, '') <> ''),
     cities AS (
       INSERT INTO delivery_counts (workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
       SELECT workspace_id, day, store_name, city, currency, delivery_status, confirmer_kind, delivery_confirmer_id, sum(n), sum(amount)
         FROM moves GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
       RETURNING 1),
     month_cities AS (
       INSERT INTO delivery_month_counts (workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
       SELECT workspace_id, date_trunc('month', day::timestamp)::date, store_name, city, currency, delivery_status, confirmer_kind, delivery_confirmer_id, sum(n), sum(amount)
         FROM moves GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
       RETURNING 1)
     SELECT (SELECT count(*) FROM done) AS n, (SELECT count(*) FROM calls_done) AS calls, (SELECT count(*) FROM cities) AS cities,
            (SELECT count(*) FROM month_cities) AS month_cities`,
    [...bindings, ANONYMISED_NAME, ANONYMISED_PHONE],
  );
  return Number(rows[0].n);
}

/**
 * Anonymises the given orders of the workspace (another workspace's ids are left alone) in the
 * caller's transaction, and stops their open operations: nobody calls or messages an anonymised
 * order. Returns how many were anonymised (one anonymised before is not taken again).
 */
export async function anonymiseOrdersById(trx: Knex.Transaction, workspaceId: string, orderIds: readonly string[]): Promise<number> {
  if (orderIds.length === 0) return 0;
  const ids = [...orderIds];
  const erased = await anonymiseOrders(trx, 'SELECT id FROM orders WHERE workspace_id = ? AND id = ANY(?::uuid[])', [workspaceId, ids]);
  await trx('operations')
    .where({ workspace_id: workspaceId })
    .whereIn('order_id', ids)
    .whereIn('status', ['pending', 'in_progress'])
    .update({ status: 'cancelled', next_attempt_at: null });
  return erased;
}
