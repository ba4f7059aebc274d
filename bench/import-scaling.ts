import type { Knex } from 'knex';
import type { Cleanup } from './infra';
import { stopProcess } from './infra';
import { CpuMeter, MemorySampler } from './meters';
import { fillerWorkspaces, signUp } from './seed';
import type { ServiceProcess } from './sides';
import { startService } from './sides';

const BEHIND_ROUTER = { 'x-forwarded-proto': 'https' };
/** The documented maximum and the sizes below it, each imported into a new workspace. */
const SIZES = [2000, 5000, 10_000, 20_000];
const IMPORT_SECONDS_TARGET = 5;
/** 20,000 rows take at most this many times the time of 10,000: the import grows linearly. */
const LINEAR_TARGET = 2.2;
const IMPORT_RSS_TARGET_MB = 100;
const BULK_ORDERS = 100_000;

export interface ImportScaling {
  imports: Array<{ rows: number; seconds: number; rssGrowthMb: number; bytes: number; cpu: { node: number; db: number } }>;
  /** The orders table when the first file came in (a fresh database: none). */
  ordersBefore: number;
}

const FIRST_NAMES = ['Amina', 'Youssef', 'Fatima Zahra', 'Mohamed', 'Khadija', 'Omar', 'Salma', 'Hicham', 'Nadia', 'Rachid', 'Imane', 'Abdelilah'];
const LAST_NAMES = ['Benali', 'El Idrissi', 'Alaoui', 'Bennani', 'Tazi', 'Chraibi', 'Berrada', 'El Fassi', 'Ouazzani'];
const CITIES = ['Casablanca', 'Rabat', 'Marrakech', 'Fès', 'Tanger', 'Agadir', 'Meknès', 'Oujda', 'Kénitra', 'Tétouan'];
const PRODUCTS = ["Huile d'argan 250 ml x2", 'Savon noir, gant kessa', 'Babouches cuir taille 38', 'Caftan brodé taille M', 'Ras el hanout 500 g'];

/** A customer's number in one of the forms shops type it: `06 12 34 56 78`, `+212 6…`, `06…`. */
function phoneAsTyped(n: number): string {
  const digits = String(n % 100_000_000).padStart(8, '0');
  if (n % 3 === 0) return `06 ${digits.slice(0, 2)} ${digits.slice(2, 4)} ${digits.slice(4, 6)} ${digits.slice(6)}`;
  return n % 3 === 1 ? `+212 6${digits}` : `06${digits}`;
}

/**
 * A shop's file of `rows` distinct customers, as a shop's export has them: six columns (name, phone
 * as typed, store, products, address, city), each cell as long as a real one, quoted where it holds
 * a comma. A file of one-word cells (`Client 12`) costs less per row: the search index's keys grow
 * with the order's words.
 */
