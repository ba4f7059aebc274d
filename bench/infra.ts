import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import pg from 'pg';
import { startEmbeddedPostgres } from '../db/embedded';
import { Jobs } from '../db/jobs';
import { Secrets } from '../integrations/secrets';
import { createServices } from '../services';

/** Everything the run started, stopped in reverse order whatever happens. */
export class Cleanup {
  private readonly steps: Array<{ name: string; stop: () => Promise<unknown> }> = [];

  add(name: string, stop: () => Promise<unknown>): void {
    this.steps.push({ name, stop });
  }

  async run(): Promise<void> {
    while (this.steps.length > 0) {
      const { name, stop } = this.steps.pop()!;
      try {
        await stop();
      } catch (err) {
        console.error(`bench: could not stop ${name}: ${(err as Error).message}`);
      }
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A fresh database: on the server of DATABASE_URL (a new database, dropped at the end), else an
 * embedded Postgres in `tmp` (stopped at the end; `tmp` goes with the run's temporary directory).
 */
export async function freshDatabase(tmp: string, cleanup: Cleanup): Promise<{ url: string; where: string }> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    fs.chmodSync(tmp, 0o755); // Postgres runs as its own OS user when we are root.
    const embedded = await startEmbeddedPostgres(path.join(tmp, 'postgres'), 'bench');
    cleanup.add('embedded Postgres', () => embedded.stop());
    return { url: embedded.url, where: 'embedded Postgres (fresh data directory)' };
  }
  const name = `ocs_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // BENCH_KEEP_DATABASE=1: the database stays after the run (its seed kept for EXPLAIN experiments); drop it yourself.
  if (process.env.BENCH_KEEP_DATABASE === '1')
    return { url: url.toString(), where: `fresh database \`${name}\` on DATABASE_URL's server (kept: BENCH_KEEP_DATABASE)` };
  cleanup.add(`database ${name}`, async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  });
  return { url: url.toString(), where: `fresh database \`${name}\` on DATABASE_URL's server (dropped at the end)` };
}

/** REDIS_URL, else a throwaway redis-server on a free port, stopped at the end. */
export async function redisUrl(cleanup: Cleanup): Promise<{ url: string; where: string }> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, where: 'REDIS_URL' };
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    throw new Error('REDIS_URL is not set and redis-server is not installed: the token scenario needs Redis');
  }
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  cleanup.add('redis-server', () => stopProcess(child));
  for (let i = 0; i < 100; i++) {
    if (await canConnect(port)) return { url: `redis://127.0.0.1:${port}`, where: 'throwaway redis-server' };
    await sleep(50);
  }
  throw new Error('redis-server did not start');
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface NodeProcess {
  child: ChildProcess;
  url: string;
  logFile: string;
}

/**
 * Starts a Node script as its own process, its output going to `logFile` (a file, so a busy
 * server never blocks on a pipe nobody reads), and resolves once it has logged its URL.
 */
export async function startNode(
  script: string,
  options: { env: NodeJS.ProcessEnv; logFile: string; nodeArgs?: string[]; cleanup: Cleanup; name: string },
): Promise<NodeProcess> {
  const out = fs.openSync(options.logFile, 'w');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script], {
    env: options.env,
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  options.cleanup.add(options.name, () => stopProcess(child));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const match = /"url":"(http:\/\/[^"]+)"/.exec(fs.readFileSync(options.logFile, 'utf8'));
    if (match) return { child, url: match[1].replace('localhost', '127.0.0.1'), logFile: options.logFile };
    await sleep(50);
  }
  throw new Error(`${options.name} did not start:\n${fs.readFileSync(options.logFile, 'utf8').slice(-2000)}`);
}

/** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export function machine(): string {
  const cpus = os.cpus();
  return `${os.availableParallelism()} CPUs (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}`;
}

/**
 * The service layer in the bench's own process, with production settings, for work a scenario does
 * directly (bursts of orders, plans, captured statements). `jwtSecret` and `publishableKey` matter
 * only where tokens are checked; `allowPrivateUrls` where it calls a double on loopback.
 */
export function benchServices(knex: Knex, options: { jwtSecret?: string; publishableKey?: string; allowPrivateUrls?: boolean } = {}) {
  return createServices(
    knex,
    {
      bcryptCost: 4,
      jwtSecret: options.jwtSecret ?? 'x'.repeat(32),
      secretsKey: Secrets.newKey(),
      secretsOldKeys: [],
      publicBaseUrl: 'https://ocs.bench.invalid',
      publishableKey: options.publishableKey ?? 'pk',
      isProduction: true,
      carrierOrigins: {},
      calls: {
        cost: 1,
        claimMinutes: 15,
        resultTimeoutMinutes: 30,
        allowPrivateUrls: options.allowPrivateUrls ?? true,
        deliveryTimeoutMs: 10_000,
        whatsappCost: 0,
      },
      stores: { shopifyApiVersion: '2025-10' },
      whatsapp: { apiOrigin: 'https://graph.facebook.invalid', apiVersion: 'v24.0' },
    },
    new Jobs(knex),
  );
}
