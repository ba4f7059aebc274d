import crypto from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import type { Logger } from '../../logger';

export interface LimiterOptions {
  /** Unique per limiter: it prefixes the store's keys. */
  name: string;
  windowMs: number;
  limit: number;
  /** Defaults to the client IP (IPv6 grouped by /56). */
  key?: (req: Request) => string;
  /** Only count requests that fail (status >= 400). */
  countFailuresOnly?: boolean;
  /** Answers a request over the limit; `retryAfter` is in whole seconds. */
  onLimited: (req: Request, res: Response, retryAfter: number) => void;
}

export interface LimiterDeps {
  redis?: Redis;
  logger: Logger;
}

/**
 * rate-limit-redis caches its script SHAs as promises: one that failed while Redis was away would
 * fail every later request too. After any failure the scripts are loaded again on the next request,
 * so limits apply again as soon as Redis is back. Failures are logged (at most every 10 s) and the
 * request is let through (fail-open), here rather than by express-rate-limit's passOnStoreError,
 * which would write to stderr on every request.
 */
class RecoveringRedisStore extends RedisStore {
  private stale = false;
  private readonly logFailure: (err: unknown) => void;

  constructor(options: ConstructorParameters<typeof RedisStore>[0], logger: Logger) {
    super(options);
    this.logFailure = storeFailureLog(logger, this.prefix);
  }

  override async init(options: Parameters<RedisStore['init']>[0]): Promise<void> {
    try {
      await super.init(options);
    } catch (err) {
      this.failed(err);
    }
  }

  override async increment(key: string) {
    if (this.stale) {
      this.stale = false;
      this.incrementScriptSha = this.loadIncrementScript();
      this.getScriptSha = this.loadGetScript();
      this.getScriptSha.catch(() => {});
    }
    try {
      return await super.increment(key);
    } catch (err) {
      this.failed(err);
      // Fail open: count this request as the first of a fresh window.
      return { totalHits: 1, resetTime: new Date(Date.now() + this.windowMs) };
    }
  }

  private failed(err: unknown): void {
    this.stale = true;
    this.logFailure(err);
  }
}

/** Logs a limiter's store failures, at most every 10 s: requests are let through meanwhile. */
function storeFailureLog(logger: Logger, prefix: string): (err: unknown) => void {
  let lastLogged = 0;
  return (err) => {
    if (Date.now() - lastLogged <= 10_000) return;
    lastLogged = Date.now();
    logger.error({ err: (err as Error).message, prefix }, 'rate limit store unavailable: letting requests through');
  };
}

export const clientIp = (req: Request): string => ipKeyGenerator(req.ip ?? '');

/**
 * Builds one limiter with a store of its own. With Redis, counters are shared by every process;
 * if Redis fails, the request is let through (fail-open) and the error is logged.
 */
export function createLimiter(deps: LimiterDeps, options: LimiterOptions): RequestHandler {
  const store = deps.redis
    ? new RecoveringRedisStore(
        {
          prefix: `rl:${options.name}:`,
          sendCommand: (command: string, ...args: string[]) => deps.redis!.call(command, ...args) as Promise<number>,
        },
        deps.logger,
      )
    : undefined;
  return rateLimit({
    windowMs: options.windowMs,
    limit: options.limit,
    store,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: options.name,
    keyGenerator: options.key ?? clientIp,
    skipFailedRequests: false,
    skipSuccessfulRequests: options.countFailuresOnly ?? false,
    passOnStoreError: true,
    // express-rate-limit has already set Retry-After (whole seconds to the window's end).
    handler: (req, res) => options.onLimited(req, res, Number(res.get('Retry-After')) || 1),
  });
}

/**
 * Two limits in a row (the first, then the second only for a request the first let through),
 * counted in one Redis round trip: one script increments both counters as rate-limit-redis would
 * (same keys, same PTTL/SET PX/INCR steps), so the answers, headers and counts are those of two
 * `createLimiter`s in a row. The token exchange takes this path at every request; two limiters
 * cost it two round trips and express-rate-limit's work twice. Without Redis it is the two
 * limiters in a row, in memory. The same fail-open as `createLimiter`.
 */