export function shopCsv(rows: number, salt: number): Buffer<ArrayBuffer> {
  const lines = ['client_name,phone,store_name,products_name,address,city'];
  for (let i = 0; i < rows; i++) {
    const name = `${FIRST_NAMES[i % FIRST_NAMES.length]} ${LAST_NAMES[(i * 7) % LAST_NAMES.length]}`;
    const products = PRODUCTS[i % PRODUCTS.length];
    const address = `${1 + (i % 150)} Rue Mohammed V, Appartement ${1 + (i % 40)}`;
    lines.push(`${name},${phoneAsTyped(salt * 1_000_000 + i)},Atlas Shop,"${products}","${address}",${CITIES[i % CITIES.length]}`);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** A file as the import page's form sends it (multipart, the file in `file`). */
export function uploadForm(file: Buffer<ArrayBuffer>, name: string): FormData {
  const form = new FormData();
  form.append('file', new Blob([file], { type: 'text/csv' }), name);
  return form;
}

/**
 * The issue's `import-scaling`: files of 2,000, 5,000, 10,000 and 20,000 rows to
 * POST /api/orders/import of a service started afresh for them (production settings, the Procfile's
 * flags), each into a new workspace, one after the other, each sent as a shop's browser sends it (a
 * multipart form with the file, over HTTP): the time until the answer, the CPU the server and its
 * Postgres backends spent on it (on a machine others share, the CPU says what the time cannot), and
 * the server's RSS growth. Run before anything else is seeded, it is the first import of a fresh
 * database.
 */
export async function importScalingBench(options: {
  knex: Knex;
  where: { databaseUrl: string; redisUrl: string; cleanup: Cleanup };
  secrets?: ServiceProcess['secrets'];
  logFile: string;
  env: NodeJS.ProcessEnv;
  log: (message: string) => void;
}): Promise<ImportScaling> {
  const { count } = (await options.knex('orders').count('* as count').first()) as { count: string };
  const service = await startService({ ...options.where, logFile: options.logFile, secrets: options.secrets }, options.env);
  const backends = async () => {
    const { rows } = await options.knex.raw(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    return rows.map((r: { pid: number }) => r.pid);
  };
  try {
    const memory = new MemorySampler(service.child.pid!);
    const cpu = new CpuMeter(service.child.pid!, backends);
    const imports: ImportScaling['imports'] = [];
    for (const [index, rows] of SIZES.entries()) {
      const account = await signUp(service.url, options.knex, `import-scaling-${rows}-${Date.now()}@bench.invalid`, `Import of ${rows}`);
      const file = shopCsv(rows, index);
      const form = uploadForm(file, `orders-${rows}.csv`);
      const before = memory.now();
      const cpuBefore = await cpu.snapshot();
      const t0 = performance.now();
      const res = await fetch(`${service.url}/api/orders/import`, {
        method: 'POST',
        headers: { ...BEHIND_ROUTER, cookie: account.cookie },
        body: form,
      });
      const body = (await res.json()) as { imported?: number };
      const seconds = (performance.now() - t0) / 1000;
      const used = await cpu.since(cpuBefore);
      if (res.status !== 200 || body.imported !== rows)
        throw new Error(`import-scaling: ${rows} rows answered ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      const rssGrowthMb = Math.max(0, memory.mark() - before);
      options.log(
        `import-scaling: ${rows.toLocaleString('en')} rows in ${seconds.toFixed(2)} s (CPU: server ${used.node.toFixed(2)} s, Postgres ${used.db.toFixed(2)} s), RSS +${rssGrowthMb.toFixed(0)} MB`,
      );
      imports.push({ rows, seconds, rssGrowthMb, bytes: file.length, cpu: used });
    }
    memory.stop();
    return { imports, ordersBefore: Number(count) };
  } finally {
    await stopProcess(service.child);
    // The imports' dispatch jobs are nobody's work here.
    await options.knex.raw("DELETE FROM pgboss.job WHERE name = 'operation-due'");
  }
}

export function importScalingSection(s: ImportScaling): string[] {
  const of = (rows: number) => s.imports.find((i) => i.rows === rows);
  const ratio = (of(20_000)?.seconds ?? Number.NaN) / (of(10_000)?.seconds ?? Number.NaN);
  return [
    '## Import scaling',
    '',
    `\`POST /api/orders/import\`, a shop's six-column files of distinct customers sent as a browser sends them (multipart), each into a new workspace, one after the other, to a service started afresh for them (${s.ordersBefore.toLocaleString('en-US')} orders in the database before the first). The time is until the answer; the CPU is the server's and its Postgres backends' meanwhile.`,
    '',
    '| Rows | File | Time | Per 1,000 rows | CPU: server + Postgres | Server RSS growth | Target: ≤ 5 s at 20,000, ≤ 100 MB |',
    '|---:|---:|---:|---:|---:|---:|---|',
    ...s.imports.map(
      (i) =>
        `| ${i.rows.toLocaleString('en-US')} | ${(i.bytes / 1_000_000).toFixed(2)} MB | ${i.seconds.toFixed(2)} s | ${((i.seconds / i.rows) * 1000).toFixed(2)} s | ${i.cpu.node.toFixed(2)} + ${i.cpu.db.toFixed(2)} s | ${i.rssGrowthMb.toFixed(0)} MB | ${i.rssGrowthMb <= IMPORT_RSS_TARGET_MB && (i.rows < 20_000 || i.seconds <= IMPORT_SECONDS_TARGET) ? 'met' : '**missed**'} |`,
    ),
    '',
    `20,000 rows ÷ 10,000 rows: **${ratio.toFixed(2)}×** (target ≤ ${LINEAR_TARGET}×: ${ratio <= LINEAR_TARGET ? 'met' : '**missed**'}).`,
    '',
  ];
}

export interface BulkInsert {
  orders: number;
  /** Seconds of the same statement with the tables' triggers and without, in ABBA order. */
  shapes: Array<{ shape: string; withTriggers: number[]; without: number[] }>;
}

/**
 * One statement inserting 100,000 orders with their operations (a seed, a migration), on the real
 * tables with their triggers against the same with the user triggers of orders and operations
 * disabled (in the same transaction, rolled back): without, with, with, without. Two shapes: the
 * orders written with their operation's id (as the service writes them), and without it (the
 * latest-operation trigger then sets it).
 */
export async function bulkInsertBench(knex: Knex, log: (message: string) => void): Promise<BulkInsert> {
  const [workspace] = await fillerWorkspaces(knex, 1);
  const shapes: BulkInsert['shapes'] = [];
  for (const [shape, named] of [
    ['orders written with their operation’s id', true],
    ['orders without it (set by the trigger)', false],
  ] as const) {
    const sql = `
      WITH o AS (
        INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, created_at${named ? ', operation_id' : ''})
        SELECT ?::uuid, 'Client ' || g, '+2126' || lpad(g::text, 8, '0'), 'Atlas Store', 'Argan oil 250 ml', now() - g * interval '1 minute'${named ? ', gen_random_uuid()' : ''}
          FROM generate_series(1, ?::int) g
        RETURNING id, workspace_id, created_at${named ? ', operation_id' : ''})
      INSERT INTO operations (${named ? 'id, ' : ''}workspace_id, order_id, agent_id, direction, status, next_attempt_at, created_at)
      SELECT ${named ? 'o.operation_id, ' : ''}o.workspace_id, o.id, a.id, 'outbound', 'pending', o.created_at, o.created_at
        FROM o JOIN agents a ON a.workspace_id = o.workspace_id AND a.is_order_handler`;
    const figures = { shape, withTriggers: [] as number[], without: [] as number[] };
    for (const triggers of [false, true, true, false]) {
      const rollback = new Error('rollback');
      let seconds = 0;
      await knex
        .transaction(async (trx) => {
          await trx.raw('SET LOCAL statement_timeout = 0');
          if (!triggers) {
            await trx.raw('ALTER TABLE orders DISABLE TRIGGER USER');
            await trx.raw('ALTER TABLE operations DISABLE TRIGGER USER');
          }
          const t0 = performance.now();
          await trx.raw(sql, [workspace, BULK_ORDERS]);
          // The deferred triggers (webhooks) run at commit: run them here, inside the timing.
          await trx.raw('SET CONSTRAINTS ALL IMMEDIATE');
          seconds = (performance.now() - t0) / 1000;
          throw rollback;
        })
        .catch((err) => {
          if (err !== rollback) throw err;
        });
      (triggers ? figures.withTriggers : figures.without).push(seconds);
      log(`bulk insert, ${shape}: ${BULK_ORDERS.toLocaleString('en')} orders ${triggers ? 'with' : 'without'} triggers in ${seconds.toFixed(1)} s`);
    }
    shapes.push(figures);
  }
  return { orders: BULK_ORDERS, shapes };
}

export function bulkInsertSection(b: BulkInsert): string[] {
  const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
  return [
    '## One statement of 100,000 orders with their operations',
    '',
    `\`INSERT … SELECT\` of ${b.orders.toLocaleString('en-US')} orders and an operation each, in one statement, on the real tables against the same with the user triggers of orders and operations disabled (rolled back each time; deferred triggers run inside the timing); without, with, with, without.`,
    '',
    '| Statement | With triggers | Without | Ratio (target ≤ 2×) |',
    '|---|---:|---:|---:|',
    ...b.shapes.map((s) => {
      const ratio = sum(s.withTriggers) / sum(s.without);
      const list = (xs: number[]) => xs.map((x) => `${x.toFixed(1)} s`).join(', ');
      return `| ${s.shape} | ${list(s.withTriggers)} | ${list(s.without)} | ${ratio.toFixed(2)}× ${ratio <= 2 ? 'met' : '**missed**'} |`;
    }),
    '',
  ];
}
