import type { IncomingHttpHeaders } from 'node:http';
import type { Knex } from 'knex';
import { sameSecret } from '../../integrations/secret-compare';
import { applyDeliveryEvents } from '../deliveries';
import type { DeliveryEvent } from '../deliveries';
import type { CarrierAccountService, OpenAccount } from './accounts';
import type { CarrierUpdate } from './carriers/types';

/** What a carrier's push is answered: 200 (with the challenge's answer when it asked one), or a refusal. */
export type PushAnswer = { status: 200; body: string | { ok: true; updated: number; ignored: number } } | { status: 400 | 401 | 404 };

/** Statuses after which nothing more comes: polling stops. */
const FINAL = new Set(['delivered', 'returned', 'lost']);
/** A parcel not yet final is asked about at most every 30 minutes, and no more 30 days after its last change. */
const POLL_EVERY = "interval '30 minutes'";
const POLL_FOR = "interval '30 days'";
/** Parcels one pass of the worker asks about (each within its account's rate). */
const POLL_BATCH = 100;

/**
 * News from the carriers the service calls (docs/carriers.md 4): each kind's push, verified as the
 * carrier signs it (or by the long random token of its URL), and the polling of kinds without a
 * push. Every update is written as delivery news (source `carrier`): a status the adapter knows
 * changes the order's delivery; an attempt (unreachable, postponed, no answer) its carrier's words
 * only; a word it does not know the carrier's words only, counted on the account so it can be added.
 */
export class CarrierNewsService {
  constructor(
    private readonly knex: Knex,
    private readonly accounts: CarrierAccountService,
  ) {}

  /** A push to /hooks/carrier-accounts/:id[/:token]: nothing is read or written before it is verified. */
  async receive(accountId: string, token: string | null, raw: Buffer, headers: IncomingHttpHeaders, query: Record<string, string>): Promise<PushAnswer> {
    const account = await this.accounts.open(null, accountId);
    const readPush = account?.adapter.readPush;
    if (!account || !readPush || account.adapter.push === 'none') return { status: 404 };
    const { adapter } = account;
    let secret: string;
    if (adapter.push === 'url_token') {
      if (!token || !sameSecret(token, account.hook_token)) return { status: 401 };
      secret = account.hook_token;
    } else secret = adapter.pushSecret ? (account.credentials[adapter.pushSecret] ?? '') : '';
    const read = readPush.call(adapter, raw, headers, query, secret);
    switch (read.kind) {
      case 'unverified':
        return { status: 401 };
      case 'unreadable':
        return { status: 400 };
      case 'challenge':
        return { status: 200, body: read.answer };
      case 'ignored':
        return { status: 200, body: { ok: true, updated: 0, ignored: 1 } };
      case 'updates': {
        const { updated, ignored } = await this.apply(account, read.updates);
        return { status: 200, body: { ok: true, updated, ignored } };
      }
    }
  }

