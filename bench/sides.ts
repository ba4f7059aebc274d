import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { ROOT } from '../config';
import type { BaselinePlan } from './baseline';
import type { Cleanup, NodeProcess } from './infra';
import { startNode } from './infra';
import { CpuMeter } from './meters';
import { BASELINE_APPLICATION_NAME } from './sql';

/** The two things compared: the real service and the bare baseline. */

const PUBLIC_BASE_URL = 'https://ocs.bench.invalid';

export interface ServiceProcess extends NodeProcess {
  secrets: { SESSION_SECRET: string; JWT_SECRET: string };
  command: string;
}

/** The node flags of the Procfile's `web:` line, so the bench runs the server as production does. */
export function procfileNodeArgs(): string[] {
  const web = /^web:\s*node\s+(.*)$/m.exec(fs.readFileSync(path.join(ROOT, 'Procfile'), 'utf8'))?.[1] ?? '';
  const words = web.trim().split(/\s+/);
  return words.slice(
    0,
    Math.max(
      0,
      words.findIndex((w) => !w.startsWith('-')),
    ),
  );
}

/**
 * The compiled server as its own process with production settings: NODE_ENV=production,
 * LOG_LEVEL=info (its log goes to a file), the token limiter raised so nothing is refused
 * while every exchange is still counted in Redis.
 */
export async function startService(
  options: {
    databaseUrl: string;
    redisUrl: string;
    logFile: string;
    cleanup: Cleanup;
    /** Another service's secrets, so that its sessions and tokens are good here too. */
    secrets?: ServiceProcess['secrets'];
    /** Without the Procfile's node flags (the memory settings' comparison). */
    plain?: boolean;
    /** The key third-party secrets are sealed with, when a worker of the bench must read them too. */
    secretsKey?: string;
  },
  env: NodeJS.ProcessEnv,
): Promise<ServiceProcess> {
  const secrets = options.secrets ?? { SESSION_SECRET: crypto.randomBytes(32).toString('hex'), JWT_SECRET: crypto.randomBytes(32).toString('hex') };
  const script = env.BENCH_SERVER ? path.resolve(env.BENCH_SERVER) : path.join(ROOT, 'dist', 'server.js');
  const nodeArgs = options.plain ? [] : [...procfileNodeArgs(), ...(env.BENCH_SERVER_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? [])];
  const profileArgs = env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(env.BENCH_CPU_PROF)] : [];
  const server = await startNode(script, {
    name: options.plain ? 'service without the Procfile flags' : 'service',
    cleanup: options.cleanup,
    logFile: options.logFile,
    nodeArgs: [...nodeArgs, ...profileArgs],
    env: {
      ...env,
      ...secrets,
      SECRETS_KEY: options.secretsKey ?? crypto.randomBytes(32).toString('base64'),
      NODE_ENV: 'production',
      TZ: 'UTC',
      PORT: '0',
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      PUBLIC_BASE_URL,
      LOG_LEVEL: 'info',
      BCRYPT_COST: '4',
      TOKEN_LIMIT_PER_IP: '1000000000',
      TOKEN_LIMIT_PER_KEY: '1000000000',
      // The bench signs its accounts up and reports every call's result from one address.
      SIGNUP_LIMIT_PER_IP: '1000000000',
      HOOKS_LIMIT_PER_IP: '1000000000',
    },
  });
  const command = ['node', ...nodeArgs, path.relative(ROOT, script)].join(' ');
  return { ...server, secrets, command };
}

/** What the baseline needs to answer as the service does: the JWT settings, the session secret, its limiters' keys. */
export function baselinePlan(service: ServiceProcess, publishableKey: string): BaselinePlan {
  return {
    jwt: { secret: service.secrets.JWT_SECRET, issuer: PUBLIC_BASE_URL, projectUrl: PUBLIC_BASE_URL, publishableKey },
    sessionSecret: service.secrets.SESSION_SECRET,
    rateLimit: { windowMs: 5 * 60 * 1000, prefix: `rl:bench-baseline:${Date.now()}:` },
  };
}

export function startBaseline(
  plan: BaselinePlan,
  options: { databaseUrl: string; redisUrl: string; logFile: string; cleanup: Cleanup },
  env: NodeJS.ProcessEnv,
): Promise<NodeProcess> {
  return startNode(path.join(__dirname, 'baseline.js'), {
    name: 'baseline',
    cleanup: options.cleanup,
    logFile: options.logFile,
    // Profiled beside the service, so that where each spends its time can be compared per request.
    nodeArgs: env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(env.BENCH_CPU_PROF, 'baseline')] : [],
    env: { ...env, TZ: 'UTC', DATABASE_URL: options.databaseUrl, REDIS_URL: options.redisUrl, BENCH_PLAN: JSON.stringify(plan) },
  });
}

/** CPU meters for both sides: each Node process and the Postgres backends it has connected. */
export function cpuMeters(knex: Knex, service: NodeProcess, baseline: NodeProcess): { service: CpuMeter; baseline: CpuMeter } {
  const backends = (ofBaseline: boolean) => async () => {
    const { rows } = await knex.raw(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
          AND (application_name = ?) = ?`,
      [BASELINE_APPLICATION_NAME, ofBaseline],
    );
    return rows.map((r: { pid: number }) => r.pid);
  };
  return {
    service: new CpuMeter(service.child.pid!, backends(false)),
    baseline: new CpuMeter(baseline.child.pid!, backends(true)),
  };
}
