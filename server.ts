import http from 'node:http';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { EmbeddedDatabase, startEmbeddedPostgres } from './db/embedded';
import { createKnex, createSessionPool } from './db/knex';
import { migrateLatest } from './db/migrate';
import { createRedis, redisReady } from './db/redis';
import { createLogger } from './logger';

const SHUTDOWN_DEADLINE_MS = 25_000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(path.join(config.dataDir, 'postgres'));
    databaseUrl = embedded.url;
    logger.info('DATABASE_URL is not set: using the embedded Postgres under %s', config.dataDir);
  }
  const knex = createKnex(databaseUrl, 10, logger);
  if (!config.isProduction) {
    const applied = await migrateLatest(knex);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
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
  const server = http.createServer(app);
  server.listen(config.port, () => {
    const { port } = server.address() as { port: number };
    logger.info({ url: `http://localhost:${port}`, port }, `listening on http://localhost:${port}`);
  });

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
    await Promise.allSettled([knex.destroy(), sessionPool.end(), redis?.quit()]);
    await embedded?.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
