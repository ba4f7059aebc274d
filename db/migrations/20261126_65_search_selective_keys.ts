import type { Knex } from 'knex';

/**
 * A search's keys without those that name many orders, when a rarer one is left (services/orders/
 * search.ts reads which keys are common from the statistics of orders_search_keys_idx). Each key
 * of a search is a condition every match meets, so leaving some out never loses a match: the
 * candidates are still tested against the search text. What it saves is reading the long lists of
 * the search index: "42 rue mohammed" in a shop whose every address is on Rue Mohammed V read the
 * 66,000 orders of "rue moha" to keep the 660 of "~42 ru". With only common keys, all are kept.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION search_selective_keys(keys int[], common int[]) RETURNS int[]
      LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT CASE WHEN rare = '{}' THEN keys ELSE rare END
        FROM (SELECT array(SELECT k FROM unnest(keys) k WHERE k <> ALL (common)) AS rare) r
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION search_selective_keys(int[], int[])');
}
