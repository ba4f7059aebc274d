import { Redis } from 'ioredis';
import type { Logger } from '../logger';

/**
 * A Redis client that never makes a request wait on Redis: commands fail at once while it is
 * away (no offline queue, one try) and after half a second at most when it does not answer.
 */
export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 500,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  let down = false;
  redis.on('error', (err) => {
    if (!down) logger.error({ err: err.message }, 'redis unavailable');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('redis available again');
    down = false;
  });
  return redis;
}

/** Resolves when the client is ready, or after `timeoutMs` (the caller goes on either way). */
export function redisReady(redis: Redis, timeoutMs = 3000): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
