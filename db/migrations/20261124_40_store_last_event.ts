import type { Knex } from 'knex';

/**
 * A connection's last message is read from its event log (whose newest rows are never pruned):
 * intake no longer writes the connection's row, on which a flash sale's messages queued.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE store_connections DROP COLUMN last_event_at');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE store_connections ADD COLUMN last_event_at timestamptz');
  await knex.raw('UPDATE store_connections c SET last_event_at = (SELECT max(received_at) FROM store_events e WHERE e.connection_id = c.id)');
}
