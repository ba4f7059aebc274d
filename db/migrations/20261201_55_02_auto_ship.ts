import type { Knex } from 'knex';

/**
 * What the carrier accounts must hear of an order, whoever changes it (docs/carriers.md 3):
 * - `auto_ship_orders`: an order that became `confirmed` in a workspace with an account that ships
 *   by itself (`auto_ship`). `orders_auto_ship` writes it (once per order ever: the primary key); the
 *   worker's minute pass ships it (services/shipping/auto.ts) and sets `done_at`.
 * - `parcels.cancel_requested_at`: the order of a live parcel was cancelled (its status became
 *   `unconfirmed`: the customer declined it) or deleted;
 *   `orders_cancel_parcels` sets it (before the delete, while the parcel still names its order), and
 *   the same pass cancels the parcel at the carrier where the kind can, or sets `cancel_at_carrier`:
 *   the order page tells the shop to cancel it there (with the carrier's reason, if it gave one).
 * Both functions are in sight in services/shipping/README.md; their triggers fire only on the status
 * changes they are about (their WHEN), so an import of pending orders never calls them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE auto_ship_orders (
      order_id uuid PRIMARY KEY REFERENCES orders(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      queued_at timestamptz NOT NULL DEFAULT now(),
      done_at timestamptz
    )`);
  await knex.raw('CREATE INDEX auto_ship_orders_due_idx ON auto_ship_orders (queued_at) WHERE done_at IS NULL');
  await knex.raw('CREATE INDEX carrier_accounts_auto_ship_idx ON carrier_accounts (workspace_id) WHERE auto_ship');
  await knex.raw('ALTER TABLE parcels ADD COLUMN cancel_requested_at timestamptz');
  await knex.raw('ALTER TABLE parcels ADD COLUMN cancel_at_carrier boolean NOT NULL DEFAULT false');
  await knex.raw('CREATE INDEX parcels_cancel_idx ON parcels (cancel_requested_at) WHERE cancel_requested_at IS NOT NULL');
  await knex.raw(`
    CREATE FUNCTION orders_auto_ship() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO auto_ship_orders (order_id, workspace_id)
      SELECT NEW.id, NEW.workspace_id
       WHERE EXISTS (SELECT 1 FROM carrier_accounts a WHERE a.workspace_id = NEW.workspace_id AND a.auto_ship)
      ON CONFLICT (order_id) DO NOTHING;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER orders_auto_ship AFTER INSERT OR UPDATE OF status ON orders
      FOR EACH ROW WHEN (NEW.status = 'confirmed') EXECUTE FUNCTION orders_auto_ship()`);
  await knex.raw(`
    CREATE FUNCTION orders_cancel_parcels() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE parcels SET cancel_requested_at = now()
       WHERE order_id = OLD.id AND state IN ('queued', 'sending', 'sent', 'uncertain') AND cancel_requested_at IS NULL;
      IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER orders_cancel_parcels AFTER UPDATE OF status ON orders
      FOR EACH ROW WHEN (NEW.status = 'unconfirmed' AND OLD.status IS DISTINCT FROM 'unconfirmed') EXECUTE FUNCTION orders_cancel_parcels()`);
  await knex.raw(`
    CREATE TRIGGER orders_cancel_parcels_delete BEFORE DELETE ON orders
      FOR EACH ROW EXECUTE FUNCTION orders_cancel_parcels()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER orders_cancel_parcels_delete ON orders');
  await knex.raw('DROP TRIGGER orders_cancel_parcels ON orders');
  await knex.raw('DROP FUNCTION orders_cancel_parcels()');
  await knex.raw('DROP TRIGGER orders_auto_ship ON orders');
  await knex.raw('DROP FUNCTION orders_auto_ship()');
  await knex.raw('ALTER TABLE parcels DROP COLUMN cancel_at_carrier');
  await knex.raw('ALTER TABLE parcels DROP COLUMN cancel_requested_at');
  await knex.raw('DROP TABLE auto_ship_orders');
}
