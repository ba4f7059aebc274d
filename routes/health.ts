import { Router } from 'express';
import type { Knex } from 'knex';

const HEALTH_TIMEOUT_MS = 2000;

/** 200 when Postgres answers within two seconds, 503 otherwise. */
export function healthRouter(knex: Knex): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    try {
      await knex.raw('SELECT 1').timeout(HEALTH_TIMEOUT_MS);
      res.json({ status: 'ok' });
    } catch {
      res.status(503).json({ status: 'unavailable' });
    }
  });
  return router;
}
