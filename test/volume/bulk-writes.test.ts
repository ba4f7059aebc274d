import crypto from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import pg from 'pg';
import type { SignedIn } from '../helpers/app';
import { signUp } from '../helpers/app';
import { testDatabaseUrl, testKnex } from '../helpers/db';

/**
 * The database's per-order rules (the triggers on orders and operations) under bulk writes: a plan
 * made while a table was nearly empty never reads the whole table later; a statement of many rows
 * gets what the same rows one by one get; derived values are written once per statement. Behaviour
 * only, no timings (the figures are the bench's `import-scaling` and `bulk-insert`).
 */

type Shop = SignedIn & { workspaceId: string; handlerId: string };
const knex = () => testKnex();

async function shop(): Promise<Shop> {
  const s = await signUp();
  const handler = await s.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId!, handlerId: handler.body.id };
}

function importCsv(s: SignedIn, file: string) {
  return s.agent.post('/api/orders/import').set('Content-Type', 'text/csv').send(Buffer.from(file, 'utf8'));
}

/** A webhook endpoint of the workspace for these events (written directly: nothing here delivers it). */
async function endpoint(workspaceId: string, events: string[]): Promise<void> {
  await knex()('webhook_endpoints').insert({ workspace_id: workspaceId, url: 'https://hooks.example.invalid/orders', events, secret: 'whsec_test' });
}

/** What a test left for a worker of a later test: dispatch jobs and webhook deliveries of the workspace. */
async function unqueue(workspaceId: string): Promise<void> {
  const operationIds = await knex()('operations').where({ workspace_id: workspaceId }).pluck('id');
  // One pass over the queue's jobs, whatever the planner knows of the table.
  await knex().raw("DELETE FROM pgboss.job WHERE name = 'operation-due' AND singleton_key = ANY(?::text[])", [operationIds]);
  await knex()('webhook_deliveries').where({ workspace_id: workspaceId }).delete();
}

/** The status counts as the /orders page reads them, and as count(*) finds them. */
async function statusCounts(workspaceId: string): Promise<{ kept: Record<string, number>; counted: Record<string, number> }> {
  const kept = await knex().raw('SELECT status, sum(n)::int AS n FROM order_status_counts WHERE workspace_id = ? GROUP BY status HAVING sum(n) <> 0', [
    workspaceId,
  ]);
  const counted = await knex().raw('SELECT status, count(*)::int AS n FROM orders WHERE workspace_id = ? GROUP BY status', [workspaceId]);
  const byStatus = (rows: Array<{ status: string; n: number }>) => Object.fromEntries(rows.map((r) => [r.status, r.n]));
  return { kept: byStatus(kept.rows), counted: byStatus(counted.rows) };
}

/**
 * Rows of orders updated and calls of the two functions so far, as this connection counts them
 * (the counts of earlier transactions may not have been flushed yet: compare before and after).
 */
async function writesSoFar(trx: Knex.Transaction): Promise<Record<string, number>> {
  const { rows } = await trx.raw(
    `SELECT pg_stat_get_xact_tuples_updated('orders'::regclass)::int AS orders_updated,
            coalesce(pg_stat_get_xact_function_calls('orders_mark_latest_operations()'::regprocedure), 0)::int AS latest_calls,
            coalesce(pg_stat_get_xact_function_calls('orders_count_statuses()'::regprocedure), 0)::int AS count_calls`,
  );
  return rows[0];
}

function difference(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([key, n]) => [key, n - before[key]]));
}

/** The Moroccan mobile number of row i, as a shop's file writes it. */
const phoneOf = (i: number) => `06${String(i).padStart(8, '0')}`;

