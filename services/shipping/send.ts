import type { Knex } from 'knex';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import { applyDeliveryEvents } from '../deliveries';
import { NotFoundError, ValidationError, isUuid, msg } from '../../services/shared';
import type { CarrierAccountService, OpenAccount } from './accounts';
import type { CreateOutcome, LookupOutcome, MadeParcel, ParcelRequest } from './carriers/types';

/** A carrier that does not answer is tried again for an hour (carriers.md 7), then the parcel fails. */
const GIVE_UP_AFTER_MS = 60 * 60_000;
/** Backoff between tries of a carrier that did not answer: 30 s doubling, at most 10 minutes. */
const backoffMs = (tries: number) => Math.min(30_000 * 2 ** Math.max(0, tries - 1), 10 * 60_000);
/** The guarded client's words for a request that never reached the carrier (nothing can have been made). */
const NEVER_REACHED = /connection refused|host not found|DNS lookup|address not allowed|invalid URL/i;
/** A parcel left `sending` this long (its worker died mid-call) is taken again, as a lost answer. */
const STALE_SENDING = "interval '3 minutes'";
/** Polled kinds: a parcel not yet final is asked about at most this often. */
const POLL_EVERY = "interval '30 minutes'";

interface ClaimedParcel {
  id: string;
  workspace_id: string;
  order_id: string | null;
  account_id: string;
  reference: string;
  city_id: string | null;
  tries: number;
  answer_lost: boolean;
  first_try_at: Date;
  /** The cash to collect a person gave for an order without an amount. */
  cod_amount: string | null;
}

/** What came of one job, for the worker's log and the tests. */
export type SendResult = 'sent' | 'found' | 'failed' | 'uncertain' | 'retry' | 'waiting_for_credentials' | 'throttled' | 'busy' | 'nothing_to_do';

/** The order as its parcel carries it (carriers.md 2b). */
async function parcelRequest(db: Knex, parcel: ClaimedParcel, account: OpenAccount): Promise<ParcelRequest | null> {
  const order = await db('orders')
    .where({ id: parcel.order_id, workspace_id: parcel.workspace_id })
    .first('client_name', 'phone', 'address', 'city', 'total_amount', 'products_name', 'note', 'status');
  const amount = order?.total_amount ?? parcel.cod_amount;
  if (order?.status !== 'confirmed' || amount === null) return null;
  const cities = await db('carrier_cities')
    .where({ account_id: account.id })
    .whereIn('city_id', [parcel.city_id ?? '', account.pickup_city_id ?? ''])
    .select('city_id', 'name', 'arabic_name');
  const cityOf = (id: string | null) => {
    const row = cities.find((c) => c.city_id === id);
    return row ? { id: row.city_id, name: row.name, arabicName: row.arabic_name } : null;
  };
  const city = cityOf(parcel.city_id);
  if (!city) return null;
  return {
    reference: parcel.reference,
    name: order.client_name,
    // +212612345678 → 0612345678: Moroccan carriers' ten digits.
    phone: `0${String(order.phone).replace(/^\+212/, '')}`,
    address: order.address ?? '',
    city,
    amount: Number(amount),
    products: order.products_name ?? '',
    productLines: order.products_name ? [{ name: order.products_name, quantity: 1 }] : [],
    note: order.note,
    allowOpen: account.allow_open,
    pickupCity: cityOf(account.pickup_city_id),
  };
}

/**
 * The `ship-parcel` job: one order's parcel made at its carrier, within the account's rate and at
 * most its adapter's number at once, and never twice — a try whose answer was lost asks the carrier
 * first (where the kind can tell) or leaves the parcel `uncertain` for a person. Success writes the
 * delivery through the one way delivery news is written (status `shipped`, source `carrier`).
 */
export class ParcelSender {
  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    private readonly accounts: CarrierAccountService,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async send(parcelId: string): Promise<SendResult> {
    const peek = await this.knex('parcels').where({ id: parcelId }).first('account_id', 'workspace_id');
    if (!peek) return 'nothing_to_do';
    const account = await this.accounts.open(peek.workspace_id, peek.account_id);
    if (!account) return 'nothing_to_do';
    const claimed = await this.claim(parcelId, account);
    if (claimed === 'busy') {
      await this.later(parcelId, 1_000);
      return 'busy';
    }
    if (!claimed) return 'nothing_to_do';
    if (account.state === 'credentials_refused') {
      // Nothing is lost: the parcel waits, and a fix of the credentials queues it again (the hour of tries starts then).
      await this.release(claimed.id, { first_try_at: null });
      return 'waiting_for_credentials';
    }
    const request = await parcelRequest(this.knex, claimed, account);
    if (!request) {
      await this.finish(claimed, { state: 'failed', reason: 'The order can no longer be shipped (not confirmed, no amount or no city)' });
      return 'failed';
    }
    await this.accounts.pace(account);
    const session = this.accounts.session(account.adapter, account.credentials, account.id);
    if (claimed.answer_lost) {
      const lookup: LookupOutcome = account.adapter.lookup
        ? await account.adapter.lookup(session, claimed.reference, null)
        : { kind: 'cannot_tell', reason: 'The carrier cannot be asked whether the parcel was made' };
      if (lookup.kind === 'found') return this.made(claimed, account, lookup.parcel, 'found');
      if (lookup.kind === 'unanswered') return this.settle(claimed, account, lookup);
      if (lookup.kind === 'cannot_tell') {
        await this.finish(claimed, { state: 'uncertain', reason: lookup.reason.slice(0, 300) });
        return 'uncertain';
      }
    }
    const outcome: CreateOutcome = (await account.adapter.create(session, [request])).get(request.reference) ?? {
      kind: 'unanswered',
      reason: 'The carrier’s answer did not name the parcel',
    };
    return this.settle(claimed, account, outcome);
  }

