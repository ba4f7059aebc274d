import type { Knex } from 'knex';

/**
 * /stats's confirmation figures from counters, as its delivery figures are (docs/delivery.md: a stats
 * page at 100,000 orders within 2× of its time at 100).
 *
 * - `orders.op_status` mirrors the status of the order's current operation, and `orders.ended_calls`
 *   counts its calls that ended with an outcome (dropped claims aside), so that one statement
 *   trigger on orders sees everything a figure needs:
 *   - set at insert when the order names its operation (the service's orders: `pending`, or
 *     `cancelled` for a blocked number, as the same statement creates the operation);
 *   - followed by orders_follow_operation when an order names another operation, and by
 *     operations_sync_order_status (per statement) when its current operation's status changes;
 *   - ended_calls kept by calls_count_outcomes, which also keeps call_counts.
 * - `order_counts`: per workspace, Morocco day of creation, store, status, currency, whether its
 *   confirmation finished and whether a blocked number declined it: orders, amounts, and the calls
 *   of those with calls. Delta rows written per statement by orders_count_confirmations (transition
 *   tables), folded by the worker.
 */
const DAY = "(created_at AT TIME ZONE 'Africa/Casablanca')::date";
const COUNTED = (table: string, sign: string) => `
  SELECT workspace_id, ${DAY} AS day, store_name, status, coalesce(currency, '') AS currency,
         coalesce(op_status IN ('completed', 'cancelled'), false) AS finished,
         (status = 'unconfirmed' AND 'blocked_phone' = ANY(flags) AND op_status IS NOT DISTINCT FROM 'cancelled') AS blocked,
         ${sign} AS n, ${sign} * coalesce(total_amount, 0) AS amount,
         ${sign} * ended_calls AS calls, ${sign} * (CASE WHEN ended_calls > 0 THEN 1 ELSE 0 END) AS called
    FROM ${table}`;
const KEY = 'workspace_id, day, store_name, status, currency, finished, blocked';
const COUNT = (parts: string[]) => `
  INSERT INTO order_counts (${KEY}, n, amount, calls, called)
  SELECT ${KEY}, sum(n), sum(amount), sum(calls), sum(called) FROM (${parts.join(' UNION ALL ')}) changes
   GROUP BY ${KEY} HAVING sum(n) <> 0 OR sum(amount) <> 0 OR sum(calls) <> 0 OR sum(called) <> 0;`;

const COUNT_CONFIRMATIONS = `
  CREATE FUNCTION orders_count_confirmations() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${COUNT([COUNTED('new_rows', '1')])}
    ELSIF TG_OP = 'UPDATE' THEN
      ${COUNT([COUNTED('new_rows', '1'), COUNTED('old_rows', '-1')])}
    ELSE
      ${COUNT([COUNTED('old_rows', '-1')])}
    END IF;
    RETURN NULL;
  END $$`;

const FOLLOW_OPERATION = `
  CREATE FUNCTION orders_follow_operation() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      -- The same statement creates the order's operation: cancelled for a blocked number, else pending.
      IF NEW.operation_id IS NOT NULL THEN
        NEW.op_status := CASE WHEN 'blocked_phone' = ANY(NEW.flags) THEN 'cancelled' ELSE 'pending' END;
      END IF;
    ELSIF NEW.operation_id IS DISTINCT FROM OLD.operation_id THEN
      NEW.op_status := (SELECT p.status FROM operations p WHERE p.id = NEW.operation_id);
    END IF;
    RETURN NEW;
  END $$`;

const SYNC_STATUS = `
  CREATE FUNCTION operations_sync_order_status() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
  BEGIN
    UPDATE orders o SET op_status = n.status
      FROM new_operations n JOIN old_operations d ON d.id = n.id
     WHERE n.status IS DISTINCT FROM d.status AND o.id = n.order_id AND o.operation_id = n.id
       AND o.op_status IS DISTINCT FROM n.status;
    RETURN NULL;
  END $$`;

/** calls_count_outcomes (migration 43_04), also keeping each order's ended_calls. */
const CALLS_COUNTED = (table: string, sign: string) => `
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, ${sign} AS n,
         ${sign} * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         ${sign} * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds,
         op.order_id
    FROM ${table} c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL`;
