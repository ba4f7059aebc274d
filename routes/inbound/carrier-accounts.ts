import { Router } from 'express';
import type { Request, RequestHandler, Response } from 'express';
import type { Services } from '../../services';
import type { InboundBodies } from '../middleware/inbound-bodies';
import { refuse } from '../middleware/inbound-bodies';
import { STORE_REFUSALS } from './stores';

/** A carrier's push names a few parcels: far under this. */
const PUSH_BODY_LIMIT = '256kb';

/** The query's single values (a carrier's subscription check: Yalidine's `crc_token`). */
function queryOf(req: Request): Record<string, string> {
  return Object.fromEntries(Object.entries(req.query).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])));
}

/**
 * /hooks/carrier-accounts/:id[/:token], the news of a carrier the service ships with (docs/carriers.md):
 * verified as the carrier signs it, or by the token of the URL for a carrier that does not sign (the
 * request log never shows it). The same answers as the other hooks: 200 for anything understood,
 * 401, 404, 400, 413, never a 5xx.
 */
export function inboundCarrierAccountsRouter(services: Services, bodies: InboundBodies): Router {
  const router = Router();
  const known: RequestHandler = async (req, res, next) => {
    const account = await services.carrierAccounts.open(null, String(req.params.id));
    if (!account) return void refuse(res, 404, STORE_REFUSALS[404]);
    next();
  };
  const answer = async (req: Request, res: Response) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const token = typeof req.params.token === 'string' ? req.params.token : null;
    const got = await services.carrierNews.receive(String(req.params.id), token, raw, req.headers, queryOf(req));
    if (got.status !== 200) return void res.status(got.status).json({ error: STORE_REFUSALS[got.status] });
    if (typeof got.body === 'string') return void res.type('text/plain').send(got.body);
    res.json(got.body);
  };
  for (const path of ['/carrier-accounts/:id', '/carrier-accounts/:id/:token']) {
    router.post(path, known, bodies.raw(PUSH_BODY_LIMIT), answer);
    // A subscription check by GET (Yalidine's ?subscribe&crc_token=…): no body.
    router.get(path, known, answer);
  }
  return router;
}
