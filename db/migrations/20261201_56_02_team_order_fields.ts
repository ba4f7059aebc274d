import type { Knex } from 'knex';
import { webhookOrderSql } from '../order-fields';

/**
 * webhook_order gains the order's assignment (`assigned_to`, `assigned_at`) and the day a follow-up
 * call's customer gave (`rescheduled_for`), as the API's JSON does (db/order-fields.ts). An
 * assignment alone sends no `order.updated`: these fields are not among those it names.
 */
const FIELDS_BEFORE = `id workspace_id client_name phone store_name products_name address city note status created_at
  placed_at operation_id flags source store_connection_id external_id external_ref total_amount currency delivery`.split(/\s+/);

export async function up(knex: Knex): Promise<void> {
  await knex.raw(webhookOrderSql([...FIELDS_BEFORE, 'assigned_to', 'assigned_at', 'rescheduled_for']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(webhookOrderSql(FIELDS_BEFORE));
}
