import path from 'node:path';
import type { Request, RequestHandler } from 'express';
import i18next from 'i18next';
import type { i18n } from 'i18next';
import Backend from 'i18next-fs-backend';
import { handle, LanguageDetector } from 'i18next-http-middleware';
import { ROOT } from '../../config';
import { DEFAULT_LANGUAGE, formatNumber, isLanguage, LANGUAGES } from '../../services/shared';
import type { Language } from '../../services/shared';

/** The cookie the footer's switcher sets for a visitor who is not signed in. */
export const LANGUAGE_COOKIE = 'lang';

/**
 * The one i18next instance of the process: the catalogues of locales/ read from disk, synchronously,
 * before the first request. Pages get a clone of it per request (see `chooseLanguage`), never this one.
 */
export function createI18n(): i18n {
  const detector = new LanguageDetector(null, {
    order: ['user', 'cookie', 'header'],
    lookupCookie: LANGUAGE_COOKIE,
    caches: false,
    // "ar-MA" and "fr-FR" count as ar and fr: the catalogues are per language, not per region.
    convertDetectedLanguage: (lng: string) => lng.split('-')[0].toLowerCase(),
  });
  // The signed-in user's saved choice comes first, whatever the device's cookie or browser says.
  detector.addDetector({ name: 'user', lookup: (req) => (req as { ctx?: { user: { language?: string | null } } }).ctx?.user.language ?? undefined });
  const instance = i18next.createInstance();
  instance
    .use(Backend)
    .use({
      type: 'postProcessor',
      name: 'elision',
      process: (value: string, _key: unknown, _options: unknown, translator: { language?: string }) => (translator.language === 'fr' ? elide(value) : value),
    })
    .use(countFormatter)
    .use(detector)
    .init({
      initAsync: false,
      supportedLngs: [...LANGUAGES],
      preload: [...LANGUAGES],
      fallbackLng: DEFAULT_LANGUAGE,
      load: 'languageOnly',
      backend: { loadPath: path.join(ROOT, 'locales', '{{lng}}.json') },
      // EJS's `<%= %>` escapes what it prints; i18next escaping too would show "Ali &amp;amp; Co".
      // Every value goes through countFormatter (alwaysFormat), which writes a plural's count.
      interpolation: { escapeValue: false, alwaysFormat: true },
      returnEmptyString: false,
      postProcess: ['elision'],
    });
  return instance;
}

/**
 * i18next's formatter, replaced: a plural's `count` is written as the staff write numbers
 * (services/shared/numbers.ts: "20 000 commandes" in French, Western digits in Arabic), every other
 * value as it is given. The catalogues use no `{{value, format}}`; i18next's own formatter would
 * write Arabic-Indic digits for `ar`.
 */
const countFormatter = {
  type: 'formatter' as const,
  init: () => undefined,
  add: () => undefined,
  addCached: () => undefined,
  format: (value: unknown, _format: unknown, lng: unknown, options: { interpolationkey?: string } = {}) =>
    options.interpolationkey === 'count' && typeof value === 'number' && isLanguage(lng) ? formatNumber(value, lng) : value,
};

/**
 * French elision where a name or value follows "de" or "que": "Commande de Imane" becomes
 * "Commande d’Imane". The catalogues never write "de" before a vowel themselves, so only
 * interpolated values meet the rule; a value may sit in `<strong>`, `<bdi>` or an isolate. A "y"
 * before a vowel is a consonant ("de Youssef", "de Yasmine"); before a consonant, a vowel ("d’Yves").
 */
export function elide(text: string): string {
  return text.replace(
    /\b([dD]|[qQ]u)e ((?:<strong>)?(?:<bdi>)?\u2068?)(?=[AEIOUHÀÂÄÉÈÊËÎÏÔÖÛÜaeiouhàâäéèêëîïôöûü]|[Yy](?![AEIOUYÀÂÄÉÈÊËÎÏÔÖÛÜaeiouyàâäéèêëîïôöûü]))/g,
    '$1’$2',
  );
}

/** The language the request was given (English before `chooseLanguage` ran). */
export function languageOf(req: Request): Language {
  return isLanguage(req.language) ? req.language : DEFAULT_LANGUAGE;
}

/**
 * Picks the request's language (the user's choice, else the `lang` cookie, else Accept-Language,
 * else English) and gives the request its own clone of the instance: `req.t` and `res.locals.t`
 * answer in that language only, whatever other requests are doing at the same time.
 * `res.locals.lang` and `res.locals.dir` are for `<html lang dir>`.
 */
export function chooseLanguage(instance: i18n): RequestHandler {
  const middleware = handle(instance);
  return (req, res, next) => {
    middleware(req, res, (err?: unknown) => {
      if (err) return next(err);
      const lang = languageOf(req);
      res.locals.lang = lang;
      res.locals.dir = instance.dir(lang);
      next();
    });
  };
}
