import type { Knex } from 'knex';

/**
 * A fourth order flag, `refused_before` (docs/delivery.md): the same phone has an order of the
 * workspace whose delivery ended `refused` or `returned` in the 180 days before this one came in.
 * Computed by orders_flag_risky, the same rule and place as `possible_duplicate` and
 * `blocked_phone`, redefined here from its newest definition (migration 20261125_39_01) with its
 * planning setting and its index-ordered probe kept. The new probe reads the partial index
 * orders_refused_phone_idx (refused and returned parcels only, by workspace, phone and delivery time):
 * walking all of a customer's orders instead made an import of 20,000 orders of one phone quadratic.
 */
const FLAGS_BEFORE = ['possible_duplicate', 'blocked_phone'];
const FLAGS = [...FLAGS_BEFORE, 'refused_before'];
const check = (flags: string[]) => `CHECK (flags <@ ARRAY[${flags.map((f) => `'${f}'`).join(', ')}]::text[]) NOT VALID`;

const probe = (withRefusals: boolean) => `
  CREATE OR REPLACE FUNCTION orders_flag_risky() RETURNS trigger LANGUAGE plpgsql
    SET enable_seqscan = off
  AS $$
  DECLARE risks text[] := '{}';
  BEGIN
    -- ORDER BY the columns of orders_workspace_phone_idx: under any plan, that index is the cheapest way in.
    PERFORM 1 FROM orders o
     WHERE o.workspace_id = NEW.workspace_id AND o.phone = NEW.phone
       AND o.created_at BETWEEN NEW.created_at - interval '48 hours' AND NEW.created_at + interval '48 hours'
       AND o.status <> 'unconfirmed'
       AND order_products_key(o.products_name) = order_products_key(NEW.products_name)
     ORDER BY o.workspace_id, o.phone, o.created_at DESC, o.id DESC
     LIMIT 1;
    IF FOUND THEN
      risks := risks || 'possible_duplicate'::text;
    END IF;
    IF EXISTS (SELECT 1 FROM blocked_phones b WHERE b.workspace_id = NEW.workspace_id AND b.phone = NEW.phone) THEN
      risks := risks || 'blocked_phone'::text;
      NEW.status := 'unconfirmed';
    END IF;${
      withRefusals
        ? `
    -- A customer's parcels refused or returned in the last 180 days: one probe of the partial index
    -- orders_refused_phone_idx (a customer with thousands of orders costs no more than one with one).
    PERFORM 1 FROM orders o
     WHERE o.phone = NEW.phone AND o.workspace_id = NEW.workspace_id
       AND o.delivery_status IN ('refused', 'returned')
       AND o.delivery_at >= NEW.created_at - interval '180 days'
     ORDER BY o.workspace_id, o.phone, o.delivery_at DESC
     LIMIT 1;
    IF FOUND THEN
      risks := risks || 'refused_before'::text;
    END IF;`
        : ''
    }
    NEW.flags := risks;
    RETURN NEW;
  END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw("CREATE INDEX orders_refused_phone_idx ON orders (workspace_id, phone, delivery_at DESC) WHERE delivery_status IN ('refused', 'returned')");
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_flags_check');
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_flags_check ${check(FLAGS)}`);
  await knex.raw(probe(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(probe(false));
  await knex.raw('DROP INDEX orders_refused_phone_idx');
  await knex.raw("UPDATE orders SET flags = array_remove(flags, 'refused_before') WHERE 'refused_before' = ANY(flags)");
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_flags_check');
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_flags_check ${check(FLAGS_BEFORE)}`);
}
