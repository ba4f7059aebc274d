import { Router } from 'express';
import type { Request } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import type { Services } from '../../services';
import { requirePageWorkspace } from '../middleware/auth';
import { csrfToken, requireCsrfToken } from '../middleware/csrf';
import { accountPages } from './account';
import { agentPages } from './agents';
import { apiKeyPages } from './api-keys';
import { authPages } from './auth';
import { callPages } from './calls';
import { creditPages } from './credits';
import { customerPages } from './customers';
import { deliveryPages } from './deliveries';
import { shippingPages } from './shipping';
import { importPages, receiveImportUpload } from './imports';
import { joinPages } from './join';
import { orderPages } from './orders';
import { settingsPages } from './settings';
import { statsPages } from './stats';
import { storePages } from './stores';
import { teamPages } from './team';
import { localeHelpers } from './view-helpers';
import { webhookPages } from './webhooks';
import { workspacePages } from './workspace';

export interface PageDeps {
  config: Config;
  logger: Logger;
  redis?: Redis;
}

/** A document load, by Fetch-Metadata where the browser sends it (images, fetches and the like are not). */
function isPageLoad(req: Request): boolean {
  const dest = req.get('sec-fetch-dest');
  return dest === undefined || dest === 'document';
}

/** The dashboard: EJS pages and their plain form posts. */
export function pagesRouter(services: Services, deps: PageDeps): Router {
  const router = Router();
  router.use((req, res, next) => {
    res.locals.ctx = req.ctx;
    // Dates, amounts, statuses… in the request's own language (chooseLanguage ran before this router).
    Object.assign(res.locals, localeHelpers(res.locals.lang, req.t));
    // The path alone (never the query) marks the current page in the navigation.
    res.locals.currentPath = req.path;
    // Lazy, so that a page without a form does not create a session for an anonymous visitor.
    res.locals.csrf = () => csrfToken(req);
    // A creation form's one-time token: a reload or a second tap of its button creates nothing.
    res.locals.formToken = () => services.formTokens.issue();
    // Only a page load takes the one-time notice: a favicon or other subresource request must not eat it.
    if (req.session?.notice && isPageLoad(req)) {
      res.locals.notice = req.session.notice;
      delete req.session.notice;
    }
    const workspace = req.ctx?.workspace;
    if (!req.ctx || !workspace) return next();
    // A member's request keeps them on shift (written at most once a minute); a page shows their toggle.
    const userId = req.ctx.user.id;
    services.team.shifts
      .touch(userId, workspace.id)
      .then(() => (req.method === 'GET' && isPageLoad(req) ? services.team.shifts.isOn(userId, workspace.id) : false))
      .then((on) => {
        res.locals.onShift = on;
        next();
      }, next);
  });
  // A file upload's form fields (its `_csrf` among them) are only readable once the upload is.
  router.post('/orders/import', requirePageWorkspace, receiveImportUpload);
  router.post('/deliveries/import', requirePageWorkspace, receiveImportUpload);
  // The language switcher checks the CSRF token itself, and only for a signed-in user.
  router.use(accountPages(services, deps.config));
  router.use(requireCsrfToken);
  router.get('/', (req, res) => {
    res.redirect(303, !req.ctx ? '/login' : req.ctx.workspace ? '/orders' : '/workspace');
  });
  router.use(authPages(services, deps));
  router.use(workspacePages(services));
  router.use(joinPages(services));
  router.use(importPages(services));
  // Before the order pages: /orders/ship is not an order's id.
  router.use(shippingPages(services));
  router.use(orderPages(services));
  router.use(customerPages(services));
  router.use(deliveryPages(services));
  router.use(statsPages(services));
  router.use(callPages(services));
  router.use(settingsPages(services));
  router.use(agentPages(services));
  router.use(apiKeyPages(services));
  router.use(webhookPages(services));
  router.use(storePages(services));
  router.use(creditPages(services));
  router.use(teamPages(services));
  return router;
}
