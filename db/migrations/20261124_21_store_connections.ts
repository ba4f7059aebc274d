import type { Knex } from 'knex';

/**
 * Store connections and what arrived through each (the event log).
 *
 * `secret` is the key the store signs with, kept as given because every message is verified with it.
 * `write_back` holds the store's API credentials (write-back), never shown again once stored.
 * An event's `message_key` is the store's id of one delivery (Shopify's webhook id, WooCommerce's
 * order id and date_modified, …): unique per connection, so a retried delivery finds the first one.
 */
// Frozen here: a later change to a list needs a migration of its own.
const KINDS = ['shopify', 'woocommerce', 'youcan', 'custom'];
const RESULTS = ['created', 'updated', 'cancelled', 'duplicate', 'ignored_paid', 'ignored_unchanged', 'rejected'];
const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE store_connections (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN (${list(KINDS)})),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
      shop text CHECK (char_length(shop) BETWEEN 1 AND 300),
      secret text NOT NULL CHECK (char_length(secret) BETWEEN 1 AND 500),
      cod_only boolean NOT NULL DEFAULT true,
      enabled boolean NOT NULL DEFAULT true,
      write_back jsonb,
      write_back_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_event_at timestamptz
    )`);
  await knex.raw('CREATE INDEX store_connections_workspace_idx ON store_connections (workspace_id, created_at, id)');
  await knex.raw(`
    CREATE TABLE store_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      connection_id uuid NOT NULL REFERENCES store_connections(id) ON DELETE CASCADE,
      received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      topic text NOT NULL CHECK (char_length(topic) <= 100),
      message_key text CHECK (char_length(message_key) <= 300),
      external_id text CHECK (char_length(external_id) <= 200),
      result text NOT NULL CHECK (result IN (${list(RESULTS)})),
      order_id uuid REFERENCES orders(id) ON DELETE SET NULL,
      reason text CHECK (char_length(reason) <= 500)
    )`);
  await knex.raw('CREATE UNIQUE INDEX store_events_message_idx ON store_events (connection_id, message_key) WHERE message_key IS NOT NULL');
  await knex.raw('CREATE INDEX store_events_recent_idx ON store_events (connection_id, received_at DESC, id DESC)');
  // An order's deletion looks up the events that name it.
  await knex.raw('CREATE INDEX store_events_order_idx ON store_events (order_id) WHERE order_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE store_events');
  await knex.raw('DROP TABLE store_connections');
}
