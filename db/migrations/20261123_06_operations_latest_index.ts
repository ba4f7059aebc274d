import type { Knex } from 'knex';

/**
 * Every order shown (a page, a search, the Data API) is joined to its latest operation: `ORDER BY
 * created_at DESC, id DESC LIMIT 1` among the operations of its order. With the index in that
 * order, that is the index's first entry; with the index on order_id alone, a sort per order. It
 * replaces that index (order_id still leads, so the foreign key's cascade and every lookup by
 * order use it). Built CONCURRENTLY (outside a transaction): a release does not block writers.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS operations_order_latest_idx');
  await knex.raw('CREATE INDEX CONCURRENTLY operations_order_latest_idx ON operations (order_id, created_at DESC, id DESC)');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS operations_order_id_index');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS operations_order_id_index ON operations (order_id)');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS operations_order_latest_idx');
}
