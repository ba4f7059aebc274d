import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Config } from '../../config';
import type { Services } from '../../services';
import { ValidationError, isLanguage, msg } from '../../services/shared';
import type { Language } from '../../services/shared';
import { requireCsrfToken } from '../middleware/csrf';
import { LANGUAGE_COOKIE } from '../middleware/i18n';
import { saveSession } from '../middleware/session';
import { localPath } from './forms';

const A_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/** The request's session speaks `language` from now on (its cached context included). */
function rememberLanguage(req: Request, res: Response, language: Language, config: Pick<Config, 'isProduction'>): void {
  if (req.session?.ctx) req.session.ctx.user.language = language;
  res.cookie(LANGUAGE_COOKIE, language, { path: '/', maxAge: A_YEAR_MS, httpOnly: true, sameSite: 'lax', secure: config.isProduction });
}

/**
 * The footer's language switcher. Signed in, the choice is saved on the user (every device follows
 * it); signed out, only the `lang` cookie keeps it. A visitor's post needs no CSRF token: it only
 * sets that cookie on their own browser (and cross-site posts are refused before this router), so
 * the switcher on public pages opens no session.
 */
export function accountPages(services: Services, config: Pick<Config, 'isProduction'>): Router {
  const router = Router();
  router.post(
    '/account/language',
    (req, res, next) => (req.ctx ? requireCsrfToken(req, res, next) : next()),
    async (req, res) => {
      const language: unknown = req.body?.language;
      if (!isLanguage(language)) throw new ValidationError({ language: msg('unknownLanguage') });
      if (req.ctx) await services.users.setLanguage(req.ctx.user.id, { language });
      rememberLanguage(req, res, language, config);
      if (req.session) await saveSession(req.session);
      res.redirect(303, localPath(req.body?.next) ?? '/');
    },
  );
  return router;
}
