import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { ROOT } from '../config';
import { createKnex } from '../db/knex';
import { migrateLatest } from '../db/migrate';
import { prepareJobs } from '../db/jobs';
import { Cleanup, freshDatabase, machine, redisUrl } from './infra';
import type { CpuMeter } from './meters';
import { MemorySampler } from './meters';
import type { LoadOptions } from './load';
import { compare, probe } from './load';
import { loopBench } from './loop';
import { ordersAtScale } from './orders';
import { deliveriesAtScale } from './deliveries';
import { webhookBench } from './webhooks';
import { compressionFigures } from './compression';
import { importBombBench } from './import-bomb';
import { bulkInsertBench, importScalingBench } from './import-scaling';
import { intakeBench } from './intake';
import type { Report, ScenarioResult } from './report';
import { renderReport } from './report';
import type { Scenario } from './scenarios';
import { scenarios } from './scenarios';
import { createKeys, fillerWorkspaces, insertOrders, signUp } from './seed';
import { baselinePlan, cpuMeters, startBaseline, startService } from './sides';
import { BARE_CREATE, BARE_TABLES, BASELINE_CREATE, BASELINE_READS } from './sql';
import { settingsBench } from './settings';
import { shippingBench } from './shipping';

/**
 * `npm run bench`: the compiled server (production settings) against a bare baseline on the same
 * fresh database and Redis, in one run; see README "Benchmarks". Knobs for experiments (the
 * defaults are the benchmark): BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_SCENARIOS (e.g.
 * "a,c,scale"), BENCH_SERVER (another compiled server.js), BENCH_SERVER_NODE_ARGS (extra node flags
 * for the server), BENCH_CPU_PROF (a directory: the server runs with --cpu-prof, and the baseline
 * too, into its baseline/ subdirectory), BENCH_RESULTS (where the Markdown goes; default
 * bench/results.md), BENCH_AGAINST (another compiled server.js
 * run in the baseline's place, with the same flags and secrets: a change's before → after; both
 * sides' Postgres backends are then counted as the service's, so compare Node CPU only),
 * BENCH_ROUNDS (alternating segments per side, default 6) and BENCH_RATE (a fixed total req/s per
 * side instead of all it can answer: Node CPU per request compared at the same load),
 * BENCH_DELIVERIES_STATS_ONLY=1 (scenario `deliveries` measures the statistics alone, without the
 * carriers' reports before and after them).
 */
