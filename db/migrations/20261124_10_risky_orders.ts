import type { Knex } from 'knex';

/**
 * Risky orders: each order's `flags`, set when it is created by one
 * trigger, whatever path inserts it (a form, /api, the Data API, an import, a store later on), and
 * the workspace's block list.
 *
 * - `possible_duplicate`: the same workspace and phone has an order within 48 hours of this one
 *   (before it, but an order written with an earlier date, as a test or a seed does, looks both
 *   ways) whose products are the same ignoring case, accents and spaces, and which has not ended
 *   `unconfirmed`.
 *   One probe of orders_workspace_phone_idx (workspace, phone, created_at): a customer's orders of
 *   two days, however many orders the workspace has.
 * - `blocked_phone`: the phone is on the workspace's block list (one probe of its primary key). The
 *   order is created `unconfirmed`; the statement that creates its operation creates it cancelled.
 *
 * A row trigger in PL/pgSQL (volatile): its probe sees the rows the same statement inserted before,
 * so the second of two identical rows of one imported file is flagged too. Flags are never
 * recomputed: they say what was true when the order came in.
 *
 * The column's constant default fills existing orders with '{}' without rewriting the table; its
 * CHECK is NOT VALID for the same reason (every row it could fail was just given '{}').
 */
// Frozen here: a later change to the list needs a migration of its own.
const FLAGS = ['possible_duplicate', 'blocked_phone'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE blocked_phones (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      phone text NOT NULL CHECK (phone ~ '^\\+212[0-9]{9}$'),
      reason text CHECK (char_length(reason) <= 200),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, phone)
    )`);
  await knex.raw("ALTER TABLE orders ADD COLUMN flags text[] NOT NULL DEFAULT '{}'");
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_flags_check CHECK (flags <@ ARRAY[${FLAGS.map((f) => `'${f}'`).join(', ')}]::text[]) NOT VALID`);
  // Products compared as a person reads them: "Huile d'Argan 250ml" = "huile d'argan 250 ML".
  // IMMUTABLE with the dictionary named, as order_search_text (unaccent() alone is only STABLE).
  await knex.raw(`
    CREATE FUNCTION order_products_key(products_name text)
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, products_name)), '\\s+', '', 'g') $$`);
  await knex.raw(`
    CREATE FUNCTION orders_flag_risky() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE found text[] := '{}';
    BEGIN
      IF EXISTS (
        SELECT 1 FROM orders o
         WHERE o.workspace_id = NEW.workspace_id AND o.phone = NEW.phone
           AND o.created_at BETWEEN NEW.created_at - interval '48 hours' AND NEW.created_at + interval '48 hours'
           AND o.status <> 'unconfirmed'
           AND order_products_key(o.products_name) = order_products_key(NEW.products_name)) THEN
        found := found || 'possible_duplicate'::text;
      END IF;
      IF EXISTS (SELECT 1 FROM blocked_phones b WHERE b.workspace_id = NEW.workspace_id AND b.phone = NEW.phone) THEN
        found := found || 'blocked_phone'::text;
        NEW.status := 'unconfirmed';
      END IF;
      NEW.flags := found;
      RETURN NEW;
    END $$`);
  await knex.raw('CREATE TRIGGER orders_flag_risky BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION orders_flag_risky()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER orders_flag_risky ON orders');
  await knex.raw('DROP FUNCTION orders_flag_risky()');
  await knex.raw('DROP FUNCTION order_products_key(text)');
  await knex.raw('ALTER TABLE orders DROP COLUMN flags');
  await knex.raw('DROP TABLE blocked_phones');
}
