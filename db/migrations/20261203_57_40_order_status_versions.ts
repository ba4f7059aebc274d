import type { Knex } from 'knex';

/**
 * A second number beside each workspace's search version: `status_version`, which grows whenever an
 * order of the workspace changes status. services/orders/search.ts remembers the /orders chips'
 * counts of a search (its matches by status) under both numbers: the first says which orders match,
 * the second that none of them changed status since. Kept by the same statement triggers, in the
 * same upsert (one per statement, as before): an UPDATE that changes a search text raises `version`,
 * one that changes a status raises `status_version`, one that changes neither writes nothing.
 * A new shard row starts from what its statement changed (0 or 1 each), so that the sums grow by
 * exactly the statements that changed something.
 */
const BUMP = (source: string, where = '') => `
  INSERT INTO order_search_versions AS v (workspace_id, shard)
  SELECT DISTINCT s.workspace_id, (pg_backend_pid() % 8)::smallint FROM (${source}) s${where}
   ORDER BY 1
  ON CONFLICT (workspace_id, shard) DO UPDATE SET version = v.version + 1;`;

const UPDATED = `
  INSERT INTO order_search_versions AS v (workspace_id, shard, version, status_version)
  SELECT s.workspace_id, (pg_backend_pid() % 8)::smallint, bool_or(s.text)::int, bool_or(s.status)::int
    FROM (SELECT n.workspace_id,
                 n.search_text IS DISTINCT FROM o.search_text OR n.workspace_id <> o.workspace_id AS text,
                 n.status IS DISTINCT FROM o.status AS status
            FROM new_rows n JOIN old_rows o ON o.id = n.id) s
   WHERE s.text OR s.status
   GROUP BY s.workspace_id
   ORDER BY 1
  ON CONFLICT (workspace_id, shard) DO UPDATE
    SET version = v.version + excluded.version, status_version = v.status_version + excluded.status_version;`;

const FUNCTION = (update: string) => `
  CREATE OR REPLACE FUNCTION orders_bump_search_version() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${BUMP('SELECT workspace_id FROM new_rows')}
    ELSIF TG_OP = 'DELETE' THEN
      ${BUMP('SELECT workspace_id FROM old_rows', ' WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = s.workspace_id)')}
      DELETE FROM order_search_versions v
       WHERE v.workspace_id IN (SELECT workspace_id FROM old_rows)
         AND NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = v.workspace_id);
    ELSIF TG_OP = 'UPDATE' THEN
      ${update}
    ELSE
      UPDATE order_search_versions SET version = version + 1;
    END IF;
    RETURN NULL;
  END $$`;

/** The UPDATE branch before this migration (20261126_64). */
const UPDATED_BEFORE = BUMP(`SELECT n.workspace_id FROM new_rows n JOIN old_rows o ON o.id = n.id
               WHERE n.search_text IS DISTINCT FROM o.search_text OR n.workspace_id <> o.workspace_id`);

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE order_search_versions ADD COLUMN status_version bigint NOT NULL DEFAULT 0');
  await knex.raw(FUNCTION(UPDATED));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(FUNCTION(UPDATED_BEFORE));
  await knex.raw('ALTER TABLE order_search_versions DROP COLUMN status_version');
}
