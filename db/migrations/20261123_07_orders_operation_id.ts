import type { Knex } from 'knex';

/**
 * Each order carries the id of its current operation (its latest: `ORDER BY created_at DESC, id
 * DESC` among its operations, null while it has none), so that a page, a search or the Data API
 * reads it with the order instead of looking it up in operations for each order shown.
 *
 * A trigger on operations keeps it: after any statement that inserts operations, the orders they
 * belong to get their latest operation's id (the same ORDER BY, so the column is always what the
 * lookup would give). A new order is written with its first operation's id already in it (see
 * createOrdersSql), which the trigger finds right and leaves alone; a requeue's operation is set
 * by the trigger. Operations never change in a way that changes which is latest (their order and
 * time are never updated) and are deleted only with their order.
 *
 * Outside a transaction, so that a release neither holds a lock on orders nor runs into the
 * statement timeout on a large table: the trigger first (from then on every new operation sets its
 * order, whichever code is running), then the orders that have operations, 5,000 at a time by id.
 * The backfill only fills a column still empty: an order that a new operation set meanwhile keeps
 * what the trigger wrote (Postgres re-checks the condition on a row changed while it waited for it).
 * It can be run again after an interruption.
 */
export const config = { transaction: false };

const BATCH = 5000;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE orders ADD COLUMN IF NOT EXISTS operation_id uuid');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION orders_mark_latest_operation() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE orders o SET operation_id = latest.id
        FROM (SELECT DISTINCT n.order_id
                FROM new_operations n JOIN orders x ON x.id = n.order_id
               WHERE x.operation_id IS DISTINCT FROM n.id) changed
        CROSS JOIN LATERAL (
          SELECT id FROM operations WHERE order_id = changed.order_id ORDER BY created_at DESC, id DESC LIMIT 1
        ) latest
       WHERE o.id = changed.order_id AND o.operation_id IS DISTINCT FROM latest.id;
      RETURN NULL;
    END $$`);
  await knex.raw('DROP TRIGGER IF EXISTS operations_mark_latest ON operations');
  await knex.raw(`
    CREATE TRIGGER operations_mark_latest AFTER INSERT ON operations
      REFERENCING NEW TABLE AS new_operations FOR EACH STATEMENT EXECUTE FUNCTION orders_mark_latest_operation()`);
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = await knex.raw(
      `WITH batch AS (
         SELECT id FROM orders WHERE id > ?::uuid ORDER BY id LIMIT ?
       ), filled AS (
         UPDATE orders o SET operation_id = (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1)
           FROM batch
          WHERE o.id = batch.id AND o.operation_id IS NULL AND EXISTS (SELECT 1 FROM operations WHERE order_id = o.id)
       )
       SELECT id FROM batch ORDER BY id DESC LIMIT 1`,
      [after, BATCH],
    );
    if (rows.length === 0) return;
    after = rows[0].id;
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS operations_mark_latest ON operations');
  await knex.raw('DROP FUNCTION IF EXISTS orders_mark_latest_operation()');
  await knex.raw('ALTER TABLE orders DROP COLUMN IF EXISTS operation_id');
}
