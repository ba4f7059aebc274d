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

/**
 * A limit on refusals only, that costs an accepted request nothing: no counter is read or written
 * for it. Each refused answer (a 4xx) is counted before it is sent, in Redis when there is one (so
 * every process adds to one count) or in memory; once a client's count reaches the limit, the
 * process that counted it answers that client `onLimited` until the window's end, with the draft-8
 * `RateLimit`/`RateLimit-Policy` headers and `Retry-After` express-rate-limit would send. Another
 * process learns of the limit at that client's next refusal there. Fail-open as the others.
 *
 * For a store's intake: a flash sale's accepted messages must never be slowed or refused by a
 * counter, while a flood of bad signatures from one address is stopped.
 */
export function createRefusalLimiter(deps: LimiterDeps, options: Omit<LimiterOptions, 'countFailuresOnly'>): RequestHandler {
  const key = options.key ?? clientIp;
  const prefix = `rl:${options.name}:`;
  const windowSeconds = Math.ceil(options.windowMs / 1000);
  const policy = `"${options.name}"; q=${options.limit}; w=${windowSeconds}`;
  const failed = storeFailureLog(deps.logger, prefix);
  /** Clients over the limit, and when their window ends (ms since the epoch). */
  const limited = new Map<string, number>();
  const inMemory = new Map<string, { hits: number; resetAt: number }>();

  const countInMemory = (client: string): [number, number] => {
    const now = Date.now();
    if (inMemory.size > 10_000) for (const [k, v] of inMemory) if (v.resetAt <= now) inMemory.delete(k);
    const entry = inMemory.get(client);
    if (!entry || entry.resetAt <= now) {
      inMemory.set(client, { hits: 1, resetAt: now + options.windowMs });
      return [1, options.windowMs];
    }
    entry.hits += 1;
    return [entry.hits, entry.resetAt - now];
  };
  const count = async (client: string): Promise<[number, number]> => {
    if (!deps.redis) return countInMemory(client);
    try {
      const [hits, ttl] = (await deps.redis.eval(REFUSAL_SCRIPT, 1, `${prefix}${client}`, String(options.windowMs))) as number[];
      return [hits, ttl];
    } catch (err) {
      failed(err);
      return [1, options.windowMs];
    }
  };

  return (req, res, next) => {
    const client = key(req);
    const until = limited.get(client);
    if (until !== undefined) {
      const seconds = Math.ceil((until - Date.now()) / 1000);
      if (seconds > 0) {
        res.setHeader('RateLimit-Policy', `${policy}; pk=:${partitionKey(client)}:`);
        res.setHeader('RateLimit', `"${options.name}"; r=0; t=${seconds}`);
        res.setHeader('Retry-After', String(seconds));
        return options.onLimited(req, res, seconds);
      }
      limited.delete(client);
    }
    // A refusal is counted before its answer leaves, so the client's next request already sees it.
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (res.statusCode < 400 || res.statusCode >= 500) return end(...args);
      void count(client).then(([hits, ttl]) => {
        if (hits >= options.limit) limited.set(client, Date.now() + ttl);
        end(...args);
      });
      return res;
    }) as Response['end'];
    next();
  };
}

/** INCR with the window set on the first hit; answers hits and milliseconds to the window's end. */
const REFUSAL_SCRIPT = `local hits = redis.call("INCR", KEYS[1])
if hits == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[1]) end
return { hits, redis.call("PTTL", KEYS[1]) }`;
