import type { Knex } from 'knex';

/**
 * A number per workspace that grows whenever what a text search can find among its orders changes:
 * an order comes or goes, or an order's search text changes. services/orders/search.ts remembers a
 * search's count under it, so that paging through a search, or coming back to it, does not count
 * thousands of orders again while none of them changed; a changed status, flag or delivery leaves
 * it alone (a search's count without those filters does not depend on them).
 *
 * - Eight rows per workspace at most (`shard`, the writing connection's process id modulo 8), so
 *   that two connections writing orders of one workspace rarely wait for the same row; the version
 *   is their sum, which grows with every committed change.
 * - Kept once per statement (transition tables), whatever the number of rows it writes, in
 *   workspace order so that two statements writing several workspaces lock rows in the same order.
 * - Orders deleted with their workspace take its rows with them. No foreign key to workspaces: the
 *   orders of a workspace being deleted go after it, in the same statement.
 */
const BUMP = (source: string, where = '') => `
  INSERT INTO order_search_versions AS v (workspace_id, shard)
  SELECT DISTINCT s.workspace_id, (pg_backend_pid() % 8)::smallint FROM (${source}) s${where}
   ORDER BY 1
  ON CONFLICT (workspace_id, shard) DO UPDATE SET version = v.version + 1;`;

const FUNCTION = `
  CREATE FUNCTION orders_bump_search_version() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${BUMP('SELECT workspace_id FROM new_rows')}
    ELSIF TG_OP = 'DELETE' THEN
      ${BUMP('SELECT workspace_id FROM old_rows', ' WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = s.workspace_id)')}
      DELETE FROM order_search_versions v
       WHERE v.workspace_id IN (SELECT workspace_id FROM old_rows)
         AND NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = v.workspace_id);
    ELSIF TG_OP = 'UPDATE' THEN
      ${BUMP(`SELECT n.workspace_id FROM new_rows n JOIN old_rows o ON o.id = n.id
               WHERE n.search_text IS DISTINCT FROM o.search_text OR n.workspace_id <> o.workspace_id`)}
    ELSE
      UPDATE order_search_versions SET version = version + 1;
    END IF;
    RETURN NULL;
  END $$`;

/** Each event's trigger, with the transition tables its function reads. */
const TRIGGERS = [
  ['insert', 'REFERENCING NEW TABLE AS new_rows'],
  ['update', 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows'],
  ['delete', 'REFERENCING OLD TABLE AS old_rows'],
  ['truncate', ''],
] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE order_search_versions (
      workspace_id uuid NOT NULL,
      shard smallint NOT NULL CHECK (shard BETWEEN 0 AND 7),
      version bigint NOT NULL DEFAULT 1,
      PRIMARY KEY (workspace_id, shard)
    )`);
  await knex.raw(FUNCTION);
  for (const [event, tables] of TRIGGERS) {
    await knex.raw(
      `CREATE TRIGGER orders_search_version_${event} AFTER ${event.toUpperCase()} ON orders ${tables} FOR EACH STATEMENT EXECUTE FUNCTION orders_bump_search_version()`,
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [event] of TRIGGERS) await knex.raw(`DROP TRIGGER orders_search_version_${event} ON orders`);
  await knex.raw('DROP FUNCTION orders_bump_search_version()');
  await knex.raw('DROP TABLE order_search_versions');
}
