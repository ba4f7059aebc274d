import type { Knex } from 'knex';

/**
 * Anonymising orders: their personal data replaced, everything the statistics read kept.
 *
 * MERGE NOTE: this is the erasure's anonymising (issue 58, item 3: a customer's request). The
 * retention pass (issue 58, item 2) is being written at the same time with an anonymising of its
 * own; the two are to become one function when the branches meet. Until then this one stands
 * alone: it reads and writes nothing outside `orders`, `operations` and `calls`, and its values are
 * the constants below.
 *
 * What goes: the order's client name, phone, address, city and note; its calls' summaries, the
 * changes a caller noted and the customer's WhatsApp replies. What stays: statuses, amounts,
 * currencies, dates, store names, products, flags, counters (`ended_calls`, `op_status`), the
 * delivery columns and each call's outcome, kind and times, so that /stats over any period shows
 * the same figures. `anonymised_at` marks the order, and the update that sets it sends no
 * `order.updated` (the trigger's WHEN, migration 20261130_58_03).
 *
 * A call's text that was there becomes ANONYMISED_TEXT rather than null: "answered" in the call
 * counts is `reply IS NOT NULL` for a WhatsApp call, and must not change.
 */

/** An anonymised order's client name. */
export const ANONYMISED_NAME = '—';
/**
 * An anonymised order's phone: the form the orders' CHECK asks for (`+212` and nine digits), but no
 * number an order can be given (a Moroccan national number starts with 5, 6 or 7), so no new
 * order is ever a duplicate of an anonymised one or flagged by its refusals.
 */
export const ANONYMISED_PHONE = '+212000000000';
/** An anonymised order's address, city and note. */
const ANONYMISED_ADDRESS = null;
const ANONYMISED_CITY = null;
const ANONYMISED_NOTE = null;
/** A call's summary, changes or reply that existed (one that did not stays null). */
export const ANONYMISED_TEXT = '—';

/**
 * Anonymises the given orders of the workspace (ids of another workspace are left alone) in the
 * caller's transaction, and stops their open operations (nobody calls or messages an anonymised
 * order). Returns how many orders it anonymised. An order anonymised before is anonymised again
 * (its `anonymised_at` moves): the caller picks the orders.
 */
export async function anonymiseOrders(trx: Knex.Transaction, workspaceId: string, orderIds: readonly string[]): Promise<number> {
  if (orderIds.length === 0) return 0;
  const ids = [...orderIds];
  const { rowCount } = await trx.raw(
    `UPDATE orders
        SET client_name = ?, phone = ?, address = ?, city = ?, note = ?, anonymised_at = clock_timestamp()
      WHERE workspace_id = ? AND id = ANY(?::uuid[])`,
    [ANONYMISED_NAME, ANONYMISED_PHONE, ANONYMISED_ADDRESS, ANONYMISED_CITY, ANONYMISED_NOTE, workspaceId, ids],
  );
  await trx.raw(
    `UPDATE calls c
        SET summary = CASE WHEN c.summary IS NULL THEN NULL ELSE ? END,
            changes = CASE WHEN c.changes IS NULL THEN NULL ELSE ? END,
            reply = CASE WHEN c.reply IS NULL THEN NULL ELSE ? END
       FROM operations op
      WHERE op.id = c.operation_id AND op.workspace_id = ? AND op.order_id = ANY(?::uuid[])
        AND (c.summary IS NOT NULL OR c.changes IS NOT NULL OR c.reply IS NOT NULL)`,
    [ANONYMISED_TEXT, ANONYMISED_TEXT, ANONYMISED_TEXT, workspaceId, ids],
  );
  await trx('operations')
    .where({ workspace_id: workspaceId })
    .whereIn('order_id', ids)
    .whereIn('status', ['pending', 'in_progress'])
    .update({ status: 'cancelled', next_attempt_at: null });
  return rowCount ?? 0;
}
