import type { Knex } from 'knex';
import { currentOrigin } from './origin';

/**
 * What the audit log records, by code (each one a sentence of `auditPage.action` in the locales).
 * `customer_exported` and `customer_erased` are recorded by the customer's page (/customers/:phone).
 */
export const AUDIT_ACTIONS = [
  'orders_exported',
  'customer_exported',
  'customer_erased',
  'member_invited',
  'invitation_revoked',
  'member_joined',
  'member_removed',
  'member_left',
  'api_key_created',
  'api_key_revoked',
  'agent_created',
  'agent_edited',
  'agent_secret_rotated',
  'webhook_created',
  'webhook_edited',
  'webhook_deleted',
  'webhook_secret_rotated',
  'store_created',
  'store_edited',
  'store_deleted',
  'store_connected',
  'store_reconnected',
  'carrier_created',
  'carrier_deleted',
  'carrier_account_created',
  'carrier_account_changed',
  'carrier_account_deleted',
  'settings_changed',
  'sign_in_new_device',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an event is about (its `target_type`). */
export type AuditTargetType = 'orders' | 'customer' | 'member' | 'invitation' | 'api_key' | 'agent' | 'webhook' | 'store' | 'carrier' | 'settings' | 'device';

/** A detail's value: names and counts, never a secret (a changed secret is named, not shown). */
type DetailValue = string | number | boolean | null | string[];

export interface AuditEvent {
  workspaceId: string;
  action: AuditAction;
  target?: { type: AuditTargetType; id?: string | null; label?: string | null };
  /** What else tells the owner what happened: the filters of an export, the fields that changed. */
  details?: Record<string, DetailValue>;
  /** Who and from where, when not the request's (see origin.ts): the user who signs in or joins. */
  actorId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
}

/**
 * A detail named like a secret is a mistake of the caller: refused before it is written (the fields
 * a change touched are listed by name, under `changed`, which is allowed).
 */
const SECRET_NAME = /secret|token|password|passwd|credential|consumer|api_?key|hash|authorization|cookie/i;

const USER_AGENT_CHARS = 200;
const LABEL_CHARS = 200;

/** Cuts a text to `max` characters, without leaving half a surrogate pair. */
function short(text: string | null | undefined, max: number): string | null {
  if (!text) return null;
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * Writes one event with `db`: the caller's transaction when the change is made in one, so a change
 * rolled back (or refused) records nothing. Who and from where default to the request's.
 */
export async function record(db: Knex | Knex.Transaction, event: AuditEvent): Promise<void> {
  for (const key of Object.keys(event.details ?? {})) if (SECRET_NAME.test(key)) throw new Error(`audit detail "${key}" is named like a secret`);
  const origin = currentOrigin();
  await db('audit_events').insert({
    workspace_id: event.workspaceId,
    actor_id: event.actorId !== undefined ? event.actorId : origin.actorId,
    action: event.action,
    target_type: event.target?.type ?? null,
    target_id: short(event.target?.id, LABEL_CHARS),
    target_label: short(event.target?.label, LABEL_CHARS),
    details: JSON.stringify(event.details ?? {}),
    ip: short(event.ip !== undefined ? event.ip : origin.ip, 64),
    user_agent: short(event.userAgent !== undefined ? event.userAgent : origin.userAgent, USER_AGENT_CHARS),
  });
}
