import type { Knex } from 'knex';

/**
 * Each order carries the id of its current operation (its latest: `ORDER BY created_at DESC, id
 * DESC` among its operations, null while it has none), so that a page, a search or the Data API
 * reads it with the order instead of looking it up in operations for each order shown.
 *
 * A trigger on operations keeps it: after each operation inserted (once its statement is done, so
 * with every operation the statement wrote), its order gets its latest operation's id (the same
 * ORDER BY, so the column is always what the lookup would give). A new order is written with its
 * first operation's id already in it (see createOrdersSql), which the trigger finds right and
 * leaves alone; a requeue's operation is set by the trigger. Operations never change in a way that
 * changes which is latest (their order and time are never updated) and are deleted only with their
 * order.
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
  // For each new operation, its order: one index probe when the order already names it (a new
  // order's first operation, written that way), else the order set to its latest operation. A row
  // trigger, so that a statement inserting 20,000 operations costs 20,000 probes whatever the
  // planner would make of a join with a table of a million orders.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION orders_mark_latest_operation() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE latest uuid;
    BEGIN
      IF (SELECT operation_id FROM orders WHERE id = NEW.order_id) IS NOT DISTINCT FROM NEW.id THEN RETURN NULL; END IF;
      SELECT id INTO latest FROM operations WHERE order_id = NEW.order_id ORDER BY created_at DESC, id DESC LIMIT 1;
      UPDATE orders SET operation_id = latest WHERE id = NEW.order_id AND operation_id IS DISTINCT FROM latest;
      RETURN NULL;
    END $$`);
  await knex.raw('DROP TRIGGER IF EXISTS operations_mark_latest ON operations');
  await knex.raw('CREATE TRIGGER operations_mark_latest AFTER INSERT ON operations FOR EACH ROW EXECUTE FUNCTION orders_mark_latest_operation()');
  // A range of the primary key at a time (an index scan, however large the table).
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = await knex.raw('SELECT id FROM (SELECT id FROM orders WHERE id > ?::uuid ORDER BY id LIMIT ?) batch ORDER BY id DESC LIMIT 1', [
      after,
      BATCH,
    ]);
    if (rows.length === 0) return;
    const last: string = rows[0].id;
    await knex.raw(
      `UPDATE orders o SET operation_id = (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1)
        WHERE o.id > ?::uuid AND o.id <= ?::uuid AND o.operation_id IS NULL AND EXISTS (SELECT 1 FROM operations WHERE order_id = o.id)`,
      [after, last],
    );
    after = last;
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS operations_mark_latest ON operations');
  await knex.raw('DROP FUNCTION IF EXISTS orders_mark_latest_operation()');
  await knex.raw('ALTER TABLE orders DROP COLUMN IF EXISTS operation_id');
}
