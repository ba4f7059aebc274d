import type { Knex } from 'knex';

/**
 * What a piece of delivery news said and what named it, so that news can be undone (issue 52):
 *
 * - `carrier`, `tracking_number`: what the event gave (as received; the order keeps its own when a
 *   number belongs to another order). With them, an order's delivery can be recomputed from its
 *   history. Events recorded before have none; the last applied one of each order gets the order's
 *   current carrier and tracking number, so a recomputation ends where the order is today.
 * - `source_key`: what the source names the news by — a store's fulfillment id. Shopify cancels a
 *   fulfillment: every event of that key is undone.
 * - `undone_at`: when its news was undone (a cancelled fulfillment). An undone event stays in the
 *   history, not applied, and no longer counts when the order's delivery is recomputed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE delivery_events
      ADD COLUMN carrier text CONSTRAINT delivery_events_carrier_check CHECK (char_length(carrier) BETWEEN 1 AND 100),
      ADD COLUMN tracking_number text CONSTRAINT delivery_events_tracking_check CHECK (char_length(tracking_number) BETWEEN 1 AND 100),
      ADD COLUMN source_key text CONSTRAINT delivery_events_source_key_check CHECK (char_length(source_key) BETWEEN 1 AND 200),
      ADD COLUMN undone_at timestamptz`);
  await knex.raw(`
    UPDATE delivery_events e
       SET carrier = o.delivery_carrier, tracking_number = o.delivery_tracking_number
      FROM (SELECT DISTINCT ON (order_id) id, order_id FROM delivery_events WHERE applied ORDER BY order_id, received_at DESC, id DESC) last
      JOIN orders o ON o.id = last.order_id
     WHERE e.id = last.id AND (o.delivery_carrier IS NOT NULL OR o.delivery_tracking_number IS NOT NULL)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE delivery_events
      DROP COLUMN carrier, DROP COLUMN tracking_number, DROP COLUMN source_key, DROP COLUMN undone_at`);
}
