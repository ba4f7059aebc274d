/**
 * Sending deliveries (the worker): each endpoint's due deliveries drained by one job at a time,
 * signed, with retries over about a day; why a try failed; an endpoint whose every
 * delivery fails for days disabled; and the exact body of a message.
 */
import type { Knex } from 'knex';
import type { Secrets } from '../../integrations/secrets';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import type { DeliveryResult, FailureKind, SignedMessage } from '../../integrations/http';
import { WorkspaceSlots, decode, msg } from '../../services/shared';
import type { Message } from '../../services/shared';
import { toCall, toOrder } from '../orders';
import { disabledFor, iso } from './endpoints';
import type { Delivery } from './log';
import { ERROR_BODY_CHARS, deliveryRows, lastError, toDelivery } from './log';

/** After a failed try: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; then the delivery has failed. */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];
/** An endpoint whose every delivery has failed this long is disabled. */
const DISABLE_AFTER_DAYS = 5;
/** Deliveries of one endpoint sent side by side, and how long a drain may hold a worker. */
const DRAIN_BATCH = 20;
const DRAIN_SECONDS = 20;
/** How long a drain holds its endpoint: more than a drain's run plus the longest time-out (120 s). */
const DRAIN_LEASE_SECONDS = DRAIN_SECONDS + 120 + 30;
/** A claimed delivery is due again after this long if the worker dies with it in hand. */
const LEASE_SECONDS = 60;
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

/**
 * The payload's `data`, from what the triggers recorded: an order as GET /api/orders/:id shows it, a
 * call as the loop's API does; a `customer.erased`'s three fields (services/orders/customers.ts).
 */
// biome-ignore lint/suspicious/noExplicitAny: the JSON the triggers recorded, read field by field
function payloadData(data: any): object {
  const out: Record<string, unknown> = {};
  if (data.order) out.order = toOrder(data.order);
  if ('previous_status' in data) out.previous_status = data.previous_status;
  if ('changed_fields' in data) out.changed_fields = data.changed_fields;
  if (data.call) out.call = toCall(data.call);
  if ('phone_sha256' in data) {
    out.phone_sha256 = data.phone_sha256;
    out.order_count = data.order_count;
    out.erased_at = data.erased_at;
  }
  return out;
}

/** The exact body of a message: the same bytes on every try (its timestamp is the event's). */
export function messageBody(message: { event_type: string; created_at: Date | string; data: unknown }): string {
  return JSON.stringify({ type: message.event_type, timestamp: iso(message.created_at), data: payloadData(message.data) });
}

export type Send = (message: SignedMessage) => Promise<DeliveryResult>;

/**
 * Drains endpoints' due deliveries (WebhookService.drain and queueDueDrains): one drain per endpoint
 * at a time, and a bounded number of a workspace's endpoints per worker process.
 */
export class DeliveryWorker {
  /** Endpoints of one workspace drained at once by this process (each drain holds a worker's poller). */
  private readonly draining = new WorkspaceSlots();

  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    /** Opens the endpoints' signing secrets (sealed at rest). */
    private readonly secrets: Secrets,
  ) {}

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
      const secret = this.secrets.open(endpoint.secret);
      const results = await Promise.all(claimed.map((d) => send({ url: endpoint.url, secret, messageId: d.message_id, body: messageBody(d) })));
      await this.record(endpointId, claimed, results);
      totals.sent += results.filter((r) => r.delivered).length;
      totals.failed += results.filter((r) => !r.delivered).length;
      if (results.some((r) => !r.delivered && r.status === null)) return totals;
    }
    // Time is up and more may be due: another turn, after the other endpoints' jobs.
    await this.jobs.send(this.knex, QUEUES.webhookEndpoint.name, { endpointId }, { singletonKey: endpointId });
    return totals;
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
        await dropPending(trx, endpointId, msg('hookDroppedAuto', { days: DISABLE_AFTER_DAYS }));
      }
    });
  }
}

/** The endpoint's pending deliveries fail at once, for `why` (the endpoint was disabled). */
export async function dropPending(trx: Knex.Transaction, endpointId: string, why: Message): Promise<void> {
  await trx('webhook_deliveries')
    .where({ endpoint_id: endpointId, status: 'pending' })
    .update({ status: 'failed', next_attempt_at: null, ...lastError(why) });
}

/** A delivery of the message to the endpoint, due now, and a drain job for the endpoint. */
export async function queueDelivery(trx: Knex.Transaction, jobs: Jobs, workspaceId: string, endpointId: string, messageId: string): Promise<Delivery> {
  const [row] = await trx('webhook_deliveries')
    .insert({ workspace_id: workspaceId, endpoint_id: endpointId, message_id: messageId, next_attempt_at: trx.fn.now() })
    .returning('id');
  await jobs.send(trx, QUEUES.webhookEndpoint.name, { endpointId }, { singletonKey: endpointId });
  return toDelivery(await deliveryRows(trx).where('d.id', row.id).first());
}
