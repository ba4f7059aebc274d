import type { Knex } from 'knex';

/**
 * What happened at the door: an order's delivery, its history, and the counts the statistics read.
 *
 * - The current delivery lives on the order's row (`delivery_*` columns), so every representation
 *   (lists, the order, webhook_order) reads it without a join. `delivery_at` is the time of the last
 *   event applied; `delivery_confirmer_*` is who confirmed the order by a call when its delivery was
 *   last written (kind and user id for a member, agent id for a voice or WhatsApp agent; null: nobody).
 * - `delivery_events`: every event received, applied or not (an event older than the last one
 *   applied is kept without changing the order), with its source and who or what sent it.
 * - `delivery_counts`: per workspace, Morocco day, store, city, currency, final status and
 *   confirmer, how many orders' deliveries ended there and their amounts. Rows are deltas written once
 *   per statement by orders_count_deliveries (transition tables, as order_status_counts); the worker
 *   folds them. /stats and /stats/team read these instead of the orders.
 * - Endpoints that took every event type get the new `order.delivery_updated`.
 */
// Frozen here: a later change to a list needs a migration of its own.
const STATUSES = ['shipped', 'in_transit', 'out_for_delivery', 'delivered', 'refused', 'returned', 'lost'];
const FINAL = ['delivered', 'refused', 'returned', 'lost'];
const SOURCES = ['person', 'import', 'carrier', 'store'];
const EVENTS_BEFORE = ['order.created', 'order.updated', 'order.deleted', 'call.ended', 'webhook.test'];
const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