  /** Writes the updates of one account's parcels; an update naming no parcel of the account is ignored. */
  async apply(account: OpenAccount, updates: readonly CarrierUpdate[]): Promise<{ updated: number; ignored: number }> {
    let updated = 0;
    let ignored = 0;
    await this.knex.transaction(async (trx) => {
      const trackings = [...new Set(updates.map((u) => u.tracking))];
      const parcels = await trx('parcels as p')
        .leftJoin('orders as o', 'o.id', 'p.order_id')
        .where({ 'p.account_id': account.id })
        .whereIn('p.tracking', trackings)
        .select('p.id', 'p.order_id', 'p.tracking', 'o.delivery_status');
      const events: Array<Omit<DeliveryEvent, 'workspaceId'>> = [];
      const unknown: Record<string, number> = {};
      for (const update of updates) {
        const parcel = parcels.find((p) => p.tracking === update.tracking);
        if (!parcel) {
          ignored += 1;
          continue;
        }
        updated += 1;
        const words = update.words.trim().slice(0, 200);
        const meaning = account.adapter.meaning(words);
        const final = meaning !== undefined && FINAL.has(meaning);
        await trx('parcels')
          .where({ id: parcel.id })
          .update({
            carrier_status: words,
            last_news_at: trx.fn.now(),
            state: meaning === 'cancelled' ? 'cancelled' : trx.raw('state'),
            next_poll_at:
              final || meaning === 'cancelled' || !account.adapter.status || account.adapter.push !== 'none' ? null : trx.raw(`now() + ${POLL_EVERY}`),
            updated_at: trx.fn.now(),
          });
        if (!parcel.order_id || meaning === 'cancelled') continue;
        if (meaning === undefined) unknown[words] = (unknown[words] ?? 0) + 1;
        events.push({
          orderId: parcel.order_id,
          // A word the adapter does not know changes the carrier's words only: the status stays the order's.
          status: meaning ?? parcel.delivery_status ?? 'shipped',
          carrier: account.adapter.title,
          trackingNumber: parcel.tracking,
          carrierStatus: words,
          at: update.at ?? new Date(),
          source: 'carrier',
          by: account.name,
        });
      }
      await applyDeliveryEvents(trx, account.workspace_id, events);
      if (Object.keys(unknown).length > 0) {
        const row = await trx('carrier_accounts').where({ id: account.id }).forUpdate().first('unknown_words');
        const counts: Record<string, number> = { ...(row?.unknown_words ?? {}) };
        // The words a shop may want to add: a carrier has a few dozen, so a hundred is plenty.
        for (const [word, n] of Object.entries(unknown)) if (word in counts || Object.keys(counts).length < 100) counts[word] = (counts[word] ?? 0) + n;
        await trx('carrier_accounts')
          .where({ id: account.id })
          .update({ unknown_words: JSON.stringify(counts) });
      }
    });
    return { updated, ignored };
  }

  /**
   * The worker's pass over the parcels of kinds without a push: each one due (not final, not asked
   * within 30 minutes, changed within 30 days) is asked its status. Returns how many were asked.
   */
  async poll(): Promise<number> {
    const due = await this.knex('parcels')
      .where({ state: 'sent' })
      .where('next_poll_at', '<=', this.knex.fn.now())
      .orderBy('next_poll_at')
      .limit(POLL_BATCH)
      .select('id', 'account_id', 'workspace_id', 'tracking', 'last_news_at');
    const opened = new Map<string, OpenAccount | null>();
    let asked = 0;
    for (const parcel of due) {
      if (!opened.has(parcel.account_id)) opened.set(parcel.account_id, await this.accounts.open(parcel.workspace_id, parcel.account_id));
      const account = opened.get(parcel.account_id);
      const stale = parcel.last_news_at && Date.now() - new Date(parcel.last_news_at).getTime() > 30 * 86_400_000;
      if (!account?.adapter.status || account.state === 'credentials_refused' || stale) {
        await this.knex('parcels').where({ id: parcel.id }).update({ next_poll_at: null });
        continue;
      }
      // Asked again in 30 minutes whatever comes of it; news moves it on, the 30 days stop it.
      await this.knex('parcels')
        .where({ id: parcel.id })
        .update({ next_poll_at: this.knex.raw(`CASE WHEN last_news_at < now() - ${POLL_FOR} THEN NULL ELSE now() + ${POLL_EVERY} END`) });
      await this.accounts.pace(account);
      const update = await account.adapter.status(this.accounts.session(account.adapter, account.credentials, account.id), parcel.tracking).catch(() => null);
      asked += 1;
      if (update?.words.trim()) await this.applyIfNew(account, parcel.id, update);
    }
    return asked;
  }

  /** A polled status written only when its words differ from the parcel's last: polling repeats itself. */
  private async applyIfNew(account: OpenAccount, parcelId: string, update: CarrierUpdate): Promise<void> {
    const parcel = await this.knex('parcels').where({ id: parcelId }).first('carrier_status');
    if (parcel?.carrier_status === update.words.trim().slice(0, 200)) return;
    await this.apply(account, [update]);
  }
}
