import type { Knex } from 'knex';

/**
 * Where delivery news comes from besides a person (docs/delivery.md):
 * - `carrier_words`: a shop's own carriers' words for a delivery status, beside the built-in
 *   dictionary (services/deliveries/words.ts); `word_key` is the word folded (case, accents and
 *   spaces aside), unique per workspace.
 * - `carrier_connections`: a carrier that pushes its news to `/hooks/carriers/:id`, signed with
 *   Standard Webhooks by `secret` (`whsec_…`), as the custom store source is; its own table, not a
 *   store connection.
 * - `carrier_events`: each signed message a connection received (by its `webhook-id`, unique per
 *   connection: a replay changes nothing) and what came of it, for the connection's log.
 */
// Frozen here: a later change to a list needs a migration of its own.
const STATUSES = ['shipped', 'in_transit', 'out_for_delivery', 'delivered', 'refused', 'returned', 'lost'];
const RESULTS = ['updated', 'unchanged', 'unmatched', 'rejected', 'ignored'];
const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE carrier_words (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      word_key text NOT NULL CHECK (char_length(word_key) BETWEEN 1 AND 200),
      word text NOT NULL CHECK (char_length(word) BETWEEN 1 AND 200),
      status text NOT NULL CHECK (status IN (${list(STATUSES)})),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, word_key)
    )`);
  await knex.raw(`
    CREATE TABLE carrier_connections (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('custom')),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
      secret text NOT NULL CHECK (char_length(secret) BETWEEN 1 AND 500),
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw('CREATE INDEX carrier_connections_workspace_idx ON carrier_connections (workspace_id, created_at, id)');
  await knex.raw(`
    CREATE TABLE carrier_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      connection_id uuid NOT NULL REFERENCES carrier_connections(id) ON DELETE CASCADE,
      message_key text NOT NULL CHECK (char_length(message_key) <= 256),
      received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      result text NOT NULL CHECK (result IN (${list(RESULTS)})),
      order_id uuid REFERENCES orders(id) ON DELETE SET NULL,
      reason text CHECK (char_length(reason) <= 500)
    )`);
  await knex.raw('CREATE UNIQUE INDEX carrier_events_message_idx ON carrier_events (connection_id, message_key)');
  await knex.raw('CREATE INDEX carrier_events_recent_idx ON carrier_events (connection_id, received_at DESC, id DESC)');
  await knex.raw('CREATE INDEX carrier_events_order_idx ON carrier_events (order_id) WHERE order_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE carrier_events');
  await knex.raw('DROP TABLE carrier_connections');
  await knex.raw('DROP TABLE carrier_words');
}