  /**
   * A person's decision on an `uncertain` parcel (its answer was lost and the carrier cannot be
   * asked): "it was created" with the tracking number read in the carrier's portal, or "send again".
   */
  async decide(workspaceId: string, orderId: string, body: unknown): Promise<'sent' | 'queued' | 'cancelling'> {
    const given = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    // "cancel" takes the order's live parcel; "created" and "send again" an uncertain one.
    const states = given.action === 'cancel' ? ['queued', 'sent', 'uncertain'] : ['uncertain'];
    const parcel = isUuid(orderId)
      ? await this.knex('parcels').where({ workspace_id: workspaceId, order_id: orderId }).whereIn('state', states).first('id', 'account_id')
      : undefined;
    if (!parcel) throw new NotFoundError(msg('parcelNotUncertain'));
    const account = await this.accounts.open(workspaceId, parcel.account_id);
    if (!account) throw new NotFoundError(msg('carrierAccountNotFound'));
    if (given.action === 'cancel') {
      // Asked of the carrier by the minute pass, as a declined order's parcel is; the page then says what came of it.
      await this.knex('parcels').where({ id: parcel.id }).update({ cancel_requested_at: this.knex.fn.now(), updated_at: this.knex.fn.now() });
      return 'cancelling';
    }
    if (given.action === 'send_again') {
      await this.knex.transaction(async (trx) => {
        await trx('parcels')
          .where({ id: parcel.id })
          .update({ state: 'queued', answer_lost: false, reason: null, first_try_at: null, updated_at: trx.fn.now() });
        await this.jobs.send(trx, QUEUES.shipParcel.name, { parcelId: parcel.id });
      });
      return 'queued';
    }
    const tracking = typeof given.tracking === 'string' ? given.tracking.trim() : '';
    if (given.action !== 'created') throw new ValidationError({ action: msg('oneOf', { label: 'action', allowed: 'created, send_again, cancel' }) });
    if (!tracking || tracking.length > 100) throw new ValidationError({ tracking: msg('required', { label: 'Tracking number' }) });
    if (await this.knex('parcels').where({ account_id: parcel.account_id, tracking }).first('id'))
      throw new ValidationError({ tracking: msg('parcelTrackingTaken') });
    const claimed = await this.knex('parcels')
      .where({ id: parcel.id })
      .first('id', 'workspace_id', 'order_id', 'account_id', 'reference', 'city_id', 'tries', 'answer_lost', 'first_try_at', 'cod_amount');
    await this.made(claimed, account, { tracking, labelUrl: null, carrierStatus: null }, 'sent');
    return 'sent';
  }

