import fs from 'node:fs';
import path from 'node:path';

/**
 * A message by its code: the key of the catalogues' `messages` section (locales/*.json) and the
 * values it names. Pages show it in their language from the code; the API keeps the English text,
 * written from the English catalogue, so the two never drift apart.
 */
export interface Coded {
  code: string;
  params: Record<string, string | number>;
}

/** The catalogues hold the text of every code; English is the API's. */
const LOCALES = [path.resolve(__dirname, '..', '..', 'locales'), path.resolve(__dirname, '..', '..', '..', 'locales')].find((dir) => fs.existsSync(dir))!;
const ENGLISH: Record<string, string> = JSON.parse(fs.readFileSync(path.join(LOCALES, 'en.json'), 'utf8')).messages;

/** A marker no typed text starts with: a schema's message that carries a code. */
const MARK = '\u0001code:';

/**
 * A message for a zod schema or a field error: it carries its code and values. `parse()` (and
 * `ValidationError`) turn it into the English text for the API and keep the code for the pages.
 */
export function msg(code: string, params: Record<string, string | number> = {}): string {
  if (!(code in ENGLISH)) throw new Error(`no message ${code} in locales/en.json`);
  return `${MARK}${JSON.stringify({ code, params })}`;
}

/** Whether the catalogues have a text for this code. */
export function hasMessage(code: string): boolean {
  return code in ENGLISH;
}

/** The code a message carries, or null for a plain text. */
export function decode(text: string): Coded | null {
  if (!text.startsWith(MARK)) return null;
  return JSON.parse(text.slice(MARK.length)) as Coded;
}

/** The English text of a code, its values put in. */
export function english({ code, params }: Coded): string {
  return (ENGLISH[code] ?? code).replace(/\{\{(\w+)\}\}/g, (_, name: string) => String(params[name] ?? ''));
}

/** The English text of a message, whether it carries a code or not. */
export function plain(text: string): string {
  const coded = decode(text);
  return coded ? english(coded) : text;
}
