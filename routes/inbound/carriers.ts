import { Router } from 'express';
import type { RequestHandler } from 'express';
import type { Services } from '../../services';
import type { InboundBodies } from '../middleware/inbound-bodies';
import { refuse } from '../middleware/inbound-bodies';
import { STORE_REFUSALS } from './stores';

/** A carrier's message names one parcel: far under this. */
const CARRIER_BODY_LIMIT = '64kb';

/** /hooks/carriers/:id, a carrier's delivery news (docs/delivery.md): the same answers as a store's messages. */
export function inboundCarriersRouter(services: Services, bodies: InboundBodies): Router {
  const router = Router();
  const knownCarrier: RequestHandler = async (req, res, next) => {
    const connection = await services.deliveries.carriers.connection(String(req.params.id));
    if (!connection) return void refuse(res, 404, STORE_REFUSALS[404]);
    res.locals.carrier = connection;
    next();
  };
  router.post('/carriers/:id', knownCarrier, bodies.raw(CARRIER_BODY_LIMIT), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await services.deliveries.carriers.receive(res.locals.carrier, raw, req.headers);
    if (answer.status === 200) return void res.json({ ok: true, result: answer.result });
    res.status(answer.status).json({ error: STORE_REFUSALS[answer.status] });
  });
  return router;
}
