import type { Knex } from 'knex';

/**
 * The triggers on orders and operations cost the same for the 1st and the 20,000th row of a
 * statement or a transaction, whatever the size of the tables when a connection planned them.
 *
 * PL/pgSQL plans each query of a trigger function once per connection (a generic plan, after five
 * custom ones) and keeps that plan as long as the connection lives. Planned while `orders` was
 * nearly empty (a fresh database, a test database, a new workspace's first import on a server just
 * started), the risk probe of orders_flag_risky read the workspace's orders of the last two days
 * through orders_workspace_status_newest_idx, checking the phone of each: one import of 20,000 rows
 * read 200 million index entries (91 s). Planning each call afresh instead (plan_cache_mode =
 * force_custom_plan) costs some 0.2 ms a row for that query on a busy machine, which is as much again
 * as the rest of the row's insert. So every trigger function that looks something up:
 *
 * - runs with `enable_seqscan = off`: a plan made while a table had a few rows can never read the
 *   whole table later on;
 * - asks for its rows in the order of the index it is written for (the risk probe: ORDER BY the
 *   columns of orders_workspace_phone_idx, LIMIT 1), so that an index giving that order costs less
 *   than any other plus a sort, even when the planner thinks the table holds a handful of rows (the
 *   three indexes starting with workspace_id otherwise cost exactly the same there).
 *
 * Derived values are written once per statement, not once per row:
 *
 * - operations_mark_latest becomes a statement trigger over the statement's new operations (a
 *   transition table). An order that already names its new operation (every new order: the service
 *   writes its first operation's id in the INSERT) costs one probe of orders' primary key; the others
 *   (a seed, a migration, a future requeue) are set by one UPDATE for the whole statement, planned
 *   with their real number, instead of one UPDATE per operation — each of which ran the status-count
 *   trigger and queued a webhook event.
 * - The order.updated webhook trigger no longer fires for that column's own updates (WHEN
 *   operation_id is unchanged): no webhook watches it, and the function ended in nothing for them.
 *
 * The status counts were already kept once per statement (order_status_counts, transition tables).
 */

/** The risk probe (migration 20261124_10), its lookup written for orders_workspace_phone_idx. */
const FLAG_RISKY = `
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
    END IF;
    NEW.flags := risks;
    RETURN NEW;
  END $$`;

const OLD_FLAG_RISKY = `
  CREATE OR REPLACE FUNCTION orders_flag_risky() RETURNS trigger LANGUAGE plpgsql AS $$
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
  END $$`;

/**
 * Each order's latest operation (migration 20261123_07), once per statement: the orders of the
 * statement's new operations that do not already name one of them, then one UPDATE of those, planned
 * for them (EXECUTE: a plan of its own each time, with the real number of orders).
 */
const MARK_LATEST = `
  CREATE OR REPLACE FUNCTION orders_mark_latest_operations() RETURNS trigger LANGUAGE plpgsql
    SET enable_seqscan = off
  AS $$
  DECLARE stale uuid[];
  BEGIN
    SELECT array_agg(DISTINCT n.order_id) INTO stale FROM new_operations n
     WHERE (SELECT o.operation_id FROM orders o WHERE o.id = n.order_id) IS DISTINCT FROM n.id;
    IF stale IS NULL THEN RETURN NULL; END IF;
    EXECUTE 'UPDATE orders o SET operation_id = l.id
               FROM unnest($1::uuid[]) AS s(order_id),
                    LATERAL (SELECT p.id FROM operations p WHERE p.order_id = s.order_id
                              ORDER BY p.created_at DESC, p.id DESC LIMIT 1) l
              WHERE o.id = s.order_id AND o.operation_id IS DISTINCT FROM l.id' USING stale;
    RETURN NULL;
  END $$`;

const OLD_MARK_LATEST = `
  CREATE OR REPLACE FUNCTION orders_mark_latest_operation() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE latest uuid;
  BEGIN
    IF (SELECT operation_id FROM orders WHERE id = NEW.order_id) IS NOT DISTINCT FROM NEW.id THEN RETURN NULL; END IF;
    SELECT id INTO latest FROM operations WHERE order_id = NEW.order_id ORDER BY created_at DESC, id DESC LIMIT 1;
    UPDATE orders SET operation_id = latest WHERE id = NEW.order_id AND operation_id IS DISTINCT FROM latest;
    RETURN NULL;
  END $$`;

/** The other trigger functions that look rows up: their plans may not read a whole table either. */
const LOOKING_UP = ['orders_webhook_events()', 'calls_webhook_events()', 'webhook_event(uuid, text, jsonb)', 'orders_store_write_back()'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(FLAG_RISKY);
  await knex.raw(MARK_LATEST);
  await knex.raw('DROP TRIGGER operations_mark_latest ON operations');
  await knex.raw('DROP FUNCTION orders_mark_latest_operation()');
  await knex.raw(`
    CREATE TRIGGER operations_mark_latest AFTER INSERT ON operations REFERENCING NEW TABLE AS new_operations
      FOR EACH STATEMENT EXECUTE FUNCTION orders_mark_latest_operations()`);
  // order.created and order.updated as before; an update of operation_id alone queues nothing.
  await knex.raw('DROP TRIGGER orders_webhook_changes ON orders');
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER orders_webhook_created AFTER INSERT ON orders
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION orders_webhook_events()`);
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER orders_webhook_changes AFTER UPDATE ON orders
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.operation_id IS NOT DISTINCT FROM NEW.operation_id)
      EXECUTE FUNCTION orders_webhook_events()`);
  for (const fn of LOOKING_UP) await knex.raw(`ALTER FUNCTION ${fn} SET enable_seqscan = off`);
}

export async function down(knex: Knex): Promise<void> {
  for (const fn of LOOKING_UP) await knex.raw(`ALTER FUNCTION ${fn} RESET enable_seqscan`);
  await knex.raw('DROP TRIGGER orders_webhook_changes ON orders');
  await knex.raw('DROP TRIGGER orders_webhook_created ON orders');
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER orders_webhook_changes AFTER INSERT OR UPDATE ON orders
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION orders_webhook_events()`);
  await knex.raw('DROP TRIGGER operations_mark_latest ON operations');
  await knex.raw('DROP FUNCTION orders_mark_latest_operations()');
  await knex.raw(OLD_MARK_LATEST);
  await knex.raw('CREATE TRIGGER operations_mark_latest AFTER INSERT ON operations FOR EACH ROW EXECUTE FUNCTION orders_mark_latest_operation()');
  await knex.raw('ALTER FUNCTION orders_flag_risky() RESET ALL');
  await knex.raw(OLD_FLAG_RISKY);
}
