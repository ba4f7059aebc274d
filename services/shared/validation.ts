import { isUtf8 } from 'node:buffer';
import { z } from 'zod';
import { checkEndpointUrl, UrlRefusedError } from '../../integrations/url-guard';
import type { UrlPolicy } from '../../integrations/url-guard';
import type { FieldErrors } from './errors';
import { ValidationError, withoutStacks } from './errors';
import { issueMessage, msg } from './messages';
import type { Message } from './messages';

/** How deep a JSON value we read may nest: real orders and reports nest a handful of levels. */
const MAX_JSON_DEPTH = 64;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const isUnsafeText = (text: string): boolean => text.includes('\u0000') || LONE_SURROGATE.test(text);

const UNSAFE_TEXT_MESSAGE = msg('unsafeText');

/**
 * The one check of text that strangers and users send, whatever the entry point (a JSON body, a
 * form, a signed store message, an agent's report, an import row): Postgres refuses NUL in text and
 * JSONB at any depth, and an unpaired surrogate is not text at all. Names the first place that
 * holds such a character (a key or a value, as `write_back.consumer_secret` or `line_items.2.name`),
 * or a value nested deeper than MAX_JSON_DEPTH; null when there is none. Walks without recursion,
 * so a value nested a million levels deep costs a loop, not the stack.
 */
export function unsafeTextAt(value: unknown, maxDepth = MAX_JSON_DEPTH): { field: string; message: Message } | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (isUnsafeText(current)) return { field: path || 'body', message: UNSAFE_TEXT_MESSAGE };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= maxDepth) return { field: path || 'body', message: msg('tooDeep', { max: maxDepth }) };
    for (const [key, inner] of Object.entries(current)) {
      const at = path ? `${path}.${key}` : key;
      if (isUnsafeText(key)) return { field: at, message: UNSAFE_TEXT_MESSAGE };
      stack.push({ value: inner, path: at, depth: depth + 1 });
    }
  }
  return null;
}

/**
 * Whether JSON text nests deeper than MAX_JSON_DEPTH, read from its bytes before it is parsed:
 * JSON.parse takes most of a second over a megabyte of `[[[[…`, and a stranger could send that at
 * every route that reads JSON. A loop over the bytes (strings skipped) stops at the first level too
 * many.
 */
function jsonTooDeep(raw: Buffer | Uint8Array): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i += 1) {
    const byte = raw[i];
    if (inString) {
      if (byte === 0x5c) i += 1;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) {
      inString = true;
    } else if (byte === 0x5b || byte === 0x7b) {
      depth += 1;
      if (depth > MAX_JSON_DEPTH) return true;
    } else if (byte === 0x5d || byte === 0x7d) {
      depth -= 1;
    }
  }
  return false;
}

/**
 * Why a stranger's body cannot be read, from its bytes alone, before any signature is checked: text
 * that is not UTF-8, or JSON nested deeper than MAX_JSON_DEPTH (a loop over the bytes, where parsing
 * would hold the event loop). Null when it can be read. The one check of bytes at every inbound door.
 */
export function unreadableBytes(raw: Buffer): Message | null {
  if (raw.length === 0) return null;
  if (!isUtf8(raw)) return msg('bodyNotUtf8');
  if (jsonTooDeep(raw)) return msg('bodyTooDeep', { max: MAX_JSON_DEPTH });
  return null;
}

/** A stranger's JSON body as the one inbound reader gives it: its value, or why it was refused and where. */
export type InboundJson =
  | { ok: true; value: unknown }
  | { ok: false; unsafe: false; field: string; message: Message }
  /** Parsed, but holding text Postgres refuses: `value` is read for what it is (a topic), never stored. */
  | { ok: false; unsafe: true; field: string; message: Message; value: unknown };

/**
 * The one reader of the JSON that strangers send (store, carrier and WhatsApp hooks, voice-agent
 * reports, a platform's callbacks): its bytes checked by `unreadableBytes`, parsed (by `parse`: a
 * store's ids are read as text), then every key and string checked for text Postgres refuses (NUL,
 * an unpaired surrogate) at any depth. `unsafe` tells a refusal for such text (which a platform that
 * must get 200 records and ignores) from a body that is no JSON at all.
 */
