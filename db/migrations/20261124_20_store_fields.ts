import type { Knex } from 'knex';
import { ordersWebhookEventsSql, webhookOrderSql } from '../order-fields';

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

/** webhook_order's fields before and after: an order as GET /api/orders/:id shows it. */
const WEBHOOK_FIELDS_BEFORE = 'id workspace_id client_name phone store_name products_name address status created_at flags operation_id'.split(' ');
const WEBHOOK_FIELDS = [...WEBHOOK_FIELDS_BEFORE, 'source', 'store_connection_id', 'external_id', 'external_ref', 'total_amount', 'currency'];
/** The amount as text with its two decimals (each currency's own came with migration 20261125_40). */
const AMOUNT_AS_STORED = { total_amount: 'o.total_amount::text' };

/** The fields an order.updated names in `changed_fields`, in this order (status last, as before). */
const CHANGED_FIELDS_BEFORE = ['client_name', 'phone', 'store_name', 'products_name', 'address', 'status'];
// A store's update while pending changes the reference and the amount too: a webhook says so.
const CHANGED_FIELDS = ['client_name', 'phone', 'store_name', 'products_name', 'address', 'external_ref', 'total_amount', 'currency', 'status'];

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
  await knex.raw(webhookOrderSql(WEBHOOK_FIELDS, AMOUNT_AS_STORED));
  await knex.raw(ordersWebhookEventsSql(CHANGED_FIELDS, { seqscanOff: false }));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(ordersWebhookEventsSql(CHANGED_FIELDS_BEFORE, { seqscanOff: false }));
  await knex.raw(webhookOrderSql(WEBHOOK_FIELDS_BEFORE));
  await knex.raw('DROP INDEX orders_store_external_idx');
  await knex.raw(
    'ALTER TABLE orders DROP COLUMN source, DROP COLUMN store_connection_id, DROP COLUMN external_id, DROP COLUMN external_ref, DROP COLUMN total_amount, DROP COLUMN currency',
  );
}
