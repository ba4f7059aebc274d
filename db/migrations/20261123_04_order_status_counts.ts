import type { Knex } from 'knex';

/**
 * The count of each status per workspace, kept by triggers, so the /orders page reads ten numbers
 * instead of counting 100,000 rows. Rows are deltas (+n/−n per statement, never updated in place),
 * so concurrent writers never wait on one counter row; the worker folds them together now and then.
 * The sum of a workspace's rows per status is always the true count.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE order_status_counts (
      workspace_id uuid NOT NULL,
      status text NOT NULL,
      n bigint NOT NULL
    )`);
  await knex.raw('CREATE INDEX order_status_counts_workspace_idx ON order_status_counts (workspace_id)');
  await knex.raw(`
    CREATE FUNCTION orders_count_statuses() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO order_status_counts (workspace_id, status, n)
          SELECT workspace_id, status, count(*) FROM new_rows GROUP BY workspace_id, status;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO order_status_counts (workspace_id, status, n)
          SELECT workspace_id, status, -count(*) FROM old_rows GROUP BY workspace_id, status;
      ELSE
        INSERT INTO order_status_counts (workspace_id, status, n)
          SELECT workspace_id, status, sum(d) FROM (
            SELECT workspace_id, status, 1 AS d FROM new_rows
            UNION ALL
            SELECT workspace_id, status, -1 AS d FROM old_rows) changes
          GROUP BY workspace_id, status HAVING sum(d) <> 0;
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(
    'CREATE TRIGGER orders_count_insert AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_count_statuses()',
  );
  await knex.raw(
    'CREATE TRIGGER orders_count_update AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_count_statuses()',
  );
  await knex.raw(
    'CREATE TRIGGER orders_count_delete AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_count_statuses()',
  );
  await knex.raw('LOCK TABLE orders IN SHARE MODE');
  await knex.raw('INSERT INTO order_status_counts (workspace_id, status, n) SELECT workspace_id, status, count(*) FROM orders GROUP BY workspace_id, status');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER orders_count_delete ON orders');
  await knex.raw('DROP TRIGGER orders_count_update ON orders');
  await knex.raw('DROP TRIGGER orders_count_insert ON orders');
  await knex.raw('DROP FUNCTION orders_count_statuses()');
  await knex.raw('DROP TABLE order_status_counts');
}
