import type { Knex } from 'knex';

/**
 * What real stores send, and connecting a store in one click.
 *
 * Orders gain the customer's `note` (≤ 1,000 characters), the `city` of the address, and
 * `external_updated_at`: when the store last changed the order, as of the newest update applied, so
 * that an older update arriving late changes nothing. Amounts keep up to three decimals (the dinars
 * of Tunisia, Kuwait, Bahrain, Jordan, Oman, Iraq and Libya); `webhook_order` shows each with its
 * currency's own number of decimals, as services/orders.ts `amountText` does.
 *
 * A connection made by a platform's approval exists `pending` (disabled, so intake answers 404 and
 * write-back skips it) until its webhooks are registered; `disabled_reason` says why a connection
 * stopped by itself (`uninstalled`). `oauth_states` holds each approval under way: a single-use
 * nonce (kept as its SHA-256), bound to the owner's session, good for 10 minutes.
 */
const THREE_DECIMALS = "('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND')";

const WEBHOOK_ORDER = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id, 'workspace_id', o.workspace_id, 'client_name', o.client_name, 'phone', o.phone,
      'store_name', o.store_name, 'products_name', o.products_name, 'address', o.address,
      'status', o.status, 'created_at', o.created_at, 'flags', to_jsonb(o.flags),
      'source', o.source, 'store_connection_id', o.store_connection_id, 'external_id', o.external_id,
      'external_ref', o.external_ref,
      'total_amount', round(o.total_amount, CASE WHEN o.currency IN ${THREE_DECIMALS} THEN 3 ELSE 2 END)::text,
      'currency', o.currency, 'note', o.note, 'city', o.city,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1))
  $$`;

const OLD_WEBHOOK_ORDER = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id, 'workspace_id', o.workspace_id, 'client_name', o.client_name, 'phone', o.phone,
      'store_name', o.store_name, 'products_name', o.products_name, 'address', o.address,
      'status', o.status, 'created_at', o.created_at, 'flags', to_jsonb(o.flags),
      'source', o.source, 'store_connection_id', o.store_connection_id, 'external_id', o.external_id,
      'external_ref', o.external_ref, 'total_amount', o.total_amount::text, 'currency', o.currency,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1))
  $$`;

const CHANGED_FIELDS_BEFORE = ['client_name', 'phone', 'store_name', 'products_name', 'address', 'external_ref', 'total_amount', 'currency', 'status'];
const CHANGED_FIELDS = ['client_name', 'phone', 'store_name', 'products_name', 'address', 'city', 'note', 'external_ref', 'total_amount', 'currency', 'status'];

/** orders_webhook_events (migration 20261123_02) with the given list of watched fields. */
function webhookEvents(fields: string[]): string {
  const rows = fields.map((name, i) => `(${i + 1}, '${name}', NEW.${name} IS DISTINCT FROM OLD.${name})`).join(',\n          ');
  return `
    CREATE OR REPLACE FUNCTION orders_webhook_events() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE changed text[];
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace_id ELSE NEW.workspace_id END) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        PERFORM webhook_event(NEW.workspace_id, 'order.created', jsonb_build_object('order', webhook_order(NEW)));
      ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(name ORDER BY position) INTO changed FROM (VALUES
          ${rows}) AS f(position, name, differs)
        WHERE differs;
        IF changed IS NOT NULL THEN
          PERFORM webhook_event(NEW.workspace_id, 'order.updated',
            jsonb_build_object('order', webhook_order(NEW), 'previous_status', OLD.status, 'changed_fields', to_jsonb(changed)));
        END IF;
      ELSE
        PERFORM webhook_event(OLD.workspace_id, 'order.deleted', jsonb_build_object('order', webhook_order(OLD)));
        RETURN OLD;
      END IF;
      RETURN NULL;
    END $$`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE orders
      ADD COLUMN note text CONSTRAINT orders_note_check CHECK (char_length(note) BETWEEN 1 AND 1000),
      ADD COLUMN city text CONSTRAINT orders_city_check CHECK (char_length(city) BETWEEN 1 AND 200),
      ADD COLUMN external_updated_at timestamptz,
      ALTER COLUMN total_amount TYPE numeric(13, 3)`);
  await knex.raw(WEBHOOK_ORDER);
  await knex.raw(webhookEvents(CHANGED_FIELDS));
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
  await knex.raw(webhookEvents(CHANGED_FIELDS_BEFORE));
  await knex.raw(OLD_WEBHOOK_ORDER);
  await knex.raw('ALTER TABLE orders DROP COLUMN note, DROP COLUMN city, DROP COLUMN external_updated_at, ALTER COLUMN total_amount TYPE numeric(12, 2)');
}
