import type { Knex } from 'knex';

/**
 * The pg_trgm index of 20261123_01 (rebuilt by 20261125_40) is no longer read: every search goes
 * through services/orders/search.ts, which asks the search keys' index (orders_search_keys_idx) for
 * candidates, or walks the newest orders when a search has no keys (under three characters, where
 * trigrams cannot help either) or when its matches are frequent. Each order still paid for it: about
 * a hundred trigram entries at every insert and at every update that is not HOT. One INSERT … SELECT
 * of 20,000 orders with their operations took 5.4–6.8 s with it and 3.9–4.1 s without (the same
 * database, in turn). Dropped CONCURRENTLY (outside a transaction): orders keep being written.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS orders_search_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_search_idx ON orders USING gin (workspace_id, search_text gin_trgm_ops)');
}
