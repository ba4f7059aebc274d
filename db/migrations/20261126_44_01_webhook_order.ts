import type { Knex } from 'knex';
import { CHANGED_FIELDS, ordersWebhookEventsSql, webhookOrderSql } from '../order-fields';

/**
 * webhook_order and orders_webhook_events made from an order's one definition (db/order-fields.ts)
 * instead of written out: the same order and the same changed fields as migrations 20261126_43_01
 * and 20261125_40 gave them (webhook_order's arguments come in the definition's order; a jsonb
 * object has no order of its own). It runs after 20261126_43_01, whose delivery columns it reads.
 */
/** webhook_order's fields at this migration's time (20261201_56_02 adds the assignment's). */
const WEBHOOK_FIELDS_THEN = `id workspace_id client_name phone store_name products_name address city note status created_at
  placed_at operation_id flags source store_connection_id external_id external_ref total_amount currency delivery`.split(/\s+/);

export async function up(knex: Knex): Promise<void> {
  await knex.raw(webhookOrderSql(WEBHOOK_FIELDS_THEN));
  await knex.raw(ordersWebhookEventsSql(CHANGED_FIELDS, { seqscanOff: true }));
}

/** The functions before were the same rules written out by hand: kept as they are now. */
export async function down(): Promise<void> {}
