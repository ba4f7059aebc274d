import { loadConfigOrExit } from './config';
import { createKnex } from './db/knex';
import { createBoss, createQueues, Jobs, prepareJobs } from './db/jobs';
import { HostResolver } from './integrations/dns';
import { SignedSender } from './integrations/http';
import { registerHandlers } from './jobs';
import type { Logger } from './logger';
import { createLogger, prettyLogs } from './logger';
import { createServices } from './services';
import type { Config } from './config';

export const WORKER_DRAIN_MS = 20_000;

export interface RunningWorker {
  stop(): Promise<void>;
}

/**
 * The background half of the service: dispatching due calls, retries, time-outs, expired claims.
 * Runs on pg-boss in our own Postgres; any number may run side by side.
 */
export async function startWorker(config: Readonly<Config>, databaseUrl: string, logger: Logger): Promise<RunningWorker> {
  await prepareJobs(databaseUrl);
  const knex = createKnex(databaseUrl, 10, logger);
  const services = createServices(knex, config, new Jobs(knex));
  const sender = new SignedSender(config.calls.allowPrivateUrls, config.calls.deliveryTimeoutMs, new HostResolver(config.calls.dnsServers));
  const boss = createBoss(databaseUrl);
  boss.on('error', (err) => logger.error({ err }, 'job engine error'));
  survivePgBossBookkeeping(logger);
  await boss.start();
  await createQueues(boss);
  await registerHandlers(boss, services, sender, logger, config.publicBaseUrl);
  logger.info('worker started');
  return {
    async stop() {
      // Finish the jobs in hand (a delivery takes at most 10 s), take no new ones.
      await boss.stop({ graceful: true, wait: true, timeout: WORKER_DRAIN_MS });
      sender.close();
      await knex.destroy();
      logger.info('worker stopped');
    },
  };
}

let guarded = false;

/**
 * pg-boss 10 marks a batch complete or failed without awaiting it, so when Postgres goes away at
 * that moment the rejection is unhandled and would end the process. Such a job is simply retried
 * after it expires (our handlers are idempotent), so those rejections are logged; any other
 * unhandled rejection still ends the process as Node would.
 */
function survivePgBossBookkeeping(logger: Logger): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => {
    const stack = reason instanceof Error ? String(reason.stack) : '';
    if (stack.includes('pg-boss')) {
      logger.error({ err: reason }, 'job engine could not record a job result; the job will be retried');
      return;
    }
    logger.fatal({ err: reason }, 'unhandled rejection');
    process.exit(1);
  });
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  if (!config.databaseUrl) {
    console.error(
      'The worker could not start: DATABASE_URL is not set.\nTo fix it: set DATABASE_URL to the same database as the web process (in development, `npm start` runs the worker for you).',
    );
    process.exit(1);
  }
  const logger = createLogger(config.logLevel, { pretty: prettyLogs(config.env) });
  // Listen for signals before starting, so that a SIGTERM during start-up still drains and exits 0.
  let stopRequested: string | undefined;
  let worker: RunningWorker | undefined;
  const shutdown = async (signal: string) => {
    if (stopRequested) return;
    stopRequested = signal;
    if (!worker) return; // start-up finishes first, then stops
    logger.info({ signal }, 'worker shutting down: finishing the jobs in hand');
    setTimeout(() => process.exit(1), 25_000).unref();
    await worker.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  worker = await startWorker(config, config.databaseUrl, logger);
  if (stopRequested) {
    const signal = stopRequested;
    stopRequested = undefined;
    await shutdown(signal);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`The worker could not start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
