/**
 * The delivery log: a delivery as the API shows it, why its last try failed (in English and by its
 * code), an endpoint's last deliveries, and the pruning that keeps the last LOG_SIZE of each.
 */
import type { Knex } from 'knex';
import { NotFoundError, decode, msg, plain, recode } from '../../services/shared';
import type { Message } from '../../services/shared';
import type { WebhookEvent } from './endpoints';
import { iso } from './endpoints';

/** Deliveries shown (and kept once settled) per endpoint. */
export const LOG_SIZE = 100;
/** How much of an answer's body a delivery's `last_error` keeps. */
export const ERROR_BODY_CHARS = 200;

export interface Delivery {
  id: string;
  message_id: string;
  event_type: WebhookEvent;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
export function toDelivery(row: any): Delivery {
  return {
    id: row.id,
    message_id: row.message_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code ?? null,
    last_error: row.last_error ?? null,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    created_at: iso(row.created_at)!,
    delivered_at: iso(row.delivered_at),
  };
}

/** A delivery's `last_error` (English, for the API) and `last_error_code` (for the page). */
export function lastError(message: Message): { last_error: string; last_error_code: string } {
  return { last_error: plain(message).slice(0, ERROR_BODY_CHARS + 100), last_error_code: JSON.stringify(decode(message)) };
}

/** Deliveries with their message's id and event, as toDelivery reads them (`d` the delivery, `m` its message). */
export function deliveryRows(db: Knex | Knex.Transaction) {
  return db('webhook_deliveries as d')
    .join('webhook_messages as m', 'm.id', 'd.message_id')
    .select(
      'd.id',
      'm.message_id',
      'm.event_type',
      'd.status',
      'd.attempts',
      'd.last_status_code',
      'd.last_error',
      'd.next_attempt_at',
      'd.created_at',
      'd.delivered_at',
    );
}

/** The endpoint's last deliveries, newest first. */
export async function listDeliveries(knex: Knex, endpointId: string, limit: number): Promise<Delivery[]> {
  const rows = await deliveryRows(knex)
    .where('d.endpoint_id', endpointId)
    .orderBy([
      { column: 'd.created_at', order: 'desc' },
      { column: 'd.id', order: 'desc' },
    ])
    .limit(limit);
  return rows.map(toDelivery);
}

/** Why each of the endpoint's last deliveries failed, by its code (a reason kept before codes: its English, as data). */
export async function deliveryErrors(knex: Knex, endpointId: string, limit: number): Promise<Map<string, Message>> {
  const rows = await knex('webhook_deliveries')
    .where({ endpoint_id: endpointId })
    .whereNotNull('last_error')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)
    .select('id', 'last_error', 'last_error_code');
  return new Map(rows.map((r) => [r.id, r.last_error_code ? recode(r.last_error_code) : msg('hookErrKept', { answer: r.last_error })]));
}

/** Settled deliveries beyond each endpoint's last LOG_SIZE, and messages no delivery needs any more. */
export async function pruneLog(knex: Knex): Promise<number> {
  const { rowCount } = await knex.raw(
    `DELETE FROM webhook_deliveries d USING (
       SELECT id FROM (SELECT id, status, row_number() OVER (PARTITION BY endpoint_id ORDER BY created_at DESC, id DESC) AS n FROM webhook_deliveries) ranked
        WHERE n > ? AND status <> 'pending') old
      WHERE d.id = old.id`,
    [LOG_SIZE],
  );
  await knex.raw(
    `DELETE FROM webhook_messages m WHERE created_at < now() - interval '1 hour'
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.message_id = m.id)`,
  );
  return rowCount ?? 0;
}

export function deliveryNotFound(): NotFoundError {
  return new NotFoundError(msg('deliveryNotFound'));
}
