import type { Knex } from 'knex';
import { z } from 'zod';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import type { DeliveryResult, FailureKind, SignedMessage } from '../../integrations/http';
import { newSigningSecret } from '../../integrations/signing';
import type { UrlPolicy } from '../../integrations/url-guard';
import {
  ConflictError,
  NotFoundError,
  ownerOnly,
  ValidationError,
  bodyFields,
  isUuid,
  parse,
  validEndpointUrl,
  WorkspaceSlots,
  decode,
  msg,
  plain,
  recode,
} from '../shared';
import type { FieldErrors, WorkspaceActor, Message } from '../shared';
import { toCall, toOrder } from '../orders';

export const WEBHOOK_EVENTS = ['order.created', 'order.updated', 'order.deleted', 'order.delivery_updated', 'call.ended', 'webhook.test'] as const;
type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const MAX_ENDPOINTS = 10;
/** After a failed try: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; then the delivery has failed. */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];
/** An endpoint whose every delivery has failed this long is disabled. */
const DISABLE_AFTER_DAYS = 5;
/** Deliveries shown (and kept once settled) per endpoint. */
const LOG_SIZE = 100;
/** Deliveries of one endpoint sent side by side, and how long a drain may hold a worker. */
const DRAIN_BATCH = 20;
const DRAIN_SECONDS = 20;
/** How long a drain holds its endpoint: more than a drain's run plus the longest time-out (120 s). */
const DRAIN_LEASE_SECONDS = DRAIN_SECONDS + 120 + 30;
/** A claimed delivery is due again after this long if the worker dies with it in hand. */
const LEASE_SECONDS = 60;
/** How much of an answer's body a delivery's `last_error` keeps. */
const ERROR_BODY_CHARS = 200;
/** A failed try's reason by its code (services/shared/messages); `{{value}}` is a status or a TLS error's code. */
const FAILURE_CODES: Record<FailureKind, string> = {
  invalidUrl: 'hookErrInvalidUrl',
  timedOut: 'hookErrTimedOut',
  connectionRefused: 'hookErrConnectionRefused',
  connectionClosed: 'hookErrConnectionClosed',
  connectionFailed: 'hookErrConnectionFailed',
  hostUnreachable: 'hookErrHostUnreachable',
  addressNotAllowed: 'hookErrAddressNotAllowed',
  dnsTimedOut: 'hookErrDnsTimedOut',
  hostNotFound: 'hookErrHostNotFound',
  dnsFailed: 'hookErrDnsFailed',
  tlsError: 'hookErrTls',
  redirect: 'hookErrRedirect',
  httpStatus: 'hookErrHttpStatus',
};

/** Why a try failed, by its code; what the endpoint answered is its own words, kept as data after it. */
function failureMessage(result: DeliveryResult): Message {
  const { kind, value } = result.failure ?? { kind: 'connectionFailed' };
  const reason = msg(FAILURE_CODES[kind], value === undefined ? {} : { value });
  return result.body ? msg('hookErrAnswer', { reason, answer: result.body.slice(0, ERROR_BODY_CHARS) }) : reason;
}

/** A delivery's `last_error` (English, for the API) and `last_error_code` (for the page). */
function lastError(message: Message): { last_error: string; last_error_code: string } {
  return { last_error: plain(message).slice(0, ERROR_BODY_CHARS + 100), last_error_code: JSON.stringify(decode(message)) };
}

export interface Endpoint {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  enabled: boolean;
  created_at: string;
  disabled_reason: string | null;
}

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

const iso = (value: Date | string | null | undefined) => (value ? new Date(value).toISOString() : null);
const ENDPOINT_FIELDS = ['id', 'url', 'events', 'description', 'enabled', 'created_at', 'disabled_reason'];

// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
function toEndpoint(row: any): Endpoint {
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

// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
function toDelivery(row: any): Delivery {
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

/** The payload's `data`, from what the triggers recorded: an order as GET /api/orders/:id shows it, a call as the loop's API does. */
// biome-ignore lint/suspicious/noExplicitAny: the JSON the triggers recorded, read field by field
function payloadData(data: any): object {
  const out: Record<string, unknown> = {};
  if (data.order) out.order = toOrder(data.order);
  if ('previous_status' in data) out.previous_status = data.previous_status;
  if ('changed_fields' in data) out.changed_fields = data.changed_fields;
  if (data.call) out.call = toCall(data.call);
  return out;
}

/** The exact body of a message: the same bytes on every try (its timestamp is the event's). */
export function messageBody(message: { event_type: string; created_at: Date | string; data: unknown }): string {
  return JSON.stringify({ type: message.event_type, timestamp: iso(message.created_at), data: payloadData(message.data) });
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

export type Send = (message: SignedMessage) => Promise<DeliveryResult>;

/**
 * A workspace's webhook endpoints, and the delivery of what the triggers record for them. Every
 * member reads the endpoints and their deliveries; only the owner changes them, sends to them or
 * reads their secret (the functions that take the caller's role).
 */
export class WebhookService {
  /** Endpoints of one workspace drained at once by this process (each drain holds a worker's poller). */
  private readonly draining = new WorkspaceSlots();

  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    private readonly urlPolicy: UrlPolicy,
  ) {}

  async list(workspaceId: string): Promise<Endpoint[]> {
    const rows = await this.knex('webhook_endpoints')
      .where({ workspace_id: workspaceId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(ENDPOINT_FIELDS);
    return rows.map(toEndpoint);
  }

  async get(workspaceId: string, id: string): Promise<Endpoint> {
    return toEndpoint(await this.row(this.knex, workspaceId, id));
  }

  /** Why an endpoint is disabled, by its code, as its page shows it (null while it is enabled). */
  async disabledReason(workspaceId: string, id: string): Promise<Message | null> {
    const row = await this.knex('webhook_endpoints').where({ workspace_id: workspaceId, id }).first('enabled', 'disabled_reason_code');
    return row && !row.enabled && row.disabled_reason_code ? recode(row.disabled_reason_code) : null;
  }

  /** The endpoint's signing secret (the dashboard shows it; the API only in the 201 and rotate answers). */
  async secret(workspace: WorkspaceActor, id: string): Promise<string> {
    ownerOnly(workspace);
    return (await this.row(this.knex, workspace.id, id)).secret;
  }

  async create(workspace: WorkspaceActor, body: unknown, db: Knex = this.knex): Promise<Endpoint & { secret: string }> {
    ownerOnly(workspace);
    const workspaceId = workspace.id;
    const source = bodyFields(body);
    const [url, input] = await this.validate(source, createSchema, true);
    return db.transaction(async (trx) => {
      // Counted under the workspace's lock: two concurrent creates cannot make an eleventh.
      await trx('workspaces').where({ id: workspaceId }).forUpdate().first('id');
      const [{ n }] = await trx('webhook_endpoints').where({ workspace_id: workspaceId }).count({ n: '*' });
      if (Number(n) >= MAX_ENDPOINTS) throw new ConflictError(msg('TOO_MANY_WEBHOOKS'), 'TOO_MANY_WEBHOOKS');
      const [row] = await trx('webhook_endpoints')
        .insert({
          workspace_id: workspaceId,
          url,
          events: input.events ?? [...WEBHOOK_EVENTS],
          description: input.description ?? null,
          secret: newSigningSecret(),
        })
        .returning([...ENDPOINT_FIELDS, 'secret']);
      return { ...toEndpoint(row), secret: row.secret };
    });
  }

  async update(workspace: WorkspaceActor, id: string, body: unknown): Promise<Endpoint> {
    ownerOnly(workspace);
    const workspaceId = workspace.id;
    const source = bodyFields(body);
    const [url, input] = await this.validate(source, updateSchema, false);
    return this.knex.transaction(async (trx) => {
      const current = await this.row(trx, workspaceId, id, true);
      const patch: Record<string, unknown> = {};
      if (url !== undefined) patch.url = url;
      if (input.events !== undefined) patch.events = input.events;
      if (input.description !== undefined) patch.description = input.description;
      if (input.enabled === false && current.enabled) Object.assign(patch, disabledFor(msg('hookDisabledByMember')));
      // Enabled again: only events from now on are sent; the count of failing days starts afresh.
      if (input.enabled === true && !current.enabled)
        Object.assign(patch, { enabled: true, disabled_reason: null, disabled_reason_code: null, failing_since: null });
      if (input.enabled === false) await this.dropPending(trx, id, msg('hookDroppedByMember'));
      if (Object.keys(patch).length === 0) return toEndpoint(current);
      const [row] = await trx('webhook_endpoints').where({ id }).update(patch).returning(ENDPOINT_FIELDS);
      return toEndpoint(row);
    });
  }

  /** Deletes the endpoint; its pending deliveries go with it. */
  async remove(workspace: WorkspaceActor, id: string): Promise<void> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw endpointNotFound();
    const deleted = await this.knex('webhook_endpoints').where({ workspace_id: workspace.id, id }).delete();
    if (deleted === 0) throw endpointNotFound();
  }

  async rotateSecret(workspace: WorkspaceActor, id: string): Promise<Endpoint & { secret: string }> {
    ownerOnly(workspace);
    await this.row(this.knex, workspace.id, id);
    const [row] = await this.knex('webhook_endpoints')
      .where({ workspace_id: workspace.id, id })
      .update({ secret: newSigningSecret() })
      .returning([...ENDPOINT_FIELDS, 'secret']);
    return { ...toEndpoint(row), secret: row.secret };
  }

  /** A `webhook.test` to this endpoint alone. */
  async sendTest(workspace: WorkspaceActor, id: string): Promise<Delivery> {
    ownerOnly(workspace);
    const workspaceId = workspace.id;
    return this.knex.transaction(async (trx) => {
      const endpoint = await this.row(trx, workspaceId, id);
      if (!endpoint.enabled) throw new ConflictError(msg('WEBHOOK_DISABLED'), 'WEBHOOK_DISABLED');
      const [message] = await trx('webhook_messages').insert({ workspace_id: workspaceId, event_type: 'webhook.test', data: {} }).returning('id');
      return this.queueDelivery(trx, workspaceId, id, message.id);
    });
  }

  /** The endpoint's last deliveries, newest first. */
  async deliveries(workspaceId: string, id: string, limit = LOG_SIZE): Promise<Delivery[]> {
    await this.row(this.knex, workspaceId, id);
    const rows = await this.deliveryRows(this.knex)
      .where('d.endpoint_id', id)
      .orderBy([
        { column: 'd.created_at', order: 'desc' },
        { column: 'd.id', order: 'desc' },
      ])
      .limit(limit);
    return rows.map(toDelivery);
  }

  /** Why each of the endpoint's last deliveries failed, by its code, for the page (a reason kept before codes: its English, as data). */
  async deliveryErrors(workspaceId: string, id: string, limit = LOG_SIZE): Promise<Map<string, Message>> {
    await this.row(this.knex, workspaceId, id);
    const rows = await this.knex('webhook_deliveries')
      .where({ endpoint_id: id })
      .whereNotNull('last_error')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .select('id', 'last_error', 'last_error_code');
    return new Map(rows.map((r) => [r.id, r.last_error_code ? recode(r.last_error_code) : msg('hookErrKept', { answer: r.last_error })]));
  }

  /** Sends a delivered or failed message to the endpoint again, with the same `webhook-id`. */
  async resend(workspace: WorkspaceActor, id: string, deliveryId: string): Promise<Delivery> {
    ownerOnly(workspace);
    const workspaceId = workspace.id;
    if (!isUuid(deliveryId)) throw deliveryNotFound();
    return this.knex.transaction(async (trx) => {
      const endpoint = await this.row(trx, workspaceId, id);
      const delivery = await trx('webhook_deliveries').where({ id: deliveryId, endpoint_id: id, workspace_id: workspaceId }).first('message_id');
      if (!delivery) throw deliveryNotFound();
      if (!endpoint.enabled) throw new ConflictError(msg('WEBHOOK_DISABLED'), 'WEBHOOK_DISABLED');
      return this.queueDelivery(trx, workspaceId, id, delivery.message_id);
    });
  }

  // ---- delivery (the worker) ---------------------------------------------------------------

  /** Endpoints with a delivery due now: each gets a drain job (one at a time per endpoint). */
  async queueDueDrains(): Promise<number> {
    const rows = await this.knex('webhook_deliveries').where({ status: 'pending' }).where('next_attempt_at', '<=', this.knex.fn.now()).distinct('endpoint_id');
    await this.jobs.sendMany(
      this.knex,
      QUEUES.webhookEndpoint.name,
      rows.map((r: { endpoint_id: string }) => ({ data: { endpointId: r.endpoint_id }, singletonKey: r.endpoint_id })),
    );
    return rows.length;
  }

  /**
   * Sends an endpoint's due deliveries, DRAIN_BATCH side by side, for up to DRAIN_SECONDS. An
   * endpoint that times out or refuses the connection is left for its next retry at once, so a
   * slow or dead endpoint holds one worker slot for at most one time-out, never the others' turn;
   * and a workspace has at most WORKSPACE_IN_FLIGHT endpoints in hand per worker process, so a
   * tenant's dead endpoints (or nameserver) never hold every slot.
   */
  async drain(endpointId: string, send: Send): Promise<{ sent: number; failed: number }> {
    const totals = { sent: 0, failed: 0 };
    const owner = await this.knex('webhook_endpoints').where({ id: endpointId }).first('workspace_id');
    // A workspace with WORKSPACE_IN_FLIGHT endpoints in hand waits its turn: its deliveries stay due
    // and queueDueDrains offers them again within a second, while this poller serves someone else.
    if (!owner || !(await this.draining.take(owner.workspace_id))) return totals;
    try {
      // One drain per endpoint at a time: another one running (or a crashed one, until its lease ends) keeps it.
      const held = await this.knex.raw(
        `UPDATE webhook_endpoints SET draining_until = now() + make_interval(secs => ?)
          WHERE id = ? AND (draining_until IS NULL OR draining_until < now()) RETURNING id`,
        [DRAIN_LEASE_SECONDS, endpointId],
      );
      if (held.rows.length === 0) return totals;
      try {
        return await this.drainHeld(endpointId, send, totals);
      } finally {
        await this.knex('webhook_endpoints').where({ id: endpointId }).update({ draining_until: null });
      }
    } finally {
      this.draining.give(owner.workspace_id);
    }
  }

  private async drainHeld(endpointId: string, send: Send, totals: { sent: number; failed: number }): Promise<{ sent: number; failed: number }> {
    const until = Date.now() + DRAIN_SECONDS * 1000;
    while (Date.now() < until) {
      const claimed = await this.claim(endpointId);
      if (claimed.length === 0) return totals;
      const endpoint = await this.knex('webhook_endpoints').where({ id: endpointId }).first('url', 'secret', 'enabled');
      if (!endpoint?.enabled) return totals;
      const results = await Promise.all(
        claimed.map((d) => send({ url: endpoint.url, secret: endpoint.secret, messageId: d.message_id, body: messageBody(d) })),
      );
      await this.record(endpointId, claimed, results);
      totals.sent += results.filter((r) => r.delivered).length;
      totals.failed += results.filter((r) => !r.delivered).length;
      if (results.some((r) => !r.delivered && r.status === null)) return totals;
    }
    // Time is up and more may be due: another turn, after the other endpoints' jobs.
    await this.jobs.send(this.knex, QUEUES.webhookEndpoint.name, { endpointId }, { singletonKey: endpointId });
    return totals;
  }

  /** Settled deliveries beyond each endpoint's last LOG_SIZE, and messages no delivery needs any more. */
  async prune(): Promise<number> {
    const { rowCount } = await this.knex.raw(
      `DELETE FROM webhook_deliveries d USING (
         SELECT id FROM (SELECT id, status, row_number() OVER (PARTITION BY endpoint_id ORDER BY created_at DESC, id DESC) AS n FROM webhook_deliveries) ranked
          WHERE n > ? AND status <> 'pending') old
        WHERE d.id = old.id`,
      [LOG_SIZE],
    );
    await this.knex.raw(
      `DELETE FROM webhook_messages m WHERE created_at < now() - interval '1 hour'
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.message_id = m.id)`,
    );
    return rowCount ?? 0;
  }

  private async claim(endpointId: string) {
    const { rows } = await this.knex.raw(
      `WITH due AS (
         SELECT id FROM webhook_deliveries
          WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at <= now()
          ORDER BY next_attempt_at, created_at, id LIMIT ? FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => ?) FROM due WHERE d.id = due.id
         RETURNING d.id, d.attempts, d.message_id AS message_row
       )
       SELECT l.id, l.attempts, m.message_id, m.event_type, m.data, m.created_at
         FROM leased l JOIN webhook_messages m ON m.id = l.message_row`,
      [endpointId, DRAIN_BATCH, LEASE_SECONDS],
    );
    return rows as Array<{ id: string; attempts: number; message_id: string; event_type: string; data: unknown; created_at: Date }>;
  }

  /** The tries' results; the endpoint's run of failures (and its disabling after 5 days of them). */
  private async record(endpointId: string, claimed: Array<{ id: string; attempts: number }>, results: DeliveryResult[]): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const rows = claimed.map((d, i) => {
        const r = results[i];
        const attempts = d.attempts + 1;
        const failure = r.delivered ? null : failureMessage(r);
        const error = failure && lastError(failure).last_error;
        const error_code = failure && decode(failure);
        const delay = r.delivered ? null : RETRY_DELAYS_SECONDS[attempts - 1];
        return { id: d.id, attempts, status: r.delivered ? 'succeeded' : delay === undefined ? 'failed' : 'pending', code: r.status, error, error_code, delay };
      });
      await trx.raw(
        `UPDATE webhook_deliveries d SET attempts = v.attempts, status = v.status, last_status_code = v.code, last_error = v.error, last_error_code = v.error_code,
                next_attempt_at = CASE WHEN v.delay IS NULL THEN NULL ELSE now() + make_interval(secs => v.delay) END,
                delivered_at = CASE WHEN v.status = 'succeeded' THEN now() ELSE d.delivered_at END
           FROM jsonb_to_recordset(?::jsonb) AS v(id uuid, attempts int, status text, code int, error text, error_code jsonb, delay int)
          WHERE d.id = v.id`,
        [JSON.stringify(rows)],
      );
      if (results.some((r) => r.delivered)) {
        await trx('webhook_endpoints').where({ id: endpointId }).update({ failing_since: null });
        return;
      }
      const {
        rows: [endpoint],
      } = await trx.raw(
        `UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, now()) WHERE id = ?
         RETURNING failing_since, failing_since <= now() - make_interval(days => ?) AS expired`,
        [endpointId, DISABLE_AFTER_DAYS],
      );
      if (endpoint?.expired) {
        const since = new Date(endpoint.failing_since).toISOString().slice(0, 10);
        await trx('webhook_endpoints')
          .where({ id: endpointId })
          .update(disabledFor(msg('hookDisabledAuto', { since, days: DISABLE_AFTER_DAYS })));
        await this.dropPending(trx, endpointId, msg('hookDroppedAuto', { days: DISABLE_AFTER_DAYS }));
      }
    });
  }

  private async dropPending(trx: Knex.Transaction, endpointId: string, why: Message): Promise<void> {
    await trx('webhook_deliveries')
      .where({ endpoint_id: endpointId, status: 'pending' })
      .update({ status: 'failed', next_attempt_at: null, ...lastError(why) });
  }

  private async queueDelivery(trx: Knex.Transaction, workspaceId: string, endpointId: string, messageId: string): Promise<Delivery> {
    const [row] = await trx('webhook_deliveries')
      .insert({ workspace_id: workspaceId, endpoint_id: endpointId, message_id: messageId, next_attempt_at: trx.fn.now() })
      .returning('id');
    await this.jobs.send(trx, QUEUES.webhookEndpoint.name, { endpointId }, { singletonKey: endpointId });
    return toDelivery(await this.deliveryRows(trx).where('d.id', row.id).first());
  }

  private deliveryRows(db: Knex | Knex.Transaction) {
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

  private async row(db: Knex | Knex.Transaction, workspaceId: string, id: string, lock = false) {
    if (!isUuid(id)) throw endpointNotFound();
    const query = db('webhook_endpoints')
      .where({ workspace_id: workspaceId, id })
      .first([...ENDPOINT_FIELDS, 'secret']);
    if (lock) query.forUpdate();
    const row = await query;
    if (!row) throw endpointNotFound();
    return row;
  }

  private async validate<T extends z.ZodType>(source: Record<string, unknown>, schema: T, urlRequired: boolean): Promise<[string | undefined, z.infer<T>]> {
    const fields: FieldErrors = {};
    let url: string | undefined;
    if (urlRequired || source.url !== undefined) {
      try {
        url = await validEndpointUrl(source.url, 'url', this.urlPolicy);
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
}

/** The columns of a disabled endpoint: its reason in English for the API, by its code for the page. */
function disabledFor(reason: Message): Record<string, unknown> {
  return { enabled: false, disabled_reason: plain(reason), disabled_reason_code: JSON.stringify(decode(reason)) };
}

function endpointNotFound(): NotFoundError {
  return new NotFoundError(msg('webhookNotFound'));
}

function deliveryNotFound(): NotFoundError {
  return new NotFoundError(msg('deliveryNotFound'));
}
