import type { Knex } from 'knex';

/**
 * The `flag=` filter of the listings: a workspace's flagged orders, newest first, from an index of
 * those alone (most orders have no flag, so it stays small, and an unflagged order costs no entry).
 * The listing's condition repeats the predicate `flags <> '{}'` word for word, which is how the
 * planner knows the index applies. Built CONCURRENTLY (outside a transaction), so a release does
 * not block orders being written.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS orders_flagged_newest_idx');
  await knex.raw("CREATE INDEX CONCURRENTLY orders_flagged_newest_idx ON orders (workspace_id, created_at DESC, id DESC) WHERE flags <> '{}'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS orders_flagged_newest_idx');
}
