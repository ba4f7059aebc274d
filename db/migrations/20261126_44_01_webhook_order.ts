import type { Knex } from 'knex';

/**
 * webhook_order and orders_webhook_events as an order's one definition (db/order-fields.ts) made them
 * then (copied here: a migration means the same forever): the same order and the same changed fields as migrations 20261126_43_01
 * and 20261125_40 gave them (webhook_order's arguments come in the definition's order; a jsonb
 * object has no order of its own). It runs after 20261126_43_01, whose delivery columns it reads.
 */
/** webhook_order with the fields of this migration's time (20261201_56_02 adds the assignment's). */
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

const ORDERS_WEBHOOK_EVENTS = `
    CREATE OR REPLACE FUNCTION orders_webhook_events() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
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
          (6, 'city', NEW.city IS DISTINCT FROM OLD.city),
          (7, 'note', NEW.note IS DISTINCT FROM OLD.note),
          (8, 'external_ref', NEW.external_ref IS DISTINCT FROM OLD.external_ref),
          (9, 'total_amount', NEW.total_amount IS DISTINCT FROM OLD.total_amount),
          (10, 'currency', NEW.currency IS DISTINCT FROM OLD.currency),
          (11, 'status', NEW.status IS DISTINCT FROM OLD.status)) AS f(position, name, differs)
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
  await knex.raw(WEBHOOK_ORDER);
  await knex.raw(ORDERS_WEBHOOK_EVENTS);
}

/** The functions before were the same rules written out by hand: kept as they are now. */
export async function down(): Promise<void> {}