/** webhook_order before and after: the order's delivery is added. */
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
      'city', o.city,
      'note', o.note,
      'status', o.status,
      'created_at', o.created_at,
      'placed_at', o.placed_at,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1),
      'flags', to_jsonb(o.flags),
      'source', o.source,
      'store_connection_id', o.store_connection_id,
      'external_id', o.external_id,
      'external_ref', o.external_ref,
      'total_amount', round(o.total_amount, currency_minor_units(o.currency))::text,
      'currency', o.currency)
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
      'city', o.city,
      'note', o.note,
      'status', o.status,
      'created_at', o.created_at,
      'placed_at', o.placed_at,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1),
      'flags', to_jsonb(o.flags),
      'source', o.source,
      'store_connection_id', o.store_connection_id,
      'external_id', o.external_id,
      'external_ref', o.external_ref,
      'total_amount', round(o.total_amount, currency_minor_units(o.currency))::text,
      'currency', o.currency,
      'delivery', CASE WHEN o.delivery_status IS NULL THEN NULL ELSE jsonb_build_object(
        'status', o.delivery_status, 'carrier', o.delivery_carrier, 'tracking_number', o.delivery_tracking_number,
        'carrier_status', o.delivery_carrier_status, 'updated_at', o.delivery_at) END)
  $$`;

/** One counted row's key and its sign: the rows of old_rows / new_rows whose delivery is final. */
const COUNTED = (table: string, sign: string) => `
  SELECT workspace_id, (delivery_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, coalesce(city, '') AS city,
         coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
         delivery_confirmer_id AS confirmer_id, ${sign} AS n, ${sign} * coalesce(total_amount, 0) AS amount
    FROM ${table} WHERE delivery_status IN (${list(FINAL)})`;

const COUNT_DELIVERIES = `
  CREATE FUNCTION orders_count_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'UPDATE' THEN
      INSERT INTO delivery_counts (workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
        SELECT workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM (
          ${COUNTED('new_rows', '1')} UNION ALL ${COUNTED('old_rows', '-1')}) changes
        GROUP BY workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id
        HAVING sum(n) <> 0 OR sum(amount) <> 0;
    ELSE
      INSERT INTO delivery_counts (workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
        SELECT workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM (
          ${COUNTED('old_rows', '-1')}) changes
        GROUP BY workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id;
    END IF;
    RETURN NULL;
  END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE orders
      ADD COLUMN delivery_status text CONSTRAINT orders_delivery_status_check CHECK (delivery_status IN (${list(STATUSES)})),
      ADD COLUMN delivery_carrier text CONSTRAINT orders_delivery_carrier_check CHECK (char_length(delivery_carrier) BETWEEN 1 AND 100),
      ADD COLUMN delivery_tracking_number text CONSTRAINT orders_delivery_tracking_check CHECK (char_length(delivery_tracking_number) BETWEEN 1 AND 100),
      ADD COLUMN delivery_carrier_status text CONSTRAINT orders_delivery_carrier_status_check CHECK (char_length(delivery_carrier_status) <= 200),
      ADD COLUMN delivery_at timestamptz,
      ADD COLUMN delivery_confirmer_kind text CONSTRAINT orders_delivery_confirmer_check CHECK (delivery_confirmer_kind IN ('human', 'voice', 'whatsapp')),
      ADD COLUMN delivery_confirmer_id uuid,
      ADD CONSTRAINT orders_delivery_at_check CHECK ((delivery_status IS NULL) = (delivery_at IS NULL))`);
  await knex.raw(
    'CREATE UNIQUE INDEX orders_delivery_tracking_idx ON orders (workspace_id, delivery_tracking_number) WHERE delivery_tracking_number IS NOT NULL',
  );

  await knex.raw(`
    CREATE TABLE delivery_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      order_id uuid NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN (${list(STATUSES)})),
      carrier_status text CHECK (char_length(carrier_status) <= 200),
      at timestamptz NOT NULL,
      received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      source text NOT NULL CHECK (source IN (${list(SOURCES)})),
      by text CHECK (char_length(by) <= 300),
      applied boolean NOT NULL
    )`);
  await knex.raw('CREATE INDEX delivery_events_order_idx ON delivery_events (order_id, at, received_at)');

  await knex.raw(`
    CREATE TABLE delivery_counts (
      workspace_id uuid NOT NULL,
      day date NOT NULL,
      store_name text NOT NULL,
      city text NOT NULL,
      currency text NOT NULL,
      status text NOT NULL,
      confirmer_kind text NOT NULL,
      confirmer_id uuid,
      n bigint NOT NULL,
      amount numeric NOT NULL
    )`);
  await knex.raw('CREATE INDEX delivery_counts_workspace_day_idx ON delivery_counts (workspace_id, day)');
  await knex.raw(COUNT_DELIVERIES);
  await knex.raw(`
    CREATE TRIGGER orders_count_deliveries AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION orders_count_deliveries()`);
  await knex.raw(`
    CREATE TRIGGER orders_count_deliveries_delete AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION orders_count_deliveries()`);

  // A later migration replaces it (20261126_44_01).
  await knex.raw(WEBHOOK_ORDER);
  await knex.raw(
    `UPDATE webhook_endpoints SET events = events || '{order.delivery_updated}'::text[]
      WHERE events @> ARRAY[${list(EVENTS_BEFORE)}]::text[] AND NOT 'order.delivery_updated' = ANY(events)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("UPDATE webhook_endpoints SET events = array_remove(events, 'order.delivery_updated')");
  await knex.raw("DELETE FROM webhook_endpoints WHERE events = '{}'");
  await knex.raw(WEBHOOK_ORDER_BEFORE);
  await knex.raw('DROP TRIGGER orders_count_deliveries_delete ON orders');
  await knex.raw('DROP TRIGGER orders_count_deliveries ON orders');
  await knex.raw('DROP FUNCTION orders_count_deliveries()');
  await knex.raw('DROP TABLE delivery_counts');
  await knex.raw('DROP TABLE delivery_events');
  await knex.raw(`
    ALTER TABLE orders
      DROP CONSTRAINT orders_delivery_at_check,
      DROP COLUMN delivery_status, DROP COLUMN delivery_carrier, DROP COLUMN delivery_tracking_number,
      DROP COLUMN delivery_carrier_status, DROP COLUMN delivery_at, DROP COLUMN delivery_confirmer_kind, DROP COLUMN delivery_confirmer_id`);
}
