import type { Knex } from 'knex';

/**
 * What a store knows about an order: where it came from, the store's own
 * id and name for it, and the amount to collect.
 *
 * `source` keeps its constant default so that existing orders read `api` without a table rewrite
 * (they all came through the API or forms before sources were recorded); new orders name theirs.
 * `store_connection_id` has no foreign key: a deleted connection leaves its orders as they were.
 * The unique index is what makes a store's retries and parallel deliveries create one order.
 */
// Frozen here: a later change to the list needs a migration of its own.
const SOURCES = ['form', 'api', 'data_api', 'import', 'shopify', 'woocommerce', 'youcan', 'custom'];

/**
 * webhook_order before and after: an order as GET /api/orders/:id shows it, now with the store's
 * fields. The amount as text with its two decimals (each currency's own came with migration 20261125_40).
 */
const WEBHOOK_ORDER_BEFORE = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id,
      'workspace_id', o.workspace_id,
      'client_name', o.client_name,
      'phone', o.phone,
      'store_name', o.store_name,
      'products_name', o.products_name,
      'address', o.address,
      'status', o.status,
      'created_at', o.created_at,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1),
      'flags', to_jsonb(o.flags))
  $$`;
const WEBHOOK_ORDER = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id,
      'workspace_id', o.workspace_id,
      'client_name', o.client_name,
      'phone', o.phone,
      'store_name', o.store_name,
      'products_name', o.products_name,
      'address', o.address,
      'status', o.status,
      'created_at', o.created_at,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1),
      'flags', to_jsonb(o.flags),
      'source', o.source,
      'store_connection_id', o.store_connection_id,
      'external_id', o.external_id,
      'external_ref', o.external_ref,
      'total_amount', o.total_amount::text,
      'currency', o.currency)
  $$`;

/**
 * The fields an order.updated names in `changed_fields`, in this order (status last, as before). A
 * store's update while pending changes the reference and the amount too: a webhook says so.
 */
const ORDERS_WEBHOOK_EVENTS_BEFORE = `
    CREATE OR REPLACE FUNCTION orders_webhook_events() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE changed text[];
    BEGIN
      -- Most workspaces have no endpoint: one index probe, nothing built.
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace_id ELSE NEW.workspace_id END) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        PERFORM webhook_event(NEW.workspace_id, 'order.created', jsonb_build_object('order', webhook_order(NEW)));
      ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(name ORDER BY position) INTO changed FROM (VALUES
          (1, 'client_name', NEW.client_name IS DISTINCT FROM OLD.client_name),
          (2, 'phone', NEW.phone IS DISTINCT FROM OLD.phone),
          (3, 'store_name', NEW.store_name IS DISTINCT FROM OLD.store_name),
          (4, 'products_name', NEW.products_name IS DISTINCT FROM OLD.products_name),
          (5, 'address', NEW.address IS DISTINCT FROM OLD.address),
          (6, 'status', NEW.status IS DISTINCT FROM OLD.status)) AS f(position, name, differs)
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
const ORDERS_WEBHOOK_EVENTS = `
    CREATE OR REPLACE FUNCTION orders_webhook_events() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE changed text[];
    BEGIN
      -- Most workspaces have no endpoint: one index probe, nothing built.
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace_id ELSE NEW.workspace_id END) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        PERFORM webhook_event(NEW.workspace_id, 'order.created', jsonb_build_object('order', webhook_order(NEW)));
      ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(name ORDER BY position) INTO changed FROM (VALUES
          (1, 'client_name', NEW.client_name IS DISTINCT FROM OLD.client_name),
          (2, 'phone', NEW.phone IS DISTINCT FROM OLD.phone),
          (3, 'store_name', NEW.store_name IS DISTINCT FROM OLD.store_name),
          (4, 'products_name', NEW.products_name IS DISTINCT FROM OLD.products_name),
          (5, 'address', NEW.address IS DISTINCT FROM OLD.address),
          (6, 'external_ref', NEW.external_ref IS DISTINCT FROM OLD.external_ref),
          (7, 'total_amount', NEW.total_amount IS DISTINCT FROM OLD.total_amount),
          (8, 'currency', NEW.currency IS DISTINCT FROM OLD.currency),
          (9, 'status', NEW.status IS DISTINCT FROM OLD.status)) AS f(position, name, differs)
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

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE orders
      ADD COLUMN source text NOT NULL DEFAULT 'api' CONSTRAINT orders_source_check CHECK (source IN (${SOURCES.map((s) => `'${s}'`).join(', ')})),
      ADD COLUMN store_connection_id uuid,
      ADD COLUMN external_id text CONSTRAINT orders_external_id_check CHECK (char_length(external_id) BETWEEN 1 AND 200),
      ADD COLUMN external_ref text CONSTRAINT orders_external_ref_check CHECK (char_length(external_ref) BETWEEN 1 AND 200),
      ADD COLUMN total_amount numeric(12, 2) CONSTRAINT orders_total_amount_check CHECK (total_amount >= 0),
      ADD COLUMN currency text CONSTRAINT orders_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
      ADD CONSTRAINT orders_store_external_check CHECK (store_connection_id IS NULL OR external_id IS NOT NULL)`);
  await knex.raw('CREATE UNIQUE INDEX orders_store_external_idx ON orders (store_connection_id, external_id) WHERE store_connection_id IS NOT NULL');
  // Later migrations replace both functions (20261126_44_01 last).
  await knex.raw(WEBHOOK_ORDER);
  await knex.raw(ORDERS_WEBHOOK_EVENTS);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(ORDERS_WEBHOOK_EVENTS_BEFORE);
  await knex.raw(WEBHOOK_ORDER_BEFORE);
  await knex.raw('DROP INDEX orders_store_external_idx');
  await knex.raw(
    'ALTER TABLE orders DROP COLUMN source, DROP COLUMN store_connection_id, DROP COLUMN external_id, DROP COLUMN external_ref, DROP COLUMN total_amount, DROP COLUMN currency',
  );
}
