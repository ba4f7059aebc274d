import type { Redis } from 'ioredis';
import { createRedis, redisReady } from '../../db/redis';
import { silentLogger } from './app';

let shared: Redis | undefined;

/**
 * The Redis at REDIS_URL, for tests that need one. Without it the test is skipped, saying why;
 * under CI=true a missing Redis fails the test instead, since CI may skip nothing.
 */
export async function requireRedis(ctx: Mocha.Context): Promise<Redis> {
  const url = process.env.REDIS_URL;
  if (!url) {
    if (process.env.CI === 'true') throw new Error('REDIS_URL must be set when CI=true');
    console.log('      (skipped: REDIS_URL is not set; this test needs a real Redis)');
    ctx.skip();
  }
  if (!shared) {
    shared = createRedis(url!, silentLogger);
    if (!(await redisReady(shared))) throw new Error(`Redis at ${url} is not answering`);
  }
  return shared;
}

export async function closeTestRedis(): Promise<void> {
  await shared?.quit();
  shared = undefined;
}
