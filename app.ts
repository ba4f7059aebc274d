import path from 'node:path';
import express from 'express';
import type { HelmetOptions } from 'helmet';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type pg from 'pg';
import type { Config } from './config';
import { ROOT } from './config';
import type { Logger } from './logger';
import { apiRouter } from './routes/api';
import { tokenRouter } from './routes/api/token';
import { dataRouter } from './routes/data';
import { healthRouter } from './routes/health';
import { staticAssets } from './routes/assets';
import { compressAnswers } from './routes/middleware/compression';
import { createLimiter, createRefusalLimiter } from './routes/middleware/rate-limit';
import { inboundRouter } from './routes/inbound';
import { idLessInboundBodies } from './routes/middleware/inbound-bodies';
import { chooseLanguage, createI18n } from './routes/middleware/i18n';
import { openApiRouter } from './openapi';
import { loadUser } from './routes/middleware/auth';
import { refuseCrossSite } from './routes/middleware/csrf';
import { htmlErrors, htmlNotFound, jsonErrors, jsonNotFound } from './routes/middleware/errors';
import { sessionMiddleware } from './routes/middleware/session';
import { apiSession } from './routes/middleware/api-session';
import { auditOrigin } from './routes/middleware/audit-origin';
import { requestLog } from './routes/middleware/request-log';
import { securityHeaders } from './routes/middleware/security-headers';
import { pagesRouter } from './routes/pages';
import { localeHelpers, viewHelpers } from './routes/pages/view-helpers';
import { createServices } from './services';
import { SessionService } from './services/accounts';
import { refuseDeepJson, refuseUnsafeText } from './services/shared';
import { Jobs } from './db/jobs';

export interface AppDeps {
  config: Config;
  knex: Knex;
  sessionPool: pg.Pool;
  logger: Logger;
  redis?: Redis;
}

const BODY_LIMIT = '100kb';
/** The /api routes whose body is not JSON, the imports (routing ignores case and a trailing slash). */
const CSV_ROUTE = /^\/(orders|deliveries)\/import\/?$/i;

/** helmet's settings: every response's security headers (set by `securityHeaders`). */
export function helmetOptions(config: Pick<Config, 'isProduction'>): HelmetOptions {
  return {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        upgradeInsecureRequests: config.isProduction ? [] : null,
      },
    },
    // Browsers send `Origin: null` on same-origin posts under `no-referrer`; keep our origin visible.
    referrerPolicy: { policy: 'same-origin' },
    strictTransportSecurity: config.isProduction,
  };
}

/** Builds the Express app; it listens on nothing (server.ts and tests do that). */
export function createApp(deps: AppDeps): express.Express {
  const { config, logger } = deps;
  const services = createServices(deps.knex, config, new Jobs(deps.knex));
  const app = express();

  app.set('trust proxy', config.trustProxy);
  app.set('view engine', 'ejs');
  app.set('views', path.join(ROOT, 'views'));
  // Each template is compiled once, as in production, except in development (an edited view shows at once).
  app.set('view cache', config.env !== 'development');
  app.disable('x-powered-by');
  Object.assign(app.locals, viewHelpers);
  const i18n = createI18n();
  // What a page rendered before the language is chosen (a session store failure) falls back to.
  Object.assign(app.locals, { t: i18n.getFixedT('en'), lang: 'en', dir: 'ltr' }, localeHelpers('en', i18n.getFixedT('en')));

  app.use(requestLog(app, logger));
  app.use(securityHeaders(helmetOptions(config)));

  app.use(compressAnswers());
  // Bearer-authenticated routes: no session, no cookies, so no cross-site check either.
  const json = express.json({ type: () => true, limit: BODY_LIMIT, verify: refuseDeepJson });
  // What a user sends, checked once for text Postgres refuses, at any depth: 400 naming the field.
  const safeBody: express.RequestHandler = (req, _res, next) => {
    if (req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body)) refuseUnsafeText(req.body);
    next();
  };
  // A page ignores a query parameter it cannot use (an edited link still shows the list); JSON routes refuse it.
  const safeText: express.RequestHandler = (req, res, next) => {
    refuseUnsafeText(req.query);
    safeBody(req, res, next);
  };
  app.use('/api/v1/token', tokenRouter(services, config, { redis: deps.redis, logger }));
  app.use('/data/v1', json, safeText, dataRouter(services), jsonNotFound, jsonErrors);
  // Inbound (routes/inbound/): signed by a voice agent, a store, a carrier or Meta; no session, no cookies, no CSRF token. Counted per client
  // IP before anything is read, so a flood of bad signatures costs us no more than a counter.
  // A store's flash sale comes from a few of its IPs at hundreds a minute, and a store that gets
  // 429s drops its subscription: at /hooks/stores (and /hooks/carriers, as busy) only refused messages count.
  const inboundLimit = (name: string) => ({
    name,
    windowMs: 60_000,
    limit: config.limits.hooksPerIp,
    onLimited: (_req: express.Request, res: express.Response) => void res.status(429).json({ error: 'rate_limited' }),
  });
  const storesLimit = createRefusalLimiter({ redis: deps.redis, logger }, inboundLimit('hooks-stores-ip'));
  const callsLimit = createLimiter({ redis: deps.redis, logger }, inboundLimit('hooks-ip'));
  const limitInbound: express.RequestHandler = (req, res, next) => (/^\/(stores|carriers)\//.test(req.path) ? storesLimit : callsLimit)(req, res, next);
  const inboundLimits = { bodiesPerIp: config.limits.hookBodiesPerIp, bodyTimeoutMs: config.limits.hookBodyTimeoutMs };
  app.use('/hooks', limitInbound, idLessInboundBodies, inboundRouter(services, inboundLimits), jsonNotFound, jsonErrors);

  const session = [sessionMiddleware(config, deps.sessionPool, logger), loadUser(services)];
  const crossSite = refuseCrossSite(config.publicBaseUrl);

  // JSON routes: the body is read as JSON whatever its Content-Type (an import's body is CSV).
  const jsonUnlessCsv: express.RequestHandler = (req, res, next) => (CSV_ROUTE.test(req.path) ? next() : json(req, res, next));
  app.use(
    '/api',
    apiSession(config.sessionSecret, new SessionService(deps.sessionPool), session),
    crossSite,
    jsonUnlessCsv,
    safeText,
    auditOrigin,
    apiRouter(services),
    jsonNotFound,
    jsonErrors,
  );

  // Everything else: the health check, the API reference, assets and the pages.
  app.use('/healthz', healthRouter(deps.knex));
  app.use(openApiRouter());
  const assets = staticAssets(path.join(ROOT, 'public'));
  app.locals.asset = assets.url;
  app.use('/assets', assets.router, jsonNotFound);

  app.use(session, chooseLanguage(i18n));
  app.use(express.urlencoded({ extended: false, limit: BODY_LIMIT }), safeBody);
  app.use(crossSite, auditOrigin, pagesRouter(services, { config, redis: deps.redis, logger }), htmlNotFound, htmlErrors);
  return app;
}
