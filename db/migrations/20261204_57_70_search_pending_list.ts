import type { Knex } from 'knex';

/**
 * The search index's pending list may hold 64 MB before the writer that fills it has to merge it
 * into the index (Postgres's default: 4 MB). A carrier's report rewrites every row it changes, so
 * each of its orders adds its ~80 search keys again; with 4 MB, every other batch of 1,000 rows
 * merged the list in the middle of the request (a third of a 20,000-row report's time). The worker's
 * sweep merges what is pending every 15 seconds instead (services/orders/search.ts,
 * `tidySearchIndex`): one merge of a whole report costs less than ten small ones, and no request
 * waits for it. A search reads the pending list as well, so it finds what waits there.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER INDEX orders_search_keys_idx SET (gin_pending_list_limit = 65536)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER INDEX orders_search_keys_idx RESET (gin_pending_list_limit)');
}
