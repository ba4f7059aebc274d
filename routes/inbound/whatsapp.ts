import { Router } from 'express';
import type { RequestHandler } from 'express';
import type { Services } from '../../services';
import type { InboundBodies } from '../middleware/inbound-bodies';
import { refuse } from '../middleware/inbound-bodies';

/** A WhatsApp webhook delivery: Meta batches a few messages and statuses, far under this. */
const WHATSAPP_BODY_LIMIT = '1mb';

/**
 * /hooks/whatsapp/:agentId, Meta's WhatsApp webhook: the subscription check, then signed deliveries
 * (the signature over the raw bytes before anything is parsed). Anything signed gets 200: Meta
 * disables a failing webhook.
 */
export function inboundWhatsAppRouter(services: Services, bodies: InboundBodies): Router {
  const router = Router();
  router.get('/whatsapp/:agentId', async (req, res) => {
    const answer = await services.whatsapp.challenge(String(req.params.agentId), req.query);
    if (answer.status === 200) return void res.type('text/plain').send(answer.body);
    res.status(answer.status).json({ error: answer.status === 404 ? 'not_found' : 'forbidden' });
  });
  const knownWhatsApp: RequestHandler = async (req, res, next) => {
    if (!(await services.whatsapp.knows(String(req.params.agentId)))) return void refuse(res, 404, 'not_found');
    next();
  };
  router.post('/whatsapp/:agentId', knownWhatsApp, bodies.raw(WHATSAPP_BODY_LIMIT), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await services.whatsapp.receive(String(req.params.agentId), raw, req.headers['x-hub-signature-256']);
    if (answer.status === 200) return void res.json({ ok: true });
    res.status(answer.status).json({ error: answer.status === 401 ? 'invalid_signature' : 'not_found' });
  });
  return router;
}