const env = process.env;
const load: LoadOptions = {
  connections: 32,
  warmupSeconds: Number(env.BENCH_WARMUP_SECONDS ?? 3),
  seconds: Number(env.BENCH_SECONDS ?? 24),
  rounds: Number(env.BENCH_ROUNDS ?? 6),
  rate: env.BENCH_RATE ? Number(env.BENCH_RATE) : undefined,
};
const only = env.BENCH_SCENARIOS?.split(',').map((s) => s.trim());
const wanted = (id: string) => !only || only.includes(id);
const resultsFile = env.BENCH_RESULTS ?? path.join(ROOT, 'bench', 'results.md');
const FILLER_WORKSPACES = 1000;
const FILLER_ORDERS_EACH = 1000;
const KEY_POOL = 200;
/** The issue's four hot scenarios: the memory target and the memory flags' cost are measured under them. */
export const HOT = ['a', 'c', 'd', 'e'];
const started = Date.now();
const log = (message: string) => console.error(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}`);

async function timed<T>(what: string, work: () => Promise<T>): Promise<[T, number]> {
  const t0 = Date.now();
  const value = await work();
  const seconds = (Date.now() - t0) / 1000;
  log(`${what}: ${seconds.toFixed(1)} s`);
  return [value, seconds];
}

type Sides = { service: { url: string; meter: CpuMeter }; baseline: { url: string; meter: CpuMeter } };

/**
 * Both sides answer 2xx with the same answer: a list the same orders, field for field in the same
 * JSON; a token exchange the same fields. (A new order is made by each side, so only its status is compared.)
 */
async function checkAlike(scenario: Scenario, sides: Sides): Promise<void> {
  const service = await probe(sides.service.url, scenario.service);
  const baseline = await probe(sides.baseline.url, scenario.baseline);
  const orders = (body: unknown) => JSON.stringify((body as { orders?: unknown[] })?.orders);
  const fields = (body: unknown) => JSON.stringify(Object.keys((body ?? {}) as object).sort());
  const problem =
    service.status >= 300 || baseline.status >= 300
      ? `service answered ${service.status}, baseline ${baseline.status}`
      : orders(service.body) !== orders(baseline.body)
        ? 'the two sides list different orders, or write them differently'
        : scenario.service.method === 'GET' || scenario.service.path !== '/api/orders'
          ? fields(service.body) !== fields(baseline.body)
            ? `the service answers ${fields(service.body)}, the baseline ${fields(baseline.body)}`
            : undefined
          : undefined;
  if (problem)
    throw new Error(
      `scenario ${scenario.id}: ${problem}\nservice: ${JSON.stringify(service.body).slice(0, 600)}\nbaseline: ${JSON.stringify(baseline.body).slice(0, 600)}`,
    );
}

async function runScenario(scenario: Scenario, sides: Sides, scaled = false): Promise<ScenarioResult> {
  const id = scaled ? `${scenario.id}@1M` : scenario.id;
  log(`scenario ${id}: ${scenario.title}`);
  await checkAlike(scenario, sides);
  const { service, baseline } = await compare({ ...sides.service, target: scenario.service }, { ...sides.baseline, target: scenario.baseline }, load);
  log(`  service ${service.rps.toFixed(0)} req/s, baseline ${baseline.rps.toFixed(0)} req/s`);
  return {
    id,
    title: scaled ? `${scenario.title}, 1M other orders` : scenario.title,
    target: scaled ? undefined : scenario.target,
    cpuTarget: scaled ? undefined : scenario.cpuTarget,
    service,
    baseline,
  };
}

/** The plan of a workspace's list of orders, newest first (the baseline's statement: the service's walks the same index). */
async function explain(knex: Knex, workspace: string): Promise<string> {
  const { rows } = await knex.raw(`EXPLAIN (ANALYZE, BUFFERS) ${BASELINE_READS.list.replace('$1', '?')}`, [workspace]);
  return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
}

async function countLogLines(file: string): Promise<{ lines: number; errors: number }> {
  let lines = 0;
  let errors = 0;
  let rest = '';
  for await (const chunk of fs.createReadStream(file, 'utf8')) {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    lines += parts.length;
    errors += parts.filter((l) => /"level":(50|60)/.test(l)).length;
  }
  return { lines, errors };
}

async function main(cleanup: Cleanup): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ocs-bench-'));
  cleanup.add('temporary directory', async () => fs.rmSync(tmp, { recursive: true, force: true }));
  const db = await freshDatabase(tmp, cleanup);
  const redis = await redisUrl(cleanup);
  // No statement timeout for the bench's own statements: seeding a million orders and their calls,
  // and the VACUUM after it, can take longer than the service's 10 s on a slow machine.
  const knex = createKnex(db.url, 10, undefined, 0);
  cleanup.add('bench database pool', () => knex.destroy());
  // What the release step does: migrations, then the job engine's schema and queues.
  await timed('migrations', () => migrateLatest(knex));
  await timed('job queues', () => prepareJobs(db.url));

  const where = { databaseUrl: db.url, redisUrl: redis.url, cleanup };
  // First, on the fresh database: the first imports a new deployment sees, then the bulk statement.
  const importScaling = wanted('import-scaling')
    ? await importScalingBench({ knex, where, logFile: path.join(tmp, 'service-import-scaling.log'), env, log })
    : undefined;
  const bulkInsert = wanted('bulk-insert') ? await bulkInsertBench(knex, log) : undefined;
  const service = await startService({ ...where, logFile: path.join(tmp, 'service.log') }, env);
  const serverMemory = new MemorySampler(service.child.pid!);
  log(`service: ${service.command} on ${service.url} (pid ${service.child.pid}); ${db.where}; Redis: ${redis.where}`);

  const [accounts] = await timed('seed: 3 accounts, 2,050 orders, keys, an access token', async () => {
    const stamp = Date.now();
    const small = await signUp(service.url, knex, `small-${stamp}@bench.invalid`, 'Small shop');
    const large = await signUp(service.url, knex, `large-${stamp}@bench.invalid`, 'Large shop');
    const writer = await signUp(service.url, knex, `writer-${stamp}@bench.invalid`, 'Busy shop');
    await insertOrders(knex, [small.workspaceId], 50);
    await insertOrders(knex, [large.workspaceId], 2000);
    const keys = await createKeys(service.url, small, KEY_POOL);
    const exchange = await fetch(`${service.url}/api/v1/token`, { method: 'POST', headers: { authorization: `Bearer ${keys[0]}` } });
    if (exchange.status !== 200) throw new Error(`token exchange answered ${exchange.status}`);
    const token = (await exchange.json()) as { access_token: string; publishable_key: string };
    await knex.raw('ANALYZE');
    return { small, large, writer, keys, access: { token: token.access_token, publishableKey: token.publishable_key } };
  });

  const plan = baselinePlan(service, accounts.access.publishableKey);
  // BENCH_AGAINST: the "baseline" side is another build of the service (before → after of a change).
  const baseline = env.BENCH_AGAINST
    ? await startService({ ...where, logFile: path.join(tmp, 'against.log'), secrets: service.secrets }, { ...env, BENCH_SERVER: env.BENCH_AGAINST })
    : await startBaseline(plan, { ...where, logFile: path.join(tmp, 'baseline.log') }, env);
  const baselineMemory = new MemorySampler(baseline.child.pid!);
  const meters = cpuMeters(knex, service, baseline);
  const sides: Sides = { service: { url: service.url, meter: meters.service }, baseline: { url: baseline.url, meter: meters.baseline } };

  const all = scenarios(accounts);
  const results: ScenarioResult[] = [];
  const rssBeforeLoad = serverMemory.mark();
  for (const scenario of all.filter((s) => wanted(s.id))) {
    results.push({ ...(await runScenario(scenario, sides)), serverRssMb: serverMemory.mark() });
  }

  let intake: Report['intake'];
  if (wanted('intake')) {
    log('store intake: signed Shopify orders/create against POST /api/orders');
    const account = await signUp(service.url, knex, `intake-${Date.now()}@bench.invalid`, 'Storefront shop');
    const countOrders = async (workspaceId: string, source: string) =>
      Number(((await knex('orders').where({ workspace_id: workspaceId, source }).count('* as n').first()) as { n: string }).n);
    intake = await intakeBench({ serviceUrl: service.url, account, meter: meters.service, load, countOrders });
    log(`  intake ${intake.intake.rps.toFixed(0)}/s (p99 ${intake.intake.p99} ms), POST /api/orders ${intake.create.rps.toFixed(0)}/s`);
  }

  // The Procfile's memory flags against none, under the four scenarios.
  const settings = wanted('settings')
    ? await settingsBench({ service, where, logFile: path.join(tmp, 'service-plain.log'), env, scenarios: all.filter((s) => HOT.includes(s.id)), load, log })
    : undefined;

  const compression = wanted('compression') ? await compressionFigures(service.url, accounts.small) : undefined;

  const importBomb = wanted('import-bomb')
    ? await importBombBench({ knex, where, secrets: service.secrets, logFile: path.join(tmp, 'service-import-bomb.log'), env, log })
    : undefined;

  let loop: Report['loop'];
  if (wanted('loop')) {
    const account = await signUp(service.url, knex, `loop-${Date.now()}@bench.invalid`, 'Loop shop');
    loop = await loopBench({ knex, databaseUrl: db.url, service, account, tmp, cleanup, log });
  }

  let webhooks: Report['webhooks'];
  if (wanted('webhooks')) {
    const account = await signUp(service.url, knex, `webhooks-${Date.now()}@bench.invalid`, 'Webhook shop');
    webhooks = await webhookBench({ knex, databaseUrl: db.url, serviceUrl: service.url, account, tmp, cleanup, log });
  }

  let scale: Report['scale'];
  const first = results.find((r) => r.id === 'a');
  if (first && wanted('scale')) {
    const [, seedSeconds] = await timed(`seed: ${FILLER_WORKSPACES} workspaces × ${FILLER_ORDERS_EACH} orders, ANALYZE`, async () => {
      const fillers = await fillerWorkspaces(knex, FILLER_WORKSPACES);
      for (let i = 0; i < fillers.length; i += 20) await insertOrders(knex, fillers.slice(i, i + 20), FILLER_ORDERS_EACH);
      await knex.raw('ANALYZE');
    });
    serverMemory.mark();
    const result = { ...(await runScenario(all[0], sides, true)), serverRssMb: serverMemory.mark() };
    scale = { result, of: first, seedSeconds, explain: await explain(knex, accounts.small.workspaceId) };
  }

  const orders = wanted('orders') ? await ordersAtScale({ knex, serviceUrl: service.url, memory: serverMemory, meter: meters.service, log }) : undefined;
  const deliveries = wanted('deliveries')
    ? await deliveriesAtScale({ knex, serviceUrl: service.url, memory: serverMemory, meter: meters.service, log })
    : undefined;

  const shipping = wanted('shipping') ? await shippingBench({ knex, where, tmp, env, log }) : undefined;

  const memory = { serverPeakMb: serverMemory.stop(), serverBeforeLoadMb: rssBeforeLoad, baselinePeakMb: baselineMemory.stop() };
  const { count: orderCount } = (await knex('orders').count('* as count').first()) as { count: number };
  const { rows: pgVersion } = await knex.raw('SHOW server_version');
  const logs = await countLogLines(service.logFile);
  const report: Report = {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    machine: machine(),
    versions: `Node ${process.version}, PostgreSQL ${pgVersion[0].server_version}, autocannon 9`,
    setup: [
      `Database: ${db.where}; Redis: ${redis.where}. Load generator, service, baseline, Postgres and Redis all share this machine.`,
      `${load.connections} connections per scenario; ${load.warmupSeconds} s warm-up, then ${load.seconds} s measured per side in ${load.rounds} alternating segments (service, baseline, baseline, service, service, baseline…), so drift on a shared machine hits both alike and neither side always goes first. Latency percentiles come from every measured response but each connection’s first of a segment: autocannon opens new connections for each segment, and large answers crawl over fresh loopback connections on this machine, on both sides alike (see the Tally class in bench/load.ts); the targets table gives each p99 with those first answers too. Throughput and CPU per request count every answer.`,
      `Service: \`${service.command}\` (the Procfile's web command), NODE_ENV=production, LOG_LEVEL=info: one log line per request, to a file (${logs.lines.toLocaleString('en-US')} lines, ${logs.errors} at error level or above). Token limits raised to 10⁹, still counted in Redis.`,
      `Orders in the table at the end: ${orderCount.toLocaleString('en-US')}. Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    ],
    scenarios: results,
    scale,
    loop,
    webhooks,
    orders,
    deliveries,
    shipping,
    compression,
    importBomb,
    importScaling,
    bulkInsert,
    intake,
    settings,
    memory,
    statements: [
      { scenario: 'Session (a, b, c, c0)', sql: [BASELINE_READS.session] },
      { scenario: 'List (a, b)', sql: [BASELINE_READS.list] },
      { scenario: 'List for a member (e): the membership checked in the same statement', sql: [BASELINE_READS.memberList] },
      {
        scenario: 'Create (c), the baseline’s own (one transaction)',
        sql: ['BEGIN', BASELINE_CREATE.order, BASELINE_CREATE.operation, BASELINE_CREATE.job, 'COMMIT'],
      },
      {
        scenario: 'Create (c0), the same into the copies without triggers',
        sql: [
          ...BARE_TABLES.create,
          BARE_TABLES.jobs('<the job partition of operation-due>'),
          'BEGIN',
          BARE_CREATE.order,
          BARE_CREATE.operation,
          BARE_CREATE.job,
          'COMMIT',
        ],
      },
      { scenario: 'Key lookup (d)', sql: [BASELINE_READS.key] },
    ],
  };
  // The hand-kept record of each performance change, before → after, goes with every report.
  const changes = path.join(ROOT, 'bench', 'changes.md');
  const markdown = [renderReport(report), ...(fs.existsSync(changes) ? ['', fs.readFileSync(changes, 'utf8').trim()] : [])].join('\n');
  fs.writeFileSync(resultsFile, `${markdown}\n`);
  console.log(markdown);
  log(`written to ${path.relative(process.cwd(), resultsFile)}`);
}

const cleanup = new Cleanup();
let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await cleanup.run();
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(130));
process.on('SIGTERM', () => void stop(143));
main(cleanup)
  .then(() => stop(0))
  .catch((err) => {
    console.error(err);
    return stop(1);
  });
