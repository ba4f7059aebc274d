/**
 * What a webhook endpoint is: the events it may take, how many a workspace may have, its fields as
 * the API shows them and the schemas that check them, and loading one of a workspace's endpoints.
 */
import type { Knex } from 'knex';
import { z } from 'zod';
import type { UrlPolicy } from '../../integrations/url-guard';
import { NotFoundError, ValidationError, decode, isUuid, msg, parse, plain, validEndpointUrl } from '../../services/shared';
import type { FieldErrors, Message } from '../../services/shared';

export const WEBHOOK_EVENTS = [
  'order.created',
  'order.updated',
  'order.deleted',
  'order.delivery_updated',
  'call.ended',
  'customer.erased',
  'webhook.test',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const MAX_ENDPOINTS = 10;

export interface Endpoint {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  enabled: boolean;
  created_at: string;
  disabled_reason: string | null;
}

/** A timestamp as the API writes it (ISO 8601), null for none. */
export const iso = (value: Date | string | null | undefined) => (value ? new Date(value).toISOString() : null);
export const ENDPOINT_FIELDS = ['id', 'url', 'events', 'description', 'enabled', 'created_at', 'disabled_reason'];

// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
export function toEndpoint(row: any): Endpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description ?? null,
    enabled: row.enabled,
    created_at: iso(row.created_at)!,
    disabled_reason: row.disabled_reason ?? null,
  };
}

const eventsSchema = z
  .array(z.enum(WEBHOOK_EVENTS, { error: msg('unknownEvent', { allowed: WEBHOOK_EVENTS.join(', ') }) }), { error: msg('eventsList') })
  .min(1, msg('eventsOne'))
  .transform((events) => [...new Set(events)]);
const descriptionSchema = z
  .string({ error: msg('notText', { label: 'description' }) })
  .trim()
  .max(500, msg('tooLong', { label: 'description', max: 500 }))
  .nullable()
  .transform((value) => value || null);

export const createSchema = z.object({ events: eventsSchema.optional(), description: descriptionSchema.optional() });
export const updateSchema = z.object({
  events: eventsSchema.optional(),
  description: descriptionSchema.optional(),
  enabled: z.boolean({ error: msg('trueOrFalse', { label: 'enabled' }) }).optional(),
});

/** The columns of a disabled endpoint: its reason in English for the API, by its code for the page. */
export function disabledFor(reason: Message): Record<string, unknown> {
  return { enabled: false, disabled_reason: plain(reason), disabled_reason_code: JSON.stringify(decode(reason)) };
}

export function endpointNotFound(): NotFoundError {
  return new NotFoundError(msg('webhookNotFound'));
}

/** One of the workspace's endpoints, with its secret (locked for update when `lock`); NotFoundError when there is none. */
export async function endpointRow(db: Knex | Knex.Transaction, workspaceId: string, id: string, lock = false) {
  if (!isUuid(id)) throw endpointNotFound();
  const query = db('webhook_endpoints')
    .where({ workspace_id: workspaceId, id })
    .first([...ENDPOINT_FIELDS, 'secret']);
  if (lock) query.forUpdate();
  const row = await query;
  if (!row) throw endpointNotFound();
  return row;
}

/**
 * Checks an endpoint's fields against `schema`, the URL against the outbound policy (required when
 * `urlRequired`); one ValidationError names every bad field.
 */
export async function validateEndpoint<T extends z.ZodType>(
  source: Record<string, unknown>,
  schema: T,
  urlRequired: boolean,
  urlPolicy: UrlPolicy,
): Promise<[string | undefined, z.infer<T>]> {
  const fields: FieldErrors = {};
  let url: string | undefined;
  if (urlRequired || source.url !== undefined) {
    try {
      url = await validEndpointUrl(source.url, 'url', urlPolicy);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(fields, err.messages());
    }
  }
  let input: z.infer<T> | undefined;
  try {
    input = parse(schema, source);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    Object.assign(fields, err.messages());
  }
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  return [url, input!];
}
