import { z } from 'zod';
import { checkEndpointUrl, UrlRefusedError } from '../integrations/url-guard';
import type { UrlPolicy } from '../integrations/url-guard';
import type { FieldErrors } from './errors';
import { ValidationError } from './errors';
import { msg } from './messages';

/** Postgres text cannot hold NUL; such input is refused here rather than failing at the database. */
function nulFields(input: unknown): FieldErrors {
  const fields: FieldErrors = {};
  if (input && typeof input === 'object') {
    for (const [name, value] of Object.entries(input)) {
      if (typeof value === 'string' && value.includes('\u0000')) fields[name] = msg('nul');
    }
  }
  return fields;
}

/** Parses input with a zod schema; every failing field is reported at once, by its name. */
export function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const fields = nulFields(input);
  const result = schema.safeParse(input);
  if (result.success && Object.keys(fields).length === 0) return result.data;
  for (const issue of result.error?.issues ?? []) {
    const name = issue.path.length > 0 ? String(issue.path[0]) : '_';
    fields[name] ??= issue.message;
  }
  throw new ValidationError(fields);
}

/** A JSON request body as its fields; an absent body has none, anything but an object is refused. */
export function bodyFields(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError({ body: 'The request body must be a JSON object' });
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

/** An endpoint URL given by a user, checked by the URL policy; a refusal is a ValidationError on `field`. */
export async function validEndpointUrl(value: unknown, field: string, policy: UrlPolicy): Promise<string> {
  try {
    return await checkEndpointUrl(value, policy);
  } catch (err) {
    if (err instanceof UrlRefusedError) throw new ValidationError({ [field]: err.message });
    throw err;
  }
}
