import http from 'node:http';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { createApp } from './app';
import { loadConfigOrExit } from './config';
import type { EmbeddedDatabase } from './db/embedded';
import { EmbeddedPostgresError, startEmbeddedPostgres } from './db/embedded';
import { createKnex, createSessionPool } from './db/knex';
import { migrateLatest } from './db/migrate';
import { createRedis, redisReady } from './db/redis';
import { createLogger, prettyLogs } from './logger';
import { prepareJobs } from './db/jobs';
import type { RunningWorker } from './worker';

const SHUTDOWN_DEADLINE_MS = 25_000;
const HEADERS_TIMEOUT_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel, { pretty: prettyLogs(config.env) });

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(path.join(config.dataDir, 'postgres'));
    databaseUrl = embedded.url;
    logger.info({ dataDir: embedded.dataDir }, 'DATABASE_URL is not set: using the embedded Postgres, its data in %s', embedded.dataDir);
  }
  const knex = createKnex(databaseUrl, 10, logger);
  if (!config.isProduction) {
    const applied = await migrateLatest(knex, { secretsKey: config.secretsKey });
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  }
  let worker: RunningWorker | undefined;
  if (config.inProcessWorker) {
    // Development: the one command shows the whole loop. Production runs `worker:` dynos instead.
    // Loaded only here: a production web process never holds the worker's code in memory.
    const { startWorker } = await import('./worker.js');
    worker = await startWorker(config, databaseUrl, logger);
  } else if (!config.isProduction) {
    await prepareJobs(databaseUrl);
  }
  const sessionPool = createSessionPool(databaseUrl, (err) => logger.error({ err }, 'session pool error'));

  let redis: Redis | undefined;
  if (config.redisUrl) {
    redis = createRedis(config.redisUrl, logger);
    await redisReady(redis);
  } else {
    logger.warn('REDIS_URL is not set: rate limits are counted in this process only');
  }

  const app = createApp({ config, knex, sessionPool, logger, redis });
  // A sender has 10 s to send its headers (Node cannot tell the path before they are in; no client
  // of ours needs longer), checked every second. Bodies keep Node's 300 s (an import's upload);
  // /hooks sets its own, shorter limit (routes/middleware/inbound-bodies.ts).
  const server = http.createServer({ headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 }, app);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, resolve);
    });
  } catch (err) {
    await worker?.stop();
    await Promise.allSettled([knex.destroy(), sessionPool.end(), redis?.quit()]);
    await embedded?.stop();
    throw new StartupError(listenProblem(err as NodeJS.ErrnoException, config.port));
  }
  const { port } = server.address() as { port: number };
  logger.info({ url: `http://localhost:${port}`, port }, `listening on http://localhost:${port}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    setTimeout(() => {
      logger.error('shutdown deadline passed; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    // Stop accepting; idle keep-alive sockets close now, busy ones once their response is sent.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await worker?.stop();
    await Promise.allSettled([knex.destroy(), sessionPool.end(), redis?.quit()]);
    await embedded?.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** A start-up failure whose message is the whole explanation (no stack trace needed). */
class StartupError extends Error {}

function listenProblem(err: NodeJS.ErrnoException, port: number): string {
  if (err.code === 'EADDRINUSE') {
    return `The server could not start: port ${port} is already in use by another program.\nTo fix it: stop that program, or start with another port, e.g. PORT=3001 npm start.`;
  }
  if (err.code === 'EACCES') {
    return `The server could not start: this user may not listen on port ${port} (ports below 1024 need privileges).\nTo fix it: start with a port above 1023, e.g. PORT=3000 npm start.`;
  }
  return `The server could not start: listening on port ${port} failed (${err.code ?? err.message}).\nTo fix it: check PORT, or start with another port, e.g. PORT=3001 npm start.`;
}

main().catch((err) => {
  if (err instanceof EmbeddedPostgresError || err instanceof StartupError) console.error(err.message);
  else console.error(`The server could not start: ${err instanceof Error ? err.message : String(err)}\n`, err);
  process.exit(1);
});
