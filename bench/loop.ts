import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Knex } from 'knex';
import { ROOT } from '../config';
import { newMessageId, newSigningSecret, signedHeaders } from '../integrations/signing';
import type { Cleanup } from './infra';
import { benchServices, stopProcess } from './infra';
import type { Account } from './seed';
import { api } from './seed';

export interface LoopReport {
  dispatched: number;
  dispatchPerSecond: number;
  latency: { samples: number; p50Ms: number; p99Ms: number };
  reports: number;
  reportsPerSecond: number;
}

const BURST = 2000;
const LATENCY_SAMPLES = 40;
const REPORT_CONCURRENCY = 16;
const BEHIND_ROUTER = { 'x-forwarded-proto': 'https' };

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A voice agent double on loopback: accepts every call.requested at once and notes when it came. */
async function agentDouble(cleanup: Cleanup) {
  const arrivals = new Map<string, number>();
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const data = JSON.parse(body).data as { call_id: string; order: { id: string } };
      if (!arrivals.has(data.order.id)) {
        arrivals.set(data.order.id, performance.now());
        calls.push(data.call_id);
      }
      res.statusCode = 202;
      res.end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.add(
    'agent double',
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, arrivals, calls };
}

/** The key the bench's worker seals and opens third-party secrets with (a service that shares them is started with it). */
export const WORKER_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

/** The Procfile's `worker:` as its own process (production settings), its log in a file; resolves to its stop. */
export async function startWorker(
  options: { databaseUrl: string; tmp: string; cleanup: Cleanup; env?: Record<string, string>; profileDir?: string },
  name = 'worker',
): Promise<() => Promise<void>> {
  const logFile = path.join(options.tmp, `${name}.log`);
  const out = fs.openSync(logFile, 'w');
  // BENCH_CPU_PROF: the worker writes its CPU profile beside the server's, under worker/.
  const profile = options.profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(options.profileDir, 'worker')] : [];
  const child = spawn(process.execPath, [...profile, path.join(ROOT, 'dist', 'worker.js')], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      TZ: 'UTC',
      DATABASE_URL: options.databaseUrl,
      SESSION_SECRET: 'x'.repeat(32),
      JWT_SECRET: 'y'.repeat(32),
      SECRETS_KEY: WORKER_SECRETS_KEY,
      ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'info',
      PUBLIC_BASE_URL: 'https://ocs.bench.invalid',
      ...options.env,
    },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  options.cleanup.add(name, () => stopProcess(child));
  await until('the worker to start', () => fs.readFileSync(logFile, 'utf8').includes('worker started') || child.exitCode !== null, 30_000);
  if (child.exitCode !== null) throw new Error(`worker exited: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
  return () => stopProcess(child);
}

export async function until(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`loop bench: timed out waiting for ${what}`);
    await sleep(5);
  }
}

/**
 * The confirmation loop under load, with the service (production settings) and one worker process
 * (the Procfile's `worker:`) on the bench database: dispatch throughput for a burst of due orders,
 * dispatch latency for single new orders with an idle worker, and `call.ended` reports per second.
 */
export async function loopBench(options: {
  knex: Knex;
  databaseUrl: string;
  service: { url: string };
  account: Account;
  tmp: string;
  cleanup: Cleanup;
  log: (m: string) => void;
}): Promise<LoopReport> {
  const { knex, account, service, log } = options;
  const agent = await agentDouble(options.cleanup);
  const secret = newSigningSecret();
  // Seeded directly: in production an agent URL must be public https, and the double is on loopback.
  await knex('agents').where({ workspace_id: account.workspaceId }).update({ is_order_handler: false });
  await knex('agents').insert({
    workspace_id: account.workspaceId,
    name: 'Bench voice agent',
    kind: 'voice',
    endpoint_url: agent.url,
    secret,
    is_order_handler: true,
  });
  await knex('call_settings')
    .insert({ workspace_id: account.workspaceId, max_attempts: 3, retry_interval_minutes: 120, hours_start: '00:00', hours_end: '24:00' })
    .onConflict('workspace_id')
    .merge();
  const owner = await knex('workspaces').where({ id: account.workspaceId }).first('owner_id');
  await knex('credit_ledger').insert({ user_id: owner.owner_id, kind: 'grant', amount: 1_000_000 });

  // 1. A burst: orders created (with their jobs) before any worker runs, then one worker.
  const services = benchServices(knex);
  log(`loop: creating ${BURST} due orders`);
  for (let i = 0; i < BURST; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        services.orders.create(account.workspaceId, { clientName: `Burst ${i + j}`, phone: '0612345678', storeName: 'Bench', productsName: 'Tea' }),
      ),
    );
  }
  const stopWorker = await startWorker(options);
  await until('the burst to reach the agent', () => agent.arrivals.size >= BURST, 300_000);
  const times = [...agent.arrivals.values()].sort((a, b) => a - b);
  const dispatchPerSecond = (BURST - 1) / ((times[BURST - 1] - times[0]) / 1000);
  log(`loop: ${BURST} dispatched at ${dispatchPerSecond.toFixed(0)}/s`);

  // 2. Latency: one new order at a time, the worker idle in between.
  await sleep(2000);
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i += 1) {
    const res = await api(service.url, account.cookie, 'POST', '/api/orders', {
      clientName: `Latency ${i}`,
      phone: '0612345678',
      storeName: 'Bench',
      productsName: 'Tea',
    });
    const created = performance.now();
    const { id } = (await res.json()) as { id: string };
    await until('a latency sample', () => agent.arrivals.has(id), 30_000);
    latencies.push(agent.arrivals.get(id)! - created);
    await sleep(300 + Math.random() * 700);
  }
  latencies.sort((a, b) => a - b);

  // 3. Results: a signed call.ended for each call of the burst, REPORT_CONCURRENCY at a time.
  // Signed beforehand: the agent's own signing is not the service's work.
  const queue = agent.calls.slice(0, BURST).map((callId) => {
    const body = JSON.stringify({ type: 'call.ended', data: { call_id: callId, outcome: 'confirmed', duration_seconds: 30, summary: 'bench' } });
    return { callId, body, headers: signedHeaders(secret, newMessageId(), body) };
  });
  const t0 = performance.now();
  let failures = 0;
  await Promise.all(
    Array.from({ length: REPORT_CONCURRENCY }, async () => {
      for (let next = queue.pop(); next; next = queue.pop()) {
        const res = await fetch(`${service.url}/hooks/calls/${next.callId}`, {
          method: 'POST',
          headers: { ...BEHIND_ROUTER, 'content-type': 'application/json', ...next.headers },
          body: next.body,
        });
        if (res.status !== 200) failures += 1;
        await res.arrayBuffer();
      }
    }),
  );
  const reportsPerSecond = BURST / ((performance.now() - t0) / 1000);
  if (failures > 0) throw new Error(`loop bench: ${failures} reports were not answered 200`);
  log(`loop: ${BURST} reports at ${reportsPerSecond.toFixed(0)}/s`);
  await stopWorker();
  return {
    dispatched: BURST,
    dispatchPerSecond,
    latency: { samples: latencies.length, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) },
    reports: BURST,
    reportsPerSecond,
  };
}
