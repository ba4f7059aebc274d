import type { Knex } from 'knex';

/**
 * A courier's attempt (issue 53): "Pas de réponse", "Reporté", "Injoignable"… say the parcel could
 * not be delivered yet, not what became of it. Such news changes the carrier's words only, never the
 * order's delivery status, and is kept in the history as an attempt.
 *
 * - `carrier_words.status` and `delivery_events.status` also take `attempted`: a shop's own word may
 *   mean an attempt, and the history says an attempt came.
 * - `orders.delivery_carrier_status_at`: the time of the news whose words `delivery_carrier_status`
 *   holds (a status or an attempt); `delivery_at` stays the time of the last status applied. Null on
 *   orders written before: the time of their words is `delivery_at`.
 */
// Frozen here: a later change to a list needs a migration of its own.
const STATUSES = ['shipped', 'in_transit', 'out_for_delivery', 'delivered', 'refused', 'returned', 'lost'];
const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

export async function up(knex: Knex): Promise<void> {
  const words = list([...STATUSES, 'attempted']);
  await knex.raw(`
    ALTER TABLE carrier_words
      DROP CONSTRAINT carrier_words_status_check,
      ADD CONSTRAINT carrier_words_status_check CHECK (status IN (${words}))`);
  await knex.raw(`
    ALTER TABLE delivery_events
      DROP CONSTRAINT delivery_events_status_check,
      ADD CONSTRAINT delivery_events_status_check CHECK (status IN (${words}))`);
  await knex.raw('ALTER TABLE orders ADD COLUMN delivery_carrier_status_at timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM carrier_words WHERE status = 'attempted'");
  await knex.raw("DELETE FROM delivery_events WHERE status = 'attempted'");
  await knex.raw('ALTER TABLE orders DROP COLUMN delivery_carrier_status_at');
  const statuses = list(STATUSES);
  await knex.raw(`
    ALTER TABLE carrier_words
      DROP CONSTRAINT carrier_words_status_check,
      ADD CONSTRAINT carrier_words_status_check CHECK (status IN (${statuses}))`);
  await knex.raw(`
    ALTER TABLE delivery_events
      DROP CONSTRAINT delivery_events_status_check,
      ADD CONSTRAINT delivery_events_status_check CHECK (status IN (${statuses}))`);
}
