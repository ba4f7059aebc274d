import type { Knex } from 'knex';

/**
 * The search index's pending list back to Postgres's default (4 MB), undoing `20261204_57_70` for
 * every writer: with 64 MB, a database without a running worker (the tests', or production's while
 * its worker is down) kept tens of megabytes pending, and every search read all of them. A
 * carrier's report now raises the limit for its own transactions only (`SET LOCAL
 * gin_pending_list_limit`, services/deliveries/import.ts), and the worker's sweep merges what it
 * left (`tidySearchIndex`, services/orders/search.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER INDEX orders_search_keys_idx RESET (gin_pending_list_limit)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER INDEX orders_search_keys_idx SET (gin_pending_list_limit = 65536)');
}