export function readInboundJson(raw: Buffer, parse: (text: string) => unknown = JSON.parse): InboundJson {
  const unreadable = unreadableBytes(raw);
  if (unreadable) return { ok: false, field: 'body', message: unreadable, unsafe: false };
  let value: unknown;
  try {
    value = parse(raw.toString('utf8'));
  } catch {
    return { ok: false, field: 'body', message: msg('bodyNotJson'), unsafe: false };
  }
  const unsafe = unsafeTextAt(value);
  if (unsafe) return { ok: false, field: unsafe.field, message: unsafe.message, unsafe: true, value };
  return { ok: true, value };
}

/** A body-parser `verify` that refuses JSON nested too deep before it is parsed: 400 naming the body. */
export function refuseDeepJson(_req: unknown, _res: unknown, raw: Buffer): void {
  if (jsonTooDeep(raw)) throw new ValidationError({ body: msg('tooDeep', { max: MAX_JSON_DEPTH }) });
}

/** Throws a ValidationError naming the field when `unsafeTextAt` finds one (400 at every JSON and form entry point). */
export function refuseUnsafeText(value: unknown): void {
  const found = unsafeTextAt(value);
  if (found) throw new ValidationError({ [found.field]: found.message });
}

/** Parses input with a zod schema; every failing field is reported at once, by its name. */
export function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const unsafe = unsafeTextAt(input);
  const fields: FieldErrors = unsafe ? { [unsafe.field]: unsafe.message } : {};
  // A refusal is an answer, not a fault: zod's error for it needs no stack.
  const result = withoutStacks(() => schema.safeParse(input));
  if (result.success && !unsafe) return result.data;
  for (const issue of result.error?.issues ?? []) {
    const name = issue.path.length > 0 ? String(issue.path[0]) : '_';
    fields[name] ??= issueMessage(issue.message, name);
  }
  throw new ValidationError(fields);
}

/** A JSON request body as its fields; an absent body has none, anything but an object is refused. */
export function bodyFields(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError({ body: msg('bodyObject') });
  }
  return body as Record<string, unknown>;
}

/** A field given in camelCase or snake_case; camelCase wins when both are present. */
export function camelOrSnake(source: Record<string, unknown>, camel: string, snake: string): unknown {
  const value = Object.hasOwn(source, camel) ? source[camel] : undefined;
  return value !== undefined ? value : Object.hasOwn(source, snake) ? source[snake] : undefined;
}

/** A required text field: trimmed, non-empty, at most `max` characters. */
export function requiredText(label: string, max: number) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? msg('required', { label }) : msg('notText', { label })) })
    .trim()
    .min(1, msg('required', { label }))
    .max(max, msg('tooLong', { label, max }));
}

/** An optional text field: trimmed, at most `max` characters; empty, null or absent is null. */
export function optionalText(label: string, max: number) {
  return z
    .string({ error: msg('notText', { label }) })
    .trim()
    .max(max, msg('tooLong', { label, max }))
    .nullable()
    .optional()
    .transform((value) => value || null);
}

export const email = z
  .string({ error: msg('emailRequired') })
  .trim()
  .toLowerCase()
  .min(1, msg('emailRequired'))
  .max(254, msg('emailTooLong'))
  .pipe(z.email(msg('emailInvalid')));

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path ids that are not UUIDs can never match a row: callers answer 404 without a query. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** Why the URL policy refused an address, as a message with its code (the guard's own words are the API's). */
function urlRefusal(err: UrlRefusedError): Message {
  const label = 'Endpoint URL';
  switch (err.reason) {
    case 'required':
      return msg('required', { label });
    case 'tooLong':
      return msg('tooLong', { label, max: err.max ?? 0 });
    case 'notHttp':
      return msg('urlAbsolute', { label });
    case 'httpsOnly':
      return msg('urlHttps', { label });
    case 'credentials':
      return msg('urlCredentials', { label });
    case 'unresolved':
      return msg('urlUnresolved', { label });
    case 'private':
      return msg('urlPrivate', { label });
  }
}

/** An endpoint URL given by a user, checked by the URL policy; a refusal is a ValidationError on `field`. */
export async function validEndpointUrl(value: unknown, field: string, policy: UrlPolicy): Promise<string> {
  try {
    return await checkEndpointUrl(value, policy);
  } catch (err) {
    if (err instanceof UrlRefusedError) throw new ValidationError({ [field]: urlRefusal(err) });
    throw err;
  }
}