export function createLimiterPair(deps: LimiterDeps, first: LimiterOptions, second: LimiterOptions): RequestHandler {
  if (!deps.redis) {
    const a = createLimiter(deps, first);
    const b = createLimiter(deps, second);
    return (req, res, next) => a(req, res, (err?: unknown) => (err ? next(err) : b(req, res, next)));
  }
  for (const options of [first, second]) {
    if (options.countFailuresOnly) throw new Error('createLimiterPair counts every request');
  }
  const redis = deps.redis;
  const limits = [first, second].map((options) => ({
    ...options,
    key: options.key ?? clientIp,
    prefix: `rl:${options.name}:`,
    policy: `q=${options.limit}; w=${Math.ceil(options.windowMs / 1000)}`,
  }));
  const args = [String(first.windowMs), String(first.limit), String(second.windowMs)];
  const failed = storeFailureLog(deps.logger, limits.map((l) => l.prefix).join(' '));

  // Redis away: each request counts as the first of a fresh window, as RecoveringRedisStore answers.
  const freshWindows = [1, first.windowMs, 1, second.windowMs];
  return (req, res, next) => {
    const keys = [limits[0].key(req), limits[1].key(req)];
    const answer = (counts: number[]) => {
      for (let i = 0; i < counts.length; i += 2) {
        const limit = limits[i / 2];
        const hits = counts[i];
        const resetSeconds = Math.max(0, Math.ceil(counts[i + 1] / 1000));
        // As express-rate-limit's draft-8 headers: the partition key is a hash of the counter's key.
        res.append('RateLimit', `"${limit.name}"; r=${Math.max(limit.limit - hits, 0)}; t=${resetSeconds}`);
        res.append('RateLimit-Policy', `"${limit.name}"; ${limit.policy}; pk=:${partitionKey(keys[i / 2])}:`);
        if (hits > limit.limit) {
          res.setHeader('Retry-After', String(resetSeconds));
          return limit.onLimited(req, res, resetSeconds || 1);
        }
      }
      next();
    };
    countPair(redis, [`${limits[0].prefix}${keys[0]}`, `${limits[1].prefix}${keys[1]}`], args).then(answer, (err: unknown) => {
      failed(err);
      answer(freshWindows);
    });
  };
}

/** express-rate-limit's draft-8 partition key. */
const partitionKey = (key: string) => Buffer.from(crypto.createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');

/**
 * rate-limit-redis's increment for two keys: the second counted only when the first is within
 * ARGV[2]. Answers hits and milliseconds to the window's end for each counted key.
 */
const PAIR_SCRIPT = `local function hit(key, windowMs)
  local timeToExpire = redis.call("PTTL", key)
  if timeToExpire <= 0 then
    redis.call("SET", key, 1, "PX", windowMs)
    return 1, tonumber(windowMs)
  end
  return redis.call("INCR", key), timeToExpire
end
local hits, ttl = hit(KEYS[1], ARGV[1])
if hits > tonumber(ARGV[2]) then return { hits, ttl } end
local hits2, ttl2 = hit(KEYS[2], ARGV[3])
return { hits, ttl, hits2, ttl2 }`;
const PAIR_SHA = crypto.createHash('sha1').update(PAIR_SCRIPT).digest('hex');

/** The pair script by its SHA, sent whole when Redis does not know it (a new or restarted Redis). */
async function countPair(redis: Redis, keys: [string, string], args: string[]): Promise<number[]> {
  try {
    return (await redis.evalsha(PAIR_SHA, 2, ...keys, ...args)) as number[];
  } catch (err) {
    if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
    return (await redis.eval(PAIR_SCRIPT, 2, ...keys, ...args)) as number[];
  }
}
