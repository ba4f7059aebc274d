import { z } from 'zod';
import { msg } from './messages';

/** The dashboard's languages (languages.md); English is the default and the fallback. */
export const LANGUAGES = ['en', 'fr', 'ar'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'en';

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

/** `{language}` as the API and the switcher send it. */
export const languageSchema = z.object({
  language: z.enum(LANGUAGES, { error: msg('oneOfList', { label: 'language', allowed: LANGUAGES.join(', ') }) }),
});