  /** Takes the parcel to `sending` under the account's lock; `busy` when the account has its number of calls under way. */
  private async claim(parcelId: string, account: OpenAccount): Promise<ClaimedParcel | 'busy' | null> {
    return this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`carrier-account:${account.id}`]);
      const sending = await trx('parcels')
        .where({ account_id: account.id, state: 'sending' })
        .whereRaw(`updated_at > now() - ${STALE_SENDING}`)
        .count({ n: '*' });
      const [row] = await trx('parcels')
        .where({ id: parcelId })
        .where((q) => q.where({ state: 'queued' }).orWhere((stale) => stale.where({ state: 'sending' }).whereRaw(`updated_at <= now() - ${STALE_SENDING}`)))
        .select('state')
        .forUpdate();
      if (!row) return null;
      if (Number(sending[0].n) >= account.adapter.limits.concurrency) return 'busy';
      const [claimed] = await trx('parcels')
        .where({ id: parcelId })
        .update({
          state: 'sending',
          tries: trx.raw('tries + 1'),
          // A parcel found `sending` is a try whose answer never came: ask before making another.
          answer_lost: row.state === 'sending' ? true : trx.raw('answer_lost'),
          first_try_at: trx.raw('coalesce(first_try_at, now())'),
          updated_at: trx.fn.now(),
        })
        .returning(['id', 'workspace_id', 'order_id', 'account_id', 'reference', 'city_id', 'tries', 'answer_lost', 'first_try_at', 'cod_amount']);
      return claimed as ClaimedParcel;
    });
  }

  private async settle(parcel: ClaimedParcel, account: OpenAccount, outcome: CreateOutcome): Promise<SendResult> {
    switch (outcome.kind) {
      case 'created':
        return this.made(parcel, account, outcome.parcel, 'sent');
      case 'refused':
        await this.finish(parcel, { state: 'failed', reason: outcome.reason.slice(0, 300), answer_lost: false });
        return 'failed';
      case 'credentials_refused':
        await this.accountState(account.id, 'credentials_refused', outcome.reason);
        await this.release(parcel.id, { first_try_at: null });
        return 'waiting_for_credentials';
      case 'throttled':
        // Time waited for the carrier's window is not time it failed to answer.
        await this.release(parcel.id, { first_try_at: null });
        await this.later(parcel.id, outcome.retryAfterMs);
        return 'throttled';
      case 'unanswered': {
        // A request that never reached the carrier made nothing; any other silence may have made the parcel.
        const lost = parcel.answer_lost || !NEVER_REACHED.test(outcome.reason);
        if (this.now().getTime() - new Date(parcel.first_try_at).getTime() >= GIVE_UP_AFTER_MS) {
          await this.accountState(account.id, 'unreachable', outcome.reason);
          // A parcel that may exist is for a person to decide, with the carrier's portal at hand.
          await this.finish(parcel, { state: lost ? 'uncertain' : 'failed', reason: 'The carrier did not answer' });
          return lost ? 'uncertain' : 'failed';
        }
        await this.release(parcel.id, { answer_lost: lost, reason: outcome.reason.slice(0, 300) });
        await this.later(parcel.id, backoffMs(parcel.tries));
        return 'retry';
      }
    }
  }

  /** The parcel exists at the carrier: it is `sent`, and the order's delivery says so. */
  private async made(parcel: ClaimedParcel, account: OpenAccount, made: MadeParcel, result: 'sent' | 'found'): Promise<SendResult> {
    await this.knex.transaction(async (trx) => {
      // Only a parcel still on its way to the carrier (or a person's uncertain one) becomes sent.
      const [still] = await trx('parcels')
        .where({ id: parcel.id })
        .whereIn('state', ['queued', 'sending', 'uncertain'])
        .update({
          state: 'sent',
          tracking: made.tracking.slice(0, 100),
          label_url: made.labelUrl?.slice(0, 2000) ?? null,
          carrier_status: made.carrierStatus?.slice(0, 200) ?? null,
          reason: null,
          answer_lost: false,
          sent_at: trx.fn.now(),
          last_news_at: trx.fn.now(),
          next_poll_at: account.adapter.status && account.adapter.push === 'none' ? trx.raw(`now() + ${POLL_EVERY}`) : null,
          updated_at: trx.fn.now(),
        })
        .returning('id');
      if (!still) return;
      if (account.state !== 'working')
        await trx('carrier_accounts').where({ id: account.id }).update({ state: 'working', state_since: null, state_reason: null });
      if (parcel.order_id)
        await applyDeliveryEvents(trx, parcel.workspace_id, [
          {
            orderId: parcel.order_id,
            status: 'shipped',
            carrier: account.adapter.title,
            trackingNumber: made.tracking.slice(0, 100),
            carrierStatus: made.carrierStatus?.slice(0, 200) ?? null,
            at: this.now(),
            source: 'carrier',
            by: account.name,
          },
        ]);
    });
    return result;
  }

  private async finish(parcel: ClaimedParcel, change: Record<string, unknown>): Promise<void> {
    await this.knex('parcels')
      .where({ id: parcel.id })
      .update({ ...change, updated_at: this.knex.fn.now() });
  }

  /** Back to `queued`, to be taken by its next job. */
  private async release(parcelId: string, change: Record<string, unknown>): Promise<void> {
    await this.knex('parcels')
      .where({ id: parcelId, state: 'sending' })
      .update({ ...change, state: 'queued', updated_at: this.knex.fn.now() });
  }

  private async later(parcelId: string, afterMs: number): Promise<void> {
    await this.jobs.send(this.knex, QUEUES.shipParcel.name, { parcelId }, { startAfter: new Date(this.now().getTime() + Math.max(afterMs, 1_000)) });
  }

  private async accountState(accountId: string, state: 'credentials_refused' | 'unreachable', reason: string): Promise<void> {
    await this.knex('carrier_accounts')
      .where({ id: accountId })
      .update({ state, state_since: this.knex.raw('coalesce(state_since, now())'), state_reason: reason.slice(0, 300) });
  }
}
