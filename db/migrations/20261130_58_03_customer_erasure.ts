import type { Knex } from 'knex';

/**
 * Issue 58, item 3 (a customer's request): `orders.anonymised_at`, when an order's personal data
 * was anonymised (services/orders/anonymise.ts); null while it holds them. The retention pass
 * (item 2) marks the orders it anonymises with the same column, hence `IF NOT EXISTS`.
 *
 * `orders_webhook_changes` sends no `order.updated` for the update that anonymises an order (the
 * one that sets `anonymised_at`): an erasure is told to endpoints once, by `customer.erased`, which
 * carries no personal data; an `order.updated` would carry the order. Later changes of an
 * anonymised order (its status) are sent as any order's.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE orders ADD COLUMN IF NOT EXISTS anonymised_at timestamptz');
  await knex.raw('DROP TRIGGER orders_webhook_changes ON orders');
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER orders_webhook_changes AFTER UPDATE ON orders
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
      WHEN (OLD.operation_id IS NOT DISTINCT FROM NEW.operation_id AND OLD.anonymised_at IS NOT DISTINCT FROM NEW.anonymised_at)
      EXECUTE FUNCTION orders_webhook_events()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER orders_webhook_changes ON orders');
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER orders_webhook_changes AFTER UPDATE ON orders
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.operation_id IS NOT DISTINCT FROM NEW.operation_id)
      EXECUTE FUNCTION orders_webhook_events()`);
  await knex.raw('ALTER TABLE orders DROP COLUMN IF EXISTS anonymised_at');
}
