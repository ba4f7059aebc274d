import { Router } from 'express';
import type { RequestHandler } from 'express';
import type { Services } from '../../services';
import type { IntakeConnection } from '../../services/stores';
import type { InboundBodies } from '../middleware/inbound-bodies';
import { refuse } from '../middleware/inbound-bodies';

/** A store's message: Shopify's largest orders stay well under this. */
const STORE_BODY_LIMIT = '1mb';
/** What a store's (and a carrier's) message gets besides 200, by status. */
export const STORE_REFUSALS = { 400: 'unreadable_body', 401: 'invalid_signature', 404: 'not_found' } as const;

/**
 * /hooks/stores/:id, a store's orders: the signature over the raw bytes is the only key, checked
 * before anything is parsed or written; every signed message we understand gets 200. Beside it, the
 * platforms' own callbacks: WooCommerce's keys of a one-click connection, Shopify's privacy topics.
 */
export function inboundStoresRouter(services: Services, bodies: InboundBodies): Router {
  const router = Router();
  const knownConnection: RequestHandler = async (req, res, next) => {
    const connection = await services.storeIntake.connection(String(req.params.id));
    if (!connection) return void refuse(res, 404, STORE_REFUSALS[404]);
    res.locals.connection = connection;
    next();
  };
  router.post('/stores/:id', knownConnection, bodies.raw(STORE_BODY_LIMIT), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await services.storeIntake.receive(res.locals.connection as IntakeConnection, raw, req.headers);
    if (answer.status === 200) return void res.json({ ok: true, result: answer.result });
    res.status(answer.status).json({ error: STORE_REFUSALS[answer.status] });
  });
  // WooCommerce's server posts the keys of a one-click connection here: the single-use user_id nonce is the only key.
  router.post('/stores/:id/keys', bodies.raw('16kb'), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (await services.storeConnect.wooKeys(String(req.params.id), raw)) return void res.json({ ok: true });
    res.status(404).json({ error: 'not_found' });
  });
  // Shopify's privacy topics for the app, signed with its client secret.
  router.post('/shopify/privacy', bodies.raw('64kb'), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const status = await services.storeConnect.shopifyPrivacy(raw, req.headers);
    if (status === 200) return void res.json({ ok: true });
    res.status(status).json({ error: STORE_REFUSALS[status] });
  });
  return router;
}
