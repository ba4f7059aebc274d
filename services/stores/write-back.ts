import type { Knex } from 'knex';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import type { DeliveryResult, OutboundRequest } from '../../integrations/http';
import type { Secrets } from '../../integrations/secrets';
import { RETRY_DELAYS_SECONDS } from '../webhooks';
import type { ShopifyAdmin } from './platforms/shopify/admin';
import { storePlatform } from './platforms/registry';
import type { SentStep, WriteBackContext, WriteBackSettings } from './platforms/types';
import type { Outcome, WriteBackFailure } from './platforms/write-back';
import { decode, msg, plain } from '../../services/shared';
import type { Message } from '../../services/shared';

/** A `store-write-back` job, as the orders trigger writes it and each later try re-sends it. */
export interface WriteBackJob {
  orderId: string;
  /** The outcome reached; a job whose order has moved on since is dropped (the newer change has its own). */
  status: Outcome;
  /** 1 for the first try. */
  attempt: number;
  /** Requests that already succeeded on earlier tries (a WooCommerce note is never written twice). */
  done?: number;
}

export type { WriteBackSettings };

/** A step's failure as a message with its code. */
function reasonOf(failure: WriteBackFailure): Message {
  switch (failure.reason) {
    case 'unreachable':
      return msg('wbUnreachable', { store: failure.store, error: failure.error });
    case 'answered':
      return msg('wbAnswered', { store: failure.store, status: failure.status });
    case 'unreadable':
      return msg('wbUnreadable', { store: failure.store });
    case 'errors':
      return msg('wbErrors', { store: failure.store });
    case 'tagRefused':
      return msg('wbTagRefused', { store: failure.store });
  }
}

export type WriteBackResult = { result: 'sent' | 'skipped' } | { result: 'retrying' | 'failed'; reason: string };

type Send = (request: OutboundRequest) => Promise<DeliveryResult>;

interface Target {
  connection_id: string;
  kind: string;
  shop: string | null;
  enabled: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: the credentials as stored, read by the kind's builder
  write_back: any;
  status: string;
  external_id: string | null;
  external_ref: string | null;
  summary: string | null;
}

/**
 * The worker's half of write-back (docs/stores.md): tells the store an order's outcome, through the outbound guard, on the
 * webhooks' retry schedule. After the last try fails, the connection shows why (`write_back_error`,
 * fixed words and the shop's order number: never a token, an address or the store's answer); a
 * later success clears it. Whatever happens, the order itself is never touched.
 */
export class StoreWriteBackService {
  private readonly retrySeconds: readonly number[];
  /** What each platform's steps are built and sent with. */
  private readonly context: WriteBackContext;

  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    settings: WriteBackSettings,
    /** Shopify's Admin API, with the connection's token refreshed as it expires. */
    shopifyAdmin: ShopifyAdmin,
    /** Opens the platforms' keys (sealed at rest). */
    secrets: Secrets,
  ) {
    this.retrySeconds = settings.retrySeconds ?? RETRY_DELAYS_SECONDS;
    this.context = { settings, secrets, shopifyAdmin };
  }

  async perform(job: WriteBackJob, send: Send): Promise<WriteBackResult> {
    const target = await this.target(job.orderId);
    // Gone, moved on, or the connection no longer writes back: nothing to tell.
    if (!target || target.status !== job.status || !target.enabled || !target.write_back || !target.shop || !target.external_id) return { result: 'skipped' };
    const order = { externalId: target.external_id, status: job.status, summary: target.summary };
    const writeBack = storePlatform(target.kind)?.writeBack;
    if (!writeBack) return { result: 'skipped' };
    const steps = writeBack.steps({ connection_id: target.connection_id, shop: target.shop, write_back: target.write_back }, order, this.context);
    if (!Array.isArray(steps)) return this.fail(target, steps);
    let done = job.done ?? 0;
    for (const step of steps.slice(done)) {
      const answer: SentStep = writeBack.send
        ? await writeBack.send(this.context, target.connection_id, step.request, send)
        : { sent: await send(step.request) };
      // The owner must approve the app again: no later try can do better.
      if ('reconnect' in answer) return this.fail(target, msg('wbReconnect'));
      if ('noToken' in answer) return { result: 'skipped' };
      if ('refreshFailed' in answer) return this.retryOrFail(job, done, target, msg('wbRefreshFailed'));
      const failure = step.failure(answer.sent);
      if (failure) return this.retryOrFail(job, done, target, reasonOf(failure));
      done += 1;
    }
    await this.knex('store_connections')
      .where({ id: target.connection_id })
      .whereNotNull('write_back_error')
      .update({ write_back_error: null, write_back_error_code: null });
    return { result: 'sent' };
  }

  private async retryOrFail(job: WriteBackJob, done: number, target: Target, reason: Message): Promise<WriteBackResult> {
    const delay = this.retrySeconds[job.attempt - 1];
    if (delay === undefined) return this.fail(target, reason);
    const next: WriteBackJob = { ...job, attempt: job.attempt + 1, done };
    await this.jobs.send(this.knex, QUEUES.storeWriteBack.name, next, { startAfter: new Date(Date.now() + delay * 1000) });
    return { result: 'retrying', reason: plain(reason) };
  }

  /** The last failure, kept on the connection: in English for the API, by its code for the page. */
  private async fail(target: Target, reason: Message): Promise<WriteBackResult> {
    const error = msg('wbFailed', { order: String(target.external_ref ?? target.external_id).slice(0, 200), reason });
    await this.knex('store_connections')
      .where({ id: target.connection_id })
      .update({ write_back_error: plain(error).slice(0, 300), write_back_error_code: JSON.stringify(decode(error)) });
    return { result: 'failed', reason: plain(reason) };
  }

  /** The order, its connection and the summary of the call that reached its outcome, if one did. */
  private async target(orderId: string): Promise<Target | undefined> {
    const { rows } = await this.knex.raw(
      `SELECT c.id AS connection_id, c.kind, c.shop, c.enabled, c.write_back, o.status, o.external_id, o.external_ref,
              (SELECT k.summary FROM operations op JOIN calls k ON k.operation_id = op.id
                WHERE op.order_id = o.id AND k.outcome = o.status AND k.ended_at IS NOT NULL
                ORDER BY k.ended_at DESC LIMIT 1) AS summary
         FROM orders o JOIN store_connections c ON c.id = o.store_connection_id
        WHERE o.id = ?`,
      [orderId],
    );
    return rows[0];
  }
}
