import type { Knex } from 'knex';

/**
 * Retention (issue 58, item 2): a workspace keeps its customers' details `retention_months` after an
 * order's last change (default 24, between 3 and 120); the worker's daily pass then anonymises the
 * order (services/orders/retention.ts).
 *
 * - `workspaces.retention_months`: the setting.
 * - `orders.anonymised_at`: when the order's customer details were anonymised; a pass never takes
 *   an order twice, and the order page says so.
 * - `orders.changed_at`: when the order's row last changed (an edit, a status, a call ending, a
 *   delivery), kept by `orders_mark_changed` (unless the statement sets it, or anonymises the
 *   order); null for a row not changed since this migration, whose last change is then read from
 *   its timestamps and its calls.
 * - `orders_retention_idx`: the orders a pass may still take, oldest first, per workspace.
 * - `orders_webhook_changes` no longer fires for the update that anonymises an order: retention is
 *   not a change the shop's endpoints are told about.
 */
const WEBHOOK_CHANGES = (when: string) => `
  CREATE CONSTRAINT TRIGGER orders_webhook_changes AFTER UPDATE ON orders DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION orders_webhook_events()`;
const SAME_OPERATION = 'OLD.operation_id IS NOT DISTINCT FROM NEW.operation_id';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE workspaces ADD COLUMN retention_months integer NOT NULL DEFAULT 24
      CONSTRAINT workspaces_retention_months_check CHECK (retention_months BETWEEN 3 AND 120)`);
  await knex.raw('ALTER TABLE orders ADD COLUMN anonymised_at timestamptz, ADD COLUMN changed_at timestamptz');
  await knex.raw('CREATE INDEX orders_retention_idx ON orders (workspace_id, created_at) WHERE anonymised_at IS NULL');
  await knex.raw(`
    CREATE FUNCTION orders_mark_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.changed_at := now();
      RETURN NEW;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER orders_mark_changed BEFORE UPDATE ON orders FOR EACH ROW
      WHEN (OLD.anonymised_at IS NOT DISTINCT FROM NEW.anonymised_at AND OLD.changed_at IS NOT DISTINCT FROM NEW.changed_at) EXECUTE FUNCTION orders_mark_changed()`);
  await knex.raw('DROP TRIGGER orders_webhook_changes ON orders');
  await knex.raw(WEBHOOK_CHANGES(`${SAME_OPERATION} AND NOT (OLD.anonymised_at IS NULL AND NEW.anonymised_at IS NOT NULL)`));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER orders_webhook_changes ON orders');
  await knex.raw(WEBHOOK_CHANGES(SAME_OPERATION));
  await knex.raw('DROP TRIGGER orders_mark_changed ON orders');
  await knex.raw('DROP FUNCTION orders_mark_changed()');
  await knex.raw('DROP INDEX orders_retention_idx');
  await knex.raw('ALTER TABLE orders DROP COLUMN anonymised_at, DROP COLUMN changed_at');
  await knex.raw('ALTER TABLE workspaces DROP COLUMN retention_months');
}
