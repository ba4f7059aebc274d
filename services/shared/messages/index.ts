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
  /** The API's English when it is not the catalogue's: a library's own words (zod's), kept as it wrote them. */
  english?: string;
}

declare const CODED: unique symbol;
/**
 * A message that carries its code: only `msg()` makes one. Errors (`AppError`, `ValidationError`'s
 * fields) take nothing else, so a service cannot write a message a page could only show in English.
 */
export type Message = string & { readonly [CODED]: true };

/** The catalogues hold the text of every code; English is the API's. */
const LOCALES = [path.resolve(__dirname, '..', '..', '..', 'locales'), path.resolve(__dirname, '..', '..', '..', '..', 'locales')].find((dir) =>
  fs.existsSync(dir),
)!;
const ENGLISH: Record<string, string> = JSON.parse(fs.readFileSync(path.join(LOCALES, 'en.json'), 'utf8')).messages;

/** A marker no typed text starts with: a schema's message that carries a code. */
const MARK = '\u0001code:';

/**
 * A message for a zod schema or a field error: it carries its code and values. `parse()` (and
 * `ValidationError`) turn it into the English text for the API and keep the code for the pages.
 */
export function msg(code: string, params: Record<string, string | number> = {}): Message {
  if (!(code in ENGLISH)) throw new Error(`no message ${code} in locales/en.json`);
  return `${MARK}${JSON.stringify({ code, params })}` as Message;
}

/**
 * A library's own message (zod's default for a field a schema gave no message): the API keeps its
 * words, a page shows the code's text (`{{label}} is not valid`) in its language.
 */
export function foreign(text: string, label: string): Message {
  return `${MARK}${JSON.stringify({ code: 'notValid', params: { label }, english: text })}` as Message;
}

/** A zod issue's message for the field `label`: its own code when a schema gave one, else zod's words (`foreign`). */
export function issueMessage(text: string, label: string): Message {
  return decode(text) ? (text as Message) : foreign(text, label);
}

/** A decoded message as a message again (an error's `page`, handed to a page). */
export function recode(coded: Coded): Message {
  return `${MARK}${JSON.stringify(coded)}` as Message;
}

/** The code a message carries, or null for a plain text. */
export function decode(text: string): Coded | null {
  if (!text.startsWith(MARK)) return null;
  return JSON.parse(text.slice(MARK.length)) as Coded;
}

/** The English text of a code, its values put in. */
/** Field names that are plural in English and French (a non-human plural in Arabic): their messages' `_pl` form agrees. */
const PLURAL_LABELS: ReadonlySet<string> = new Set(['Products', 'products', 'Notes', 'Calling hours']);

/** The catalogue's key of a message: its `_pl` form for a plural field's name, where it has one. */
export function messageKey({ code, params }: Coded): string {
  const plural = typeof params.label === 'string' && PLURAL_LABELS.has(params.label) && `${code}_pl` in ENGLISH;
  return plural ? `${code}_pl` : code;
}

export function english({ code, params, english: given }: Coded): string {
  if (given !== undefined) return given;
  code = messageKey({ code, params });
  // A value may be a message itself (a write-back's reason inside "Order …: {{reason}}"): written out too.
  return (ENGLISH[code] ?? code).replace(/\{\{(\w+)\}\}/g, (_, name: string) => plain(String(params[name] ?? '')));
}

/** The English text of a message, whether it carries a code or not. */
export function plain(text: string): string {
  const coded = decode(text);
  return coded ? english(coded) : text;
}
