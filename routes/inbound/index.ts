import { Router } from 'express';
import type { Services } from '../../services';
import type { InboundBodyLimits } from '../middleware/inbound-bodies';
import { inboundBodies } from '../middleware/inbound-bodies';
import { inboundCallsRouter } from './calls';
import { inboundCarrierAccountsRouter } from './carrier-accounts';
import { inboundCarriersRouter } from './carriers';
import { inboundStoresRouter } from './stores';
import { inboundWhatsAppRouter } from './whatsapp';

/**
 * What others send us, under /hooks: a voice agent's reports on a call (`calls.ts`), a store's
 * orders and its platform's callbacks (`stores.ts`), a carrier's delivery news (`carriers.ts`, and `carrier-accounts.ts` for the carriers we ship with) and
 * Meta's WhatsApp webhook (`whatsapp.ts`). Each is authenticated by its signature alone (no
 * session, no cookies, no CSRF token), verified over the raw bytes. A body is read only once the
 * call or connection its path names is known (404 before, the body unread), under the limits of
 * `inboundBodies`, one count of bodies per client address for all of them.
 * (The webhooks we send are services/webhooks/'s business: they go out, these come in.)
 */
export function inboundRouter(services: Services, limits: InboundBodyLimits): Router {
  const bodies = inboundBodies(limits);
  return Router()
    .use(inboundCallsRouter(services, bodies))
    .use(inboundWhatsAppRouter(services, bodies))
    .use(inboundStoresRouter(services, bodies))
    .use(inboundCarriersRouter(services, bodies))
    .use(inboundCarrierAccountsRouter(services, bodies));
}
