import type { ErrorRequestHandler, Request, Response } from 'express';
import { Router } from 'express';
import type { Config } from '../../config';
import type { Services } from '../../services';
import { hashKey } from '../../services/accounts';
import { bearerCredential } from '../middleware/auth';
import type { LimiterDeps } from '../middleware/rate-limit';
import { createLimiterPair } from '../middleware/rate-limit';

const WINDOW_MS = 5 * 60 * 1000;
// Byte-identical for every cause: missing, malformed, unknown, expired or revoked.
const INVALID_KEY = { error: 'invalid_api_key' };

const rateLimited = (_req: Request, res: Response) => res.status(429).json({ error: 'rate_limited' });

/**
 * POST /api/v1/token: trades an API key for a one-hour access token. No CORS headers on any
 * response (the key must never be in a browser), no caching, no request body read.
 */
export function tokenRouter(services: Services, config: Config, deps: LimiterDeps): Router {
  // The key's hash, found once per exchange: its limit counts by it and its lookup reads by it.
  const keyHashes = new WeakMap<Request, string>();
  const keyHashOf = (req: Request): string => {
    let hash = keyHashes.get(req);
    if (hash === undefined) {
      hash = hashKey(bearerCredential(req) ?? '');
      keyHashes.set(req, hash);
    }
    return hash;
  };
  const router = Router();
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  // Per IP, then per key: counted in one Redis round trip.
  const limits = createLimiterPair(
    deps,
    {
      name: 'token-ip',
      windowMs: WINDOW_MS,
      limit: config.limits.tokenPerIp,
      onLimited: rateLimited,
    },
    {
      name: 'token-key',
      windowMs: WINDOW_MS,
      limit: config.limits.tokenPerKey,
      // Counted by the key's hash: the secret itself never reaches Redis.
      key: keyHashOf,
      onLimited: rateLimited,
    },
  );

  router.post('/', limits, async (req, res) => {
    const key = bearerCredential(req);
    const owner = key ? await services.apiKeys.verify(key, keyHashOf(req)) : null;
    if (!owner) {
      res.status(401).json(INVALID_KEY);
      return;
    }
    res.json(services.tokens.issue(owner));
  });

  const serverError: ErrorRequestHandler = (err, req, res, _next) => {
    req.log.error({ err }, 'token exchange failed');
    res.status(500).json({ error: 'server_error' });
  };
  router.use(serverError);
  return router;
}
