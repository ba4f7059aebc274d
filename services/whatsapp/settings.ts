import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { ValidationError, camelOrSnake, parse, msg } from '../../services/shared';
import type { FieldErrors } from '../../services/shared';

/** What a WhatsApp agent's JSON shows of its connection (never the token or the app secret). */
export interface WhatsAppAgentFields {
  phone_number_id: string;
  template_name: string;
  template_language: string;
  reply_window_hours: number;
  callback_url: string;
  /** Why the agent's last message did not go out (a send refused, throttled or unreachable, a failed status), or null. */
  last_error: string | null;
  /** When that was (ISO 8601), or null. */
  last_error_at: string | null;
}

export const WHATSAPP_COLUMNS = [
  'phone_number_id',
  'template_name',
  'template_language',
  'reply_window_hours',
  'verify_token',
  'last_error',
  'last_error_at',
] as const;

const REQUIRED = ['phoneNumberId', 'accessToken', 'appSecret', 'templateName', 'templateLanguage'] as const;

const schema = z.object({
  phoneNumberId: z
    .string({ error: msg('digitsId', { label: 'phoneNumberId' }) })
    .trim()
    .regex(/^\d{5,30}$/, msg('digitsId', { label: 'phoneNumberId' })),
  accessToken: z
    .string({ error: msg('notText', { label: 'accessToken' }) })
    .trim()
    .min(20, msg('metaToken', { label: 'accessToken' }))
    .max(1000, msg('tooLong', { label: 'accessToken', max: '1,000' }))
    .regex(/^[\x21-\x7e]+$/, msg('metaToken', { label: 'accessToken' })),
  appSecret: z
    .string({ error: msg('notText', { label: 'appSecret' }) })
    .trim()
    .regex(/^[0-9a-zA-Z]{16,128}$/, msg('metaSecret', { label: 'appSecret' })),
  templateName: z
    .string({ error: msg('notText', { label: 'templateName' }) })
    .trim()
    .regex(/^[a-z0-9_]{1,512}$/, msg('templateName', { label: 'templateName' })),
  templateLanguage: z
    .string({ error: msg('notText', { label: 'templateLanguage' }) })
    .trim()
    .regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, msg('templateLanguage', { label: 'templateLanguage' })),
  replyWindowHours: z
    .number({ error: msg('wholeNumber', { label: 'replyWindowHours', min: 1, max: 72 }) })
    .int(msg('wholeNumber', { label: 'replyWindowHours', min: 1, max: 72 }))
    .min(1, msg('wholeNumber', { label: 'replyWindowHours', min: 1, max: 72 }))
    .max(72, msg('wholeNumber', { label: 'replyWindowHours', min: 1, max: 72 })),
});

type Input = Partial<Record<keyof z.infer<typeof schema>, unknown>>;

/** The WhatsApp fields of a JSON body (camelCase or snake_case); a form's number arrives as text. */
export function whatsappInput(source: Record<string, unknown>): Input {
  const hours = camelOrSnake(source, 'replyWindowHours', 'reply_window_hours');
  return {
    phoneNumberId: camelOrSnake(source, 'phoneNumberId', 'phone_number_id'),
    accessToken: camelOrSnake(source, 'accessToken', 'access_token'),
    appSecret: camelOrSnake(source, 'appSecret', 'app_secret'),
    templateName: camelOrSnake(source, 'templateName', 'template_name'),
    templateLanguage: camelOrSnake(source, 'templateLanguage', 'template_language'),
    replyWindowHours: typeof hours === 'string' && /^\d{1,3}$/.test(hours.trim()) ? Number(hours) : hours,
  };
}

/** Whether a body names any WhatsApp field (refused for other kinds). */
export function namesWhatsAppField(input: Input): string | undefined {
  return Object.entries(input).find(([, value]) => value !== undefined && value !== null)?.[0];
}

/**
 * The row of `whatsapp_agents` a creation (every field required but the window) or an edit (only
 * what is given; a blank secret keeps the old one, as a form that never shows it sends) writes.
 * Field errors are collected into `fields`; nothing is thrown for them.
 */
export function whatsappRow(input: Input, creating: boolean, fields: FieldErrors): Record<string, unknown> {
  const given = Object.fromEntries(
    Object.entries(input).filter(([name, value]) => {
      if (value === undefined || value === null) return false;
      return !(!creating && (name === 'accessToken' || name === 'appSecret') && value === '');
    }),
  );
  if (creating) for (const name of REQUIRED) if (given[name] === undefined) fields[name] = msg('requiredWhatsApp', { label: name });
  let data: Partial<z.infer<typeof schema>> = {};
  try {
    data = parse(schema.partial(), given);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    Object.assign(fields, err.messages());
  }
  const row: Record<string, unknown> = {
    ...(data.phoneNumberId !== undefined ? { phone_number_id: data.phoneNumberId } : {}),
    ...(data.accessToken !== undefined ? { access_token: data.accessToken } : {}),
    ...(data.appSecret !== undefined ? { app_secret: data.appSecret } : {}),
    ...(data.templateName !== undefined ? { template_name: data.templateName } : {}),
    ...(data.templateLanguage !== undefined ? { template_language: data.templateLanguage } : {}),
    ...(data.replyWindowHours !== undefined ? { reply_window_hours: data.replyWindowHours } : {}),
  };
  if (creating) row.verify_token = crypto.randomBytes(24).toString('base64url');
  return row;
}

/** The JSON of a WhatsApp agent's connection. */
export function whatsappFields(row: Record<string, unknown>, publicBaseUrl: string, agentId: string): WhatsAppAgentFields {
  return {
    phone_number_id: String(row.phone_number_id),
    template_name: String(row.template_name),
    template_language: String(row.template_language),
    reply_window_hours: Number(row.reply_window_hours),
    callback_url: `${publicBaseUrl}/hooks/whatsapp/${agentId}`,
    last_error: typeof row.last_error === 'string' ? row.last_error : null,
    last_error_at: row.last_error_at instanceof Date ? row.last_error_at.toISOString() : null,
  };
}

export async function readWhatsAppRows(db: Knex | Knex.Transaction, agentIds: string[]): Promise<Map<string, Record<string, unknown>>> {
  if (agentIds.length === 0) return new Map();
  const rows = await db('whatsapp_agents')
    .whereIn('agent_id', agentIds)
    .select(['agent_id', ...WHATSAPP_COLUMNS]);
  return new Map(rows.map((r) => [r.agent_id, r]));
}
