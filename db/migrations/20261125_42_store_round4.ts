import type { Knex } from 'knex';

/**
 * What real stores send, and connecting a store in one click.
 *
 * Orders gain `external_updated_at`: when the store last changed the order, as of the newest update
 * applied, so that an older update arriving late changes nothing. (The customer's `note`, the
 * `city` and three-decimal amounts come with migration 20261125_40.)
 *
 * A connection made by a platform's approval exists `pending` (disabled, so intake answers 404 and
 * write-back skips it) until its webhooks are registered; `disabled_reason` says why a connection
 * stopped by itself (`uninstalled`). `oauth_states` holds each approval under way: a single-use
 * nonce (kept as its SHA-256), bound to the owner's session, good for 10 minutes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE orders ADD COLUMN external_updated_at timestamptz');
  await knex.raw(`
    ALTER TABLE store_connections
      ADD COLUMN pending boolean NOT NULL DEFAULT false,
      ADD COLUMN disabled_reason text CONSTRAINT store_connections_disabled_reason_check CHECK (disabled_reason IN ('uninstalled')),
      ADD COLUMN connected_by text CONSTRAINT store_connections_connected_by_check CHECK (connected_by IN ('oauth', 'manual'))`);
  await knex.raw(`
    CREATE TABLE oauth_states (
      nonce_hash text PRIMARY KEY CHECK (char_length(nonce_hash) = 64),
      kind text NOT NULL CHECK (kind IN ('shopify', 'woocommerce', 'youcan')),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      session_hash text NOT NULL CHECK (char_length(session_hash) = 64),
      connection_id uuid REFERENCES store_connections(id) ON DELETE CASCADE,
      shop text CHECK (char_length(shop) BETWEEN 1 AND 300),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
      cod_only boolean NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw('CREATE INDEX oauth_states_created_idx ON oauth_states (created_at)');
  await knex.raw('CREATE INDEX store_connections_pending_idx ON store_connections (created_at) WHERE pending');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE oauth_states');
  await knex.raw('DELETE FROM store_connections WHERE pending');
  await knex.raw('ALTER TABLE store_connections DROP COLUMN pending, DROP COLUMN disabled_reason, DROP COLUMN connected_by');
  await knex.raw('ALTER TABLE orders DROP COLUMN external_updated_at');
}
