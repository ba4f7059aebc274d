import type { Knex } from 'knex';

/**
 * webhook_order gains the order's assignment (`assigned_to`, `assigned_at`) and the day a follow-up
 * call's customer gave (`rescheduled_for`), as the API's JSON does (db/order-fields.ts). An
 * assignment alone sends no `order.updated`: these fields are not among those it names.
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
        'carrier_status', o.delivery_carrier_status, 'updated_at', o.delivery_at) END,
      'assigned_to', o.assigned_to,
      'assigned_at', o.assigned_at,
      'rescheduled_for', o.rescheduled_for)
  $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(WEBHOOK_ORDER);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(WEBHOOK_ORDER_BEFORE);
}
