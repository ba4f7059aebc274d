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
  private lastLogged = 0;

  constructor(options: ConstructorParameters<typeof RedisStore>[0], private readonly logger: Logger) {
    super(options);
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
    if (Date.now() - this.lastLogged > 10_000) {
      this.lastLogged = Date.now();
      this.logger.error({ err: (err as Error).message, prefix: this.prefix }, 'rate limit store unavailable: letting requests through');
    }
  }
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
          sendCommand: (command: string, ...args: string[]) =>
            deps.redis!.call(command, ...args) as Promise<number>,
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
