import type { Knex } from 'knex';

/**
 * Issue 57, item 3: /stats/team's pay view and saved parcels read calls and operations by
 * workspace, and no index led there: each request read every call, or every operation, of the
 * database (54 and 141 ms on a database of 100,000 orders, the same for a shop of 100 orders).
 *
 * - `calls_human_ended_idx`: a workspace's ended calls of its members, by their end (the pay view's
 *   confirmed orders).
 * - `operations_follow_up_idx`: a workspace's follow-up operations (saved parcels).
 *
 * The pay view's delivered orders are read from the delivery counters now (StatsService), not from
 * the orders: no index on a delivery column is needed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("CREATE INDEX calls_human_ended_idx ON calls (workspace_id, ended_at) WHERE kind = 'human' AND dropped_at IS NULL AND outcome IS NOT NULL");
  await knex.raw("CREATE INDEX operations_follow_up_idx ON operations (workspace_id) WHERE purpose = 'follow_up'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX operations_follow_up_idx');
  await knex.raw('DROP INDEX calls_human_ended_idx');
}