const COUNT_CALLS = (withOld: boolean, withOrders: boolean) => {
  const changes = `${CALLS_COUNTED('new_rows', '1')}${withOld ? ` UNION ALL ${CALLS_COUNTED('old_rows', '-1')}` : ''}`;
  return `
  INSERT INTO call_counts (workspace_id, day, kind, member_id, agent_id, outcome, n, answered, seconds)
  SELECT workspace_id, day, kind, member_id, agent_id, outcome, sum(n), sum(answered), sum(seconds) FROM (${changes}) changes
  GROUP BY workspace_id, day, kind, member_id, agent_id, outcome
  HAVING sum(n) <> 0 OR sum(seconds) <> 0;${
    withOrders
      ? `
  UPDATE orders o SET ended_calls = o.ended_calls + d.delta
    FROM (SELECT order_id, sum(n) AS delta FROM (${changes}) changes WHERE order_id IS NOT NULL GROUP BY order_id HAVING sum(n) <> 0) d
   WHERE o.id = d.order_id;`
      : ''
  }`;
};
const CALLS_FUNCTION = (withOrders: boolean) => `
  CREATE OR REPLACE FUNCTION calls_count_outcomes() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${COUNT_CALLS(false, withOrders)}
    ELSE
      ${COUNT_CALLS(true, withOrders)}
    END IF;
    RETURN NULL;
  END $$`;

export async function up(knex: Knex): Promise<void> {
  // The backfill writes every order once: longer than a request's statement timeout on a large table.
  await knex.raw('SET LOCAL statement_timeout = 0');
  await knex.raw('ALTER TABLE orders ADD COLUMN op_status text, ADD COLUMN ended_calls integer NOT NULL DEFAULT 0');
  await knex.raw('LOCK TABLE orders, operations, calls IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(`
    UPDATE orders o SET op_status = op.status, ended_calls = coalesce(c.n, 0)
      FROM orders x
      LEFT JOIN operations op ON op.id = x.operation_id
      LEFT JOIN (SELECT p.order_id, count(*) AS n FROM calls k JOIN operations p ON p.id = k.operation_id
                  WHERE k.outcome IS NOT NULL AND k.dropped_at IS NULL GROUP BY p.order_id) c ON c.order_id = x.id
     WHERE x.id = o.id AND (op.status IS NOT NULL OR c.n IS NOT NULL)`);
  await knex.raw(`
    CREATE TABLE order_counts (
      workspace_id uuid NOT NULL,
      day date NOT NULL,
      store_name text NOT NULL,
      status text NOT NULL,
      currency text NOT NULL,
      finished boolean NOT NULL,
      blocked boolean NOT NULL,
      n bigint NOT NULL,
      amount numeric NOT NULL,
      calls bigint NOT NULL,
      called bigint NOT NULL
    )`);
  await knex.raw('CREATE INDEX order_counts_workspace_day_idx ON order_counts (workspace_id, day)');
  await knex.raw(`INSERT INTO order_counts (${KEY}, n, amount, calls, called)
    SELECT ${KEY}, sum(n), sum(amount), sum(calls), sum(called) FROM (${COUNTED('orders', '1')}) o GROUP BY ${KEY}`);
  await knex.raw(COUNT_CONFIRMATIONS);
  for (const [event, tables] of [
    ['INSERT', 'NEW TABLE AS new_rows'],
    ['UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'],
    ['DELETE', 'OLD TABLE AS old_rows'],
  ]) {
    await knex.raw(
      `CREATE TRIGGER orders_count_confirmations_${event.toLowerCase()} AFTER ${event} ON orders REFERENCING ${tables} FOR EACH STATEMENT EXECUTE FUNCTION orders_count_confirmations()`,
    );
  }
  await knex.raw(FOLLOW_OPERATION);
  await knex.raw(
    'CREATE TRIGGER orders_follow_operation BEFORE INSERT OR UPDATE OF operation_id ON orders FOR EACH ROW EXECUTE FUNCTION orders_follow_operation()',
  );
  await knex.raw(SYNC_STATUS);
  await knex.raw(`
    CREATE TRIGGER operations_sync_order_status AFTER UPDATE ON operations REFERENCING OLD TABLE AS old_operations NEW TABLE AS new_operations
      FOR EACH STATEMENT EXECUTE FUNCTION operations_sync_order_status()`);
  await knex.raw(CALLS_FUNCTION(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(CALLS_FUNCTION(false));
  await knex.raw('DROP TRIGGER operations_sync_order_status ON operations');
  await knex.raw('DROP FUNCTION operations_sync_order_status()');
  await knex.raw('DROP TRIGGER orders_follow_operation ON orders');
  await knex.raw('DROP FUNCTION orders_follow_operation()');
  for (const event of ['insert', 'update', 'delete']) await knex.raw(`DROP TRIGGER orders_count_confirmations_${event} ON orders`);
  await knex.raw('DROP FUNCTION orders_count_confirmations()');
  await knex.raw('DROP TABLE order_counts');
  await knex.raw('ALTER TABLE orders DROP COLUMN op_status, DROP COLUMN ended_calls');
}
