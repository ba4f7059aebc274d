import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import type { Services } from '../../services';
import { csrfToken, requireCsrfToken } from '../middleware/csrf';
import { authPages } from './auth';
import { workspacePages } from './workspace';

export interface PageDeps {
  config: Config;
  logger: Logger;
  redis?: Redis;
}

/** The dashboard: EJS pages and their plain form posts. */
export function pagesRouter(services: Services, deps: PageDeps): Router {
  const router = Router();
  router.use((req, res, next) => {
    res.locals.ctx = req.ctx;
    // Lazy, so that a page without a form does not create a session for an anonymous visitor.
    res.locals.csrf = () => csrfToken(req);
    if (req.session?.notice) {
      res.locals.notice = req.session.notice;
      delete req.session.notice;
    }
    next();
  });
  router.use(requireCsrfToken);
  router.get('/', (req, res) => {
    res.redirect(303, !req.ctx ? '/login' : req.ctx.workspace ? '/orders' : '/workspace');
  });
  router.use(authPages(services, deps));
  router.use(workspacePages(services));
  return router;
}