describe('triggers on orders and operations under bulk writes', () => {
  it('on nearly empty tables and under generic plans, every lookup of the triggers uses an index (the risk probe: workspace, phone and time)', async () => {
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    const plans: string[] = [];
    client.on('notice', (notice) => {
      if (/plan:/.test(notice.message ?? '')) plans.push(notice.message!);
    });
    await client.connect();
    const schema = `plans_${crypto.randomBytes(4).toString('hex')}`;
    try {
      await client.query('BEGIN');
      // Copies of the tables the triggers read and write, with their indexes and with every trigger
      // of orders and operations, found first on the search path: what a fresh database has.
      await client.query(`CREATE SCHEMA ${schema}`);
      for (const table of ['orders', 'operations', 'blocked_phones', 'order_status_counts', 'webhook_endpoints', 'webhook_messages', 'webhook_deliveries']) {
        await client.query(`CREATE TABLE ${schema}.${table} (LIKE public.${table} INCLUDING ALL)`);
      }
      // A webhook's order is built from a row of public.orders: the copy's rows are read as such.
      await client.query(
        `CREATE FUNCTION ${schema}.webhook_order(o ${schema}.orders) RETURNS jsonb LANGUAGE sql STABLE AS 'SELECT public.webhook_order(o::text::public.orders)'`,
      );
      const { rows: triggers } = await client.query(
        "SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid IN ('public.orders'::regclass, 'public.operations'::regclass) AND NOT tgisinternal",
      );
      expect(triggers.length).to.be.greaterThan(5);
      for (const { def } of triggers) await client.query(def.replace(/ ON public\.(orders|operations) /, ` ON ${schema}.$1 `));
      await client.query(`SET LOCAL search_path = ${schema}, public`);
      const workspace = crypto.randomUUID();
      const agent = crypto.randomUUID();
      await client.query(
        "INSERT INTO webhook_endpoints (workspace_id, url, events, secret) VALUES ($1, 'https://hooks.example.invalid', '{order.created,order.updated}', 'x')",
        [workspace],
      );
      await client.query("INSERT INTO blocked_phones (workspace_id, phone) VALUES ($1, '+212600000009')", [workspace]);
      // A few rows, and statistics saying so (as autovacuum leaves a new database).
      await client.query(
        `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name)
         SELECT $1, 'Seed', '+2126000001' || g, 'S', 'Seed item' FROM generate_series(10, 12) g`,
        [workspace],
      );
      await client.query(`ANALYZE ${schema}.orders`);
      await client.query(`ANALYZE ${schema}.operations`);
      await client.query(`ANALYZE ${schema}.blocked_phones`);
      await client.query(`ANALYZE ${schema}.webhook_endpoints`);
      await client.query("LOAD 'auto_explain'");
      for (const [name, value] of [
        ['auto_explain.log_min_duration', '0'],
        ['auto_explain.log_nested_statements', 'on'],
        ['auto_explain.log_level', 'notice'],
        ['plan_cache_mode', 'force_generic_plan'],
      ]) {
        await client.query('SELECT set_config($1, $2, true)', [name, value]);
      }
      // The webhook triggers run at once instead of at commit (never reached: rolled back).
      await client.query('SET CONSTRAINTS ALL IMMEDIATE');
      // As the service writes an order (its operation's id in the INSERT), one at a time, then the
      // same product again (a duplicate), a blocked number, and a statement that names no operation.
      const newOrder = `WITH o AS (
          INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, operation_id)
          VALUES ($1, 'Client', $2, 'S', $3, gen_random_uuid()) RETURNING id, workspace_id, operation_id, flags
      ), op AS (
          INSERT INTO operations (id, workspace_id, order_id, agent_id, status, next_attempt_at)
          SELECT operation_id, workspace_id, id, $4, 'pending', now() FROM o)
        SELECT flags FROM o`;
      const flags: string[][] = [];
      for (const [phone, products] of [
        ['+212600000001', 'Argan oil'],
        ['+212600000002', 'Argan oil'],
        ['+212600000001', 'ARGAN  OIL'],
        ['+212600000009', 'Black soap'],
      ]) {
        flags.push((await client.query(newOrder, [workspace, phone, products, agent])).rows[0].flags);
      }
      expect(flags).to.deep.equal([[], [], ['possible_duplicate'], ['blocked_phone']]);
      await client.query(
        `WITH o AS (
           INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name)
           SELECT $1, 'Bulk', '+2126000002' || g, 'S', 'Bulk item' FROM generate_series(10, 14) g RETURNING id, workspace_id)
         INSERT INTO operations (workspace_id, order_id, agent_id, status) SELECT workspace_id, id, $2, 'cancelled' FROM o`,
        [workspace, agent],
      );
      await client.query("UPDATE orders SET status = 'confirmed' WHERE phone = '+212600000002'");
      const { rows: named } = await client.query(
        'SELECT count(*)::int AS n FROM orders o WHERE o.operation_id = (SELECT id FROM operations p WHERE p.order_id = o.id)',
      );
      expect(named[0].n).to.equal(9);
      await client.query('ROLLBACK');
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    }
    // Each plan that reads a table reads it through an index, whatever the copies held when planned.
    const reading = plans.filter((p) => !/Query Text: (WITH|UPDATE orders SET status|INSERT INTO orders|SELECT count)/.test(p));
    expect(reading.length).to.be.greaterThan(5);
    for (const plan of reading) expect(plan, plan).not.to.match(/Seq Scan on (orders|operations|blocked_phones|webhook_endpoints)\b/);
    const probes = plans.filter((p) => /FROM orders o\s+WHERE o\.workspace_id = NEW\.workspace_id AND o\.phone = NEW\.phone/.test(p));
    expect(probes, 'the risk probe ran').to.have.length.greaterThan(0);
    for (const probe of probes) {
      expect(probe).to.match(/Index Cond: \(\(workspace_id = \$\d+\) AND \(phone = \$\d+\) AND \(created_at >= .*\) AND \(created_at <= .*\)\)/);
    }
    // The refusal probe (refused_before): the partial index of refused parcels, by workspace, phone and time.
    const refusals = plans.filter((p) => /FROM orders o\s+WHERE o\.phone = NEW\.phone AND o\.workspace_id = NEW\.workspace_id/.test(p));
    expect(refusals, 'the refusal probe ran').to.have.length.greaterThan(0);
    for (const probe of refusals) {
      expect(probe, probe).to.match(/Index Cond: \(\(workspace_id = \$\d+\) AND \(phone = \$\d+\) AND \(delivery_at >= .*\)\)/);
    }
    const latest = plans.filter((p) => /FROM new_operations n/.test(p));
    expect(latest, 'the latest-operation check ran').to.have.length.greaterThan(0);
    for (const plan of latest) expect(plan, plan).to.match(/Index Scan using \S+ on orders o\b.*\n\s+Index Cond: \(id = n\.order_id\)/);
  });

  it('a 20,000-row import: every row imported with its flags, one operation each, exact status counts, and a webhook message per order', async function () {
    this.timeout(600_000);
    const s = await shop();
    await endpoint(s.workspaceId, ['order.created']);
    // Rows 500, 1500, …: a blocked number. Rows 11, 1011, … and 1000, 2000, … repeat the row before
    // (another case and spacing): the second is a possible duplicate, within a batch of 1,000 and
    // across two. Every 7th row says `confirmed`.
    const rows = 20_000;
    const blocked = (i: number) => i % 1000 === 500;
    const repeats = (i: number) => i > 0 && (i % 1000 === 11 || i % 1000 === 0);
    const phone = (i: number) => phoneOf(repeats(i) ? i - 1 : i);
    await knex()('blocked_phones').insert(
      Array.from({ length: rows / 1000 }, (_, k) => ({ workspace_id: s.workspaceId, phone: `+212${phoneOf(k * 1000 + 500).slice(1)}` })),
    );
    const lines = ['client_name,phone,store_name,products_name,status'];
    for (let i = 0; i < rows; i++) {
      const products = repeats(i) ? `ITEM  ${i - 1}` : `Item ${i}`;
      lines.push(`Client ${i},${phone(i)},Atlas,${products},${i % 7 === 3 ? 'confirmed' : ''}`);
    }
    const res = await importCsv(s, `${lines.join('\n')}\n`);
    expect(res.status, res.text.slice(0, 300)).to.equal(200);
    expect(res.body).to.include({ imported: rows, skipped: 0 });
    const ids: string[] = res.body.order_ids;
    const stored = new Map(
      (await knex()('orders').where({ workspace_id: s.workspaceId }).select('id', 'flags', 'status', 'operation_id')).map((o) => [o.id, o]),
    );
    expect(stored.size).to.equal(rows);
    const wrong: string[] = [];
    ids.forEach((id, i) => {
      const o = stored.get(id);
      const flags = [...(repeats(i) ? ['possible_duplicate'] : []), ...(blocked(i) ? ['blocked_phone'] : [])];
      const status = blocked(i) ? 'unconfirmed' : i % 7 === 3 ? 'confirmed' : 'pending';
      if (JSON.stringify(o?.flags) !== JSON.stringify(flags) || o?.status !== status) wrong.push(`row ${i}: ${JSON.stringify(o)}`);
    });
    expect(wrong.slice(0, 5)).to.deep.equal([]);
    // One operation per order, named by the order; cancelled for a blocked number, else pending.
    const { rows: operations } = await knex().raw(
      `SELECT count(*)::int AS operations, count(DISTINCT p.order_id)::int AS orders,
              count(*) FILTER (WHERE o.operation_id = p.id)::int AS named,
              count(*) FILTER (WHERE p.status = CASE WHEN 'blocked_phone' = ANY(o.flags) THEN 'cancelled' ELSE 'pending' END)::int AS right_status
         FROM operations p JOIN orders o ON o.id = p.order_id WHERE p.workspace_id = ?`,
      [s.workspaceId],
    );
    expect(operations[0]).to.deep.equal({ operations: rows, orders: rows, named: rows, right_status: rows });
    const counts = await statusCounts(s.workspaceId);
    expect(counts.kept).to.deep.equal(counts.counted);
    expect(counts.counted).to.deep.equal({ pending: 17_126, confirmed: 2854, unconfirmed: 20 });
    // order.created for each order, as GET /api/orders/:id shows it after the import.
    const { rows: messages } = await knex().raw(
      `SELECT count(*)::int AS messages,
              count(*) FILTER (WHERE (m.data->'order'->>'operation_id')::uuid = o.operation_id
                                 AND m.data->'order'->'flags' = to_jsonb(o.flags) AND m.data->'order'->>'status' = o.status)::int AS matching
         FROM webhook_messages m JOIN orders o ON o.id = (m.data->'order'->>'id')::uuid
        WHERE m.workspace_id = ? AND m.event_type = 'order.created'`,
      [s.workspaceId],
    );
    expect(messages[0]).to.deep.equal({ messages: rows, matching: rows });
    await unqueue(s.workspaceId);
  });

  it('one statement of many rows gets the flags, statuses and counts the same rows get one by one', async () => {
    const [bulk, single] = [await shop(), await shop()];
    const rows: Array<{ clientName: string; phone: string; storeName: string; productsName: string; status?: string }> = [
      { clientName: 'A', phone: '0611111111', storeName: 'S', productsName: 'Argan oil' },
      { clientName: 'B', phone: '0622222222', storeName: 'S', productsName: 'Black soap' },
      { clientName: 'A again', phone: '+212611111111', storeName: 'S', productsName: 'argan  OIL' },
      { clientName: 'C', phone: '0633333333', storeName: 'S', productsName: 'Ghassoul', status: 'unconfirmed' },
      { clientName: 'C again', phone: '0633333333', storeName: 'S', productsName: 'ghassoul' },
      { clientName: 'Blocked', phone: '0644444444', storeName: 'S', productsName: 'Amlou' },
      { clientName: 'Blocked again', phone: '0644444444', storeName: 'S', productsName: 'Amlou' },
      { clientName: 'B other', phone: '0622222222', storeName: 'S', productsName: 'Rose water', status: 'confirmed' },
      { clientName: 'A third', phone: '0611111111', storeName: 'S', productsName: 'Argan Oil', status: 'confirmed' },
    ];
    for (const s of [bulk, single]) await knex()('blocked_phones').insert({ workspace_id: s.workspaceId, phone: '+212644444444' });
    const csv = [
      'client_name,phone,store_name,products_name,status',
      ...rows.map((r) => [r.clientName, r.phone, r.storeName, r.productsName, r.status ?? ''].join(',')),
    ];
    const imported = await importCsv(bulk, `${csv.join('\n')}\n`).expect(200);
    const singleIds: string[] = [];
    for (const row of rows) singleIds.push((await single.agent.post('/api/orders').send(row).expect(201)).body.id);
    const seen = async (ids: string[]) => {
      const byId = new Map((await knex()('orders').whereIn('id', ids).select('id', 'flags', 'status')).map((o) => [o.id, o]));
      return ids.map((id) => ({ flags: byId.get(id).flags, status: byId.get(id).status }));
    };
    const fromBulk = await seen(imported.body.order_ids);
    expect(fromBulk).to.deep.equal(await seen(singleIds));
    expect(fromBulk.map((o) => o.flags)).to.deep.equal([
      [],
      [],
      ['possible_duplicate'],
      [],
      [],
      ['blocked_phone'],
      // The blocked order before it ended unconfirmed: no duplicate of it.
      ['blocked_phone'],
      [],
      ['possible_duplicate'],
    ]);
    const [bulkCounts, singleCounts] = [await statusCounts(bulk.workspaceId), await statusCounts(single.workspaceId)];
    expect(bulkCounts.kept).to.deep.equal(bulkCounts.counted);
    expect(singleCounts.kept).to.deep.equal(singleCounts.counted);
    expect(bulkCounts.counted).to.deep.equal(singleCounts.counted);
    for (const s of [bulk, single]) await unqueue(s.workspaceId);
  });

  it('a statement inserting orders and their operations: each order names its latest operation, set once per statement, and its webhook message names it too', async () => {
    const s = await shop();
    await endpoint(s.workspaceId, ['order.created', 'order.updated']);
    const orders = 50;
    // The shape of a seed or a migration: the orders without their operation's id, then for each a
    // completed operation and, a minute later, a pending one (its latest).
    const bulkInsert = `
      WITH o AS (
        INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, created_at)
        SELECT ?::uuid, 'Seed ' || g, '+2126' || lpad(g::text, 8, '0'), 'S', 'Seed item', now() - interval '1 hour'
          FROM generate_series(1, ?::int) g RETURNING id, workspace_id, created_at)
      INSERT INTO operations (workspace_id, order_id, agent_id, status, next_attempt_at, created_at)
      SELECT o.workspace_id, o.id, ?::uuid, v.status, CASE WHEN v.status = 'pending' THEN now() END, o.created_at + v.later
        FROM o, (VALUES ('completed', interval '0'), ('pending', interval '1 minute')) v(status, later)`;
    const stats = await knex().transaction(async (trx) => {
      await trx.raw("SET LOCAL track_functions = 'pl'");
      const before = await writesSoFar(trx);
      await trx.raw(bulkInsert, [s.workspaceId, orders, s.handlerId]);
      return difference(await writesSoFar(trx), before);
    });
    // Each order updated once, by one statement: the latest-operation trigger ran once, and the
    // status-count trigger twice (the INSERT, and that one UPDATE), not once per operation.
    expect(stats).to.deep.equal({ orders_updated: orders, latest_calls: 1, count_calls: 2 });
    const { rows: named } = await knex().raw(
      `SELECT count(*)::int AS n FROM orders o
        WHERE o.workspace_id = ? AND o.operation_id = (SELECT id FROM operations p WHERE p.order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1)
          AND (SELECT status FROM operations WHERE id = o.operation_id) = 'pending'`,
      [s.workspaceId],
    );
    expect(named[0].n).to.equal(orders);
    const messages = await knex()('webhook_messages').where({ workspace_id: s.workspaceId }).select('event_type', 'data');
    expect(messages.filter((m) => m.event_type === 'order.updated')).to.deep.equal([]);
    expect(messages).to.have.length(orders);
    const operationOf = new Map(
      (await knex()('orders').where({ workspace_id: s.workspaceId }).select('id', 'operation_id')).map((o) => [o.id, o.operation_id]),
    );
    for (const m of messages) expect(m.data.order.operation_id).to.equal(operationOf.get(m.data.order.id));
    const counts = await statusCounts(s.workspaceId);
    expect(counts.kept).to.deep.equal({ pending: orders });
    expect(counts.kept).to.deep.equal(counts.counted);

    // As the service writes orders (each with its operation's id): nothing to update afterwards.
    const serviceShape = await knex().transaction(async (trx) => {
      await trx.raw("SET LOCAL track_functions = 'pl'");
      const before = await writesSoFar(trx);
      await trx.raw(
        `WITH o AS (
           INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, operation_id)
           SELECT ?::uuid, 'New ' || g, '+2127' || lpad(g::text, 8, '0'), 'S', 'New item', gen_random_uuid()
             FROM generate_series(1, 20) g RETURNING id, workspace_id, operation_id)
         INSERT INTO operations (id, workspace_id, order_id, agent_id, status) SELECT operation_id, workspace_id, id, ?::uuid, 'cancelled' FROM o`,
        [s.workspaceId, s.handlerId],
      );
      return difference(await writesSoFar(trx), before);
    });
    expect(serviceShape).to.deep.equal({ orders_updated: 0, latest_calls: 1, count_calls: 1 });
    await unqueue(s.workspaceId);
  });
});
