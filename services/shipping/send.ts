import type { Knex } from 'knex';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import { applyDeliveryEvents } from '../deliveries';
import { NotFoundError, ValidationError, isUuid, msg } from '../../services/shared';
import type { CarrierAccountService, OpenAccount } from './accounts';
import { slotBindings, takeSlot } from './accounts';
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

/**
 * The orders as their parcels carry them (carriers.md 2b), for a whole call in one statement read
 * by the parcels' ids (so it runs beside their claim); null: no longer shippable. A parcel the claim
 * did not take is simply not asked for.
 */
async function parcelRequests(db: Knex, parcelIds: readonly string[], account: OpenAccount): Promise<Map<string, ParcelRequest | null>> {
  const { rows } = await db.raw<{
    rows: Array<{
      id: string;
      reference: string;
      cod_amount: string | null;
      client_name: string | null;
      phone: string | null;
      address: string | null;
      total_amount: string | null;
      products_name: string | null;
      note: string | null;
      status: string | null;
      city_id: string | null;
      city_name: string | null;
      city_arabic_name: string | null;
      pickup_id: string | null;
      pickup_name: string | null;
      pickup_arabic_name: string | null;
    }>;
  }>(
    `SELECT p.id, p.reference, p.cod_amount, o.client_name, o.phone, o.address, o.total_amount, o.products_name, o.note, o.status,
            c.city_id, c.name AS city_name, c.arabic_name AS city_arabic_name,
            pc.city_id AS pickup_id, pc.name AS pickup_name, pc.arabic_name AS pickup_arabic_name
       FROM parcels p
       LEFT JOIN orders o ON o.id = p.order_id AND o.workspace_id = p.workspace_id
       LEFT JOIN carrier_cities c ON c.account_id = p.account_id AND c.city_id = p.city_id
       LEFT JOIN carrier_cities pc ON pc.account_id = p.account_id AND pc.city_id = ?
      WHERE p.id = ANY(?::uuid[]) AND p.account_id = ? AND p.workspace_id = ?`,
    [account.pickup_city_id ?? '', parcelIds, account.id, account.workspace_id] as never[],
  );
  const requests = new Map<string, ParcelRequest | null>();
  for (const row of rows) {
    const amount = row.total_amount ?? row.cod_amount;
    if (row.status !== 'confirmed' || amount === null || !row.city_id) {
      requests.set(row.id, null);
      continue;
    }
    requests.set(row.id, {
      reference: row.reference,
      name: row.client_name ?? '',
      // +212612345678 → 0612345678: Moroccan carriers' ten digits.
      phone: `0${String(row.phone).replace(/^\+212/, '')}`,
      address: row.address ?? '',
      city: { id: row.city_id, name: row.city_name ?? '', arabicName: row.city_arabic_name },
      amount: Number(amount),
      products: row.products_name ?? '',
      productLines: row.products_name ? [{ name: row.products_name, quantity: 1 }] : [],
      note: row.note,
      allowOpen: account.allow_open,
      pickupCity: row.pickup_id ? { id: row.pickup_id, name: row.pickup_name ?? '', arabicName: row.pickup_arabic_name } : null,
    });
  }
  return requests;
}

/** An account's lanes within one fetch of jobs: what stops them, and the parcels made whose write is under way. */
interface Lanes {
  credentials: boolean;
  wait: { ms: number; result: 'retry' | 'throttled' } | null;
  /**
   * This fetch's parcels of the account (whatever their state, its lanes hold them), and the lanes
   * that hold a call (at the carrier, or claimed ahead of it: never more than one at the carrier at
   * once). A claim counts the account's other parcels being sent, plus one call for each other lane
   * holding one; the lanes' claims are made one at a time, so that count is exact.
   */
  ours: readonly string[];
  holding: Set<number>;
  claims: Promise<unknown>;
  /** Parcels made, waiting for the write under way to end; the write, while there is one; its failure. */
  made: Array<{ parcel: ClaimedParcel; made: MadeParcel }>;
  writing: Promise<void> | null;
  failed: Error | null;
  /** Resolved once every lane has made its last call. */
  done: Promise<void>;
}

/** A call's parcels claimed (and its orders read): what the call is made of, the slot it took at the carrier's rate. */
interface ClaimedCall {
  claimed: ClaimedParcel[];
  busy: string[];
  requests: Map<string, ParcelRequest | null>;
  /** When the account's slot the claim took comes (performance.now()); null: none taken. */
  slotAt: number | null;
}

/** A write of parcels made waits this long for more (at most this many), while the lanes still call. */
const GATHER = 8;
const GATHER_MS = 40;

/** Splits a list into runs of at most `size`. */
function runsOf<T>(items: readonly T[], size: number): T[][] {
  const runs: T[][] = [];
  for (let i = 0; i < items.length; i += size) runs.push(items.slice(i, i + size));
  return runs;
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

  /** One parcel's job (the tests' and a person's way in): `sendMany` of one. */
  async send(parcelId: string): Promise<SendResult> {
    return (await this.sendMany([parcelId])).get(parcelId) ?? 'nothing_to_do';
  }

  /**
   * The `ship-parcel` jobs of one fetch of the worker: grouped by account, each account's parcels go
   * in as many lanes as the calls it may have at once, each call carrying as many parcels as its
   * carrier takes (Yalidine 50, the others one), every call paced at the account's rate. So 500
   * parcels cost the carrier's time, not one job's round trip each.
   */
  async sendMany(parcelIds: readonly string[]): Promise<Map<string, SendResult>> {
    const ids = [...new Set(parcelIds)];
    const results = new Map<string, SendResult>(ids.map((id) => [id, 'nothing_to_do']));
    if (ids.length === 0) return results;
    const peeks: Array<{ id: string; account_id: string; workspace_id: string }> = await this.knex('parcels')
      .whereIn('id', ids)
      .select('id', 'account_id', 'workspace_id');
    const byAccount = new Map<string, { workspaceId: string; ids: string[] }>();
    for (const id of ids) {
      const peek = peeks.find((p) => p.id === id);
      if (!peek) continue;
      const group = byAccount.get(peek.account_id) ?? { workspaceId: peek.workspace_id, ids: [] };
      group.ids.push(id);
      byAccount.set(peek.account_id, group);
    }
    await Promise.all([...byAccount].map(([accountId, group]) => this.sendForAccount(group.workspaceId, accountId, group.ids, results)));
    return results;
  }

  private async sendForAccount(workspaceId: string, accountId: string, ids: string[], results: Map<string, SendResult>): Promise<void> {
    const account = await this.accounts.open(workspaceId, accountId);
    if (!account) return;
    const { batch, concurrency } = account.adapter.limits;
    const calls = runsOf(ids, Math.max(1, batch));
    let finished = () => {};
    const lanes: Lanes = {
      // What stops the account's lanes: its credentials refused, or a carrier that did not answer or is over its quota (the rest wait as long).
      credentials: account.state === 'credentials_refused',
      wait: null,
      ours: ids,
      holding: new Set(),
      claims: Promise.resolve(),
      made: [],
      writing: null,
      failed: null,
      done: new Promise<void>((resolve) => {
        finished = resolve;
      }),
    };
    // As many lanes as the account's calls at once, each lane's calls one after another. A carrier
    // that takes many parcels a call (Yalidine) is called by one lane: its quotas come back in each
    // answer's headers, and the next call is made knowing them, never into a 429.
    const laneCount = batch > 1 ? 1 : concurrency;
    const lane = async (laneNo: number) => {
      // While a lane's call is at the carrier, its next call's parcels are claimed (the claim's round
      // trips overlap the carrier's answer instead of following it); a claimed call that is not made
      // after all (the lanes stopped) gives its parcels back untried.
      let ahead: { call: string[]; claimed: Promise<ClaimedCall> } | null = null;
      for (;;) {
        const call = ahead?.call ?? calls.shift();
        if (!call) break;
        const claimed: ClaimedCall | null = ahead ? await ahead.claimed : null;
        ahead = null;
        // A failed write stops them: the fetch fails, and its jobs are tried again.
        if (lanes.failed || lanes.credentials || lanes.wait) {
          if (claimed) await this.unclaim(claimed.claimed);
          lanes.holding.delete(laneNo);
          if (lanes.failed) break;
          if (lanes.credentials) {
            // Nothing is lost: the parcels wait, and a fix of the credentials queues them again.
            for (const id of call) results.set(id, 'waiting_for_credentials');
          } else if (lanes.wait) {
            // Not tried: each waits as long as the call that went unanswered (its backoff) or was throttled, without a try counted.
            await this.laterMany(call, lanes.wait.ms);
            for (const id of call) results.set(id, lanes.wait.result);
          }
          continue;
        }
        const current: ClaimedCall = claimed ?? (await this.claimCall(account, call, lanes, laneNo));
        // The next call's parcels claimed while this one is at the carrier: it starts only once this one is over.
        const next: string[] | undefined = current.claimed.length > 0 ? calls.shift() : undefined;
        if (next) {
          const following = this.claimCall(account, next, lanes, laneNo);
          // Its failure is met when its turn comes (or not at all, if the lane fails first).
          following.catch(() => {});
          ahead = { call: next, claimed: following };
        }
        try {
          await this.sendCall(account, current, results, lanes);
        } catch (err) {
          // The fetch fails and its jobs are tried again: the call claimed ahead gives its parcels back first, untried.
          if (ahead) await ahead.claimed.then((following) => this.unclaim(following.claimed)).catch(() => {});
          throw err;
        } finally {
          if (!ahead) lanes.holding.delete(laneNo);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(laneCount, calls.length)) }, (_, laneNo) => lane(laneNo)));
    finished();
    while (lanes.writing) await lanes.writing;
    if (lanes.failed) throw lanes.failed;
  }

  /** A call's parcels claimed, with the account's next slot at its carrier's rate, and their orders read beside the claim. */
  private claimCall(account: OpenAccount, call: string[], lanes: Lanes, laneNo: number): Promise<ClaimedCall> {
    const claimed = lanes.claims.then(async () => {
      // The other lanes' calls, one each, are room this one cannot take.
      const reserved = [...lanes.holding].filter((other) => other !== laneNo).length * Math.max(1, account.adapter.limits.batch);
      // The orders are read while the parcels are claimed: a call's few milliseconds of Postgres, not twice.
      const [{ claimed, busy, waitMs }, requests] = await Promise.all([
        this.claim(call, account, lanes.ours, reserved),
        parcelRequests(this.knex, call, account),
      ]);
      if (claimed.length > 0) lanes.holding.add(laneNo);
      // The claim took the account's next slot at its carrier's rate for the call's first request.
      return { claimed, busy, requests, slotAt: claimed.length > 0 ? performance.now() + waitMs : null };
    });
    lanes.claims = claimed.catch(() => {});
    return claimed;
  }

  /** Parcels claimed for a call that was not made: back to `queued`, their try not counted. */
  private async unclaim(parcels: readonly ClaimedParcel[]): Promise<void> {
    if (parcels.length === 0) return;
    await this.knex('parcels')
      .whereIn(
        'id',
        parcels.map((parcel) => parcel.id),
      )
      .where({ state: 'sending' })
      .update({
        state: 'queued',
        tries: this.knex.raw('greatest(0, tries - 1)'),
        first_try_at: this.knex.raw('CASE WHEN tries <= 1 THEN NULL ELSE first_try_at END'),
        updated_at: this.knex.fn.now(),
      });
  }

  /**
   * One call's parcels, claimed: asked about first where an answer was lost, then made in one create
   * call at the slot the claim took. The parcels made are written in one transaction while the lane
   * goes on to its next call (claimed while this one was at the carrier).
   */
  private async sendCall(
    account: OpenAccount,
    { claimed, busy, requests, slotAt: slot }: ClaimedCall,
    results: Map<string, SendResult>,
    lanes: Lanes,
  ): Promise<void> {
    let slotAt = slot;
    const paced = async () => {
      if (slotAt === null) return this.accounts.pace(account);
      const wait = slotAt - performance.now();
      slotAt = null;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    };
    if (busy.length > 0) {
      await this.laterMany(busy, 1_000);
      for (const id of busy) results.set(id, 'busy');
    }
    if (claimed.length === 0) return;
    const session = this.accounts.session(account.adapter, account.credentials, account.id);
    const toCreate: Array<{ parcel: ClaimedParcel; request: ParcelRequest }> = [];
    const note = (parcel: ClaimedParcel, result: SendResult, outcome?: CreateOutcome) => {
      results.set(parcel.id, result);
      if (result === 'waiting_for_credentials') lanes.credentials = true;
      if (result === 'retry' && outcome?.kind === 'unanswered') lanes.wait = { ms: backoffMs(parcel.tries), result };
      if (result === 'throttled' && outcome?.kind === 'throttled') lanes.wait = { ms: outcome.retryAfterMs, result };
    };
    for (const parcel of claimed) {
      const request = requests.get(parcel.id);
      if (!request) {
        await this.finish(parcel, { state: 'failed', reason: 'The order can no longer be shipped (not confirmed, no amount or no city)' });
        note(parcel, 'failed');
      } else if (!parcel.answer_lost) toCreate.push({ parcel, request });
      else {
        await paced();
        const lookup: LookupOutcome = account.adapter.lookup
          ? await account.adapter.lookup(session, parcel.reference, null)
          : { kind: 'cannot_tell', reason: 'The carrier cannot be asked whether the parcel was made' };
        if (lookup.kind === 'found') note(parcel, await this.made(parcel, account, lookup.parcel, 'found'));
        else if (lookup.kind === 'unanswered' || lookup.kind === 'throttled') note(parcel, await this.settle(parcel, account, lookup), lookup);
        else if (lookup.kind === 'cannot_tell') {
          await this.finish(parcel, { state: 'uncertain', reason: lookup.reason.slice(0, 300) });
          note(parcel, 'uncertain');
        } else toCreate.push({ parcel, request });
      }
    }
    if (toCreate.length === 0) return;
    await paced();
    const outcomes = await account.adapter.create(
      session,
      toCreate.map((one) => one.request),
    );
    const made: Array<{ parcel: ClaimedParcel; made: MadeParcel }> = [];
    for (const { parcel, request } of toCreate) {
      const outcome: CreateOutcome = outcomes.get(request.reference) ?? { kind: 'unanswered', reason: 'The carrier’s answer did not name the parcel' };
      if (outcome.kind === 'created') made.push({ parcel, made: outcome.parcel });
      else note(parcel, await this.settle(parcel, account, outcome), outcome);
    }
    if (made.length === 0) return;
    lanes.made.push(...made);
    lanes.writing ??= this.writeMade(account, lanes, note);
  }

  /**
   * The lanes' parcels made, written while the lanes go on: whatever was made while a write was
   * under way goes in the next one, so 4 lanes' parcels are written a few at a time. A failed write
   * fails the fetch (its jobs are retried; each parcel, still `sending`, is then asked about).
   */
  private async writeMade(account: OpenAccount, lanes: Lanes, note: (parcel: ClaimedParcel, result: SendResult) => void): Promise<void> {
    try {
      while (lanes.made.length > 0 && !lanes.failed) {
        // While the lanes still call, a few more parcels are let in: fewer, larger transactions.
        if (lanes.made.length < GATHER) await Promise.race([new Promise((resolve) => setTimeout(resolve, GATHER_MS)), lanes.done]);
        const made = lanes.made.splice(0);
        await this.madeMany(made, account);
        for (const { parcel } of made) note(parcel, 'sent');
      }
    } catch (err) {
      lanes.failed = err instanceof Error ? err : new Error(String(err));
    } finally {
      lanes.writing = null;
    }
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

  /**
   * Takes the parcels to `sending` under the account's lock, as many as its calls at once allow
   * (each call carrying its batch); the others are `busy` (another lane or process holds the slots).
   * `ours`: the parcels this process's lanes hold, counted instead as `reserved` (one call for each
   * other lane: whether its call is at the carrier, claimed ahead or being written, it has one at most).
   */
  private async claim(
    parcelIds: readonly string[],
    account: OpenAccount,
    ours: readonly string[] = [],
    reserved = 0,
  ): Promise<{ claimed: ClaimedParcel[]; busy: string[]; waitMs: number }> {
    const { concurrency, batch } = account.adapter.limits;
    return this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`carrier-account:${account.id}`]);
      // Under the lock, one statement: the account's parcels being sent (stale ones aside), the given
      // parcels that may be taken (queued, or sending so long their answer was lost), as many of
      // them as there is room for taken, in the order given, and, when any was, the account's next
      // slot at its carrier's rate (the call's pace, without a round trip of its own).
      const { rows } = await trx.raw<{ rows: Array<ClaimedParcel & { taken: boolean; wait_ms: string | null }> }>(
        `WITH sending AS (
           SELECT count(*) AS n FROM parcels
            WHERE account_id = ? AND state = 'sending' AND updated_at > now() - ${STALE_SENDING} AND NOT (id = ANY(?::uuid[]))
         ), free AS (
           SELECT p.id, array_position(?::uuid[], p.id) AS rank FROM parcels p
            WHERE p.id = ANY(?::uuid[])
              AND (p.state = 'queued' OR (p.state = 'sending' AND p.updated_at <= now() - ${STALE_SENDING}))
            FOR UPDATE
         ), pick AS (
           SELECT id FROM free ORDER BY rank LIMIT (SELECT greatest(0, ? - n - ?) FROM sending)
         ), taken AS (
           UPDATE parcels p
              SET state = 'sending', tries = p.tries + 1,
                  -- A parcel found sending is a try whose answer never came: ask before making another.
                  answer_lost = p.answer_lost OR p.state = 'sending',
                  first_try_at = coalesce(p.first_try_at, now()), updated_at = now()
             FROM pick WHERE p.id = pick.id
           RETURNING p.id, p.workspace_id, p.order_id, p.account_id, p.reference, p.city_id, p.tries, p.answer_lost, p.first_try_at, p.cod_amount
         ), slot AS (
           ${takeSlot('EXISTS (SELECT 1 FROM taken)')}
         )
         SELECT f.id, t.workspace_id, t.order_id, t.account_id, t.reference, t.city_id, t.tries, t.answer_lost, t.first_try_at, t.cod_amount,
                t.id IS NOT NULL AS taken, (SELECT wait_ms FROM slot) AS wait_ms
           FROM free f LEFT JOIN taken t ON t.id = f.id
          ORDER BY f.rank`,
        [account.id, ours, parcelIds, parcelIds, concurrency * Math.max(1, batch), reserved, ...slotBindings(account)] as never[],
      );
      return {
        claimed: rows.filter((row) => row.taken).map(({ taken: _, wait_ms: __, ...parcel }) => parcel),
        busy: rows.filter((row) => !row.taken).map((row) => row.id),
        waitMs: Number(rows[0]?.wait_ms ?? 0),
      };
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
    await this.madeMany([{ parcel, made }], account);
    return result;
  }

  /** Parcels that exist at the carrier (one account's): each `sent`, and their orders' deliveries say so, in one transaction. */
  private async madeMany(parcels: ReadonlyArray<{ parcel: ClaimedParcel; made: MadeParcel }>, account: OpenAccount): Promise<void> {
    if (parcels.length === 0) return;
    const column = <T>(pick: (one: { parcel: ClaimedParcel; made: MadeParcel }) => T) => parcels.map(pick);
    const polled = !!account.adapter.status && account.adapter.push === 'none';
    await this.knex.transaction(async (trx) => {
      // Only a parcel still on its way to the carrier (or a person's uncertain one) becomes sent.
      const { rows } = await trx.raw<{ rows: Array<{ id: string }> }>(
        `UPDATE parcels p
            SET state = 'sent', tracking = v.tracking, label_url = v.label_url, carrier_status = v.carrier_status, reason = NULL,
                answer_lost = false, sent_at = now(), last_news_at = now(),
                next_poll_at = CASE WHEN ?::boolean THEN now() + ${POLL_EVERY} END, updated_at = now()
           FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[]) AS v(id, tracking, label_url, carrier_status)
          WHERE p.id = v.id AND p.state IN ('queued', 'sending', 'uncertain')
          RETURNING p.id`,
        [
          polled,
          column((one) => one.parcel.id),
          column((one) => one.made.tracking.slice(0, 100)),
          column((one) => one.made.labelUrl?.slice(0, 2000) ?? null),
          column((one) => one.made.carrierStatus?.slice(0, 200) ?? null),
        ] as never[],
      );
      if (rows.length === 0) return;
      if (account.state !== 'working')
        await trx('carrier_accounts').where({ id: account.id }).update({ state: 'working', state_since: null, state_reason: null });
      const still = new Set(rows.map((row) => row.id));
      const events = parcels
        .filter((one) => still.has(one.parcel.id) && one.parcel.order_id)
        .map(({ parcel, made }) => ({
          orderId: parcel.order_id as string,
          status: 'shipped' as const,
          carrier: account.adapter.title,
          trackingNumber: made.tracking.slice(0, 100),
          carrierStatus: made.carrierStatus?.slice(0, 200) ?? null,
          at: this.now(),
          source: 'carrier' as const,
          by: account.name,
        }));
      await applyDeliveryEvents(trx, account.workspace_id, events);
    });
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

  /** A job for each parcel, not before `afterMs` from now, in one statement. */
  private async laterMany(parcelIds: readonly string[], afterMs: number): Promise<void> {
    const startAfter = new Date(this.now().getTime() + Math.max(afterMs, 1_000));
    await this.jobs.sendMany(
      this.knex,
      QUEUES.shipParcel.name,
      parcelIds.map((parcelId) => ({ data: { parcelId }, startAfter })),
    );
  }

  private async accountState(accountId: string, state: 'credentials_refused' | 'unreachable', reason: string): Promise<void> {
    await this.knex('carrier_accounts')
      .where({ id: accountId })
      .update({ state, state_since: this.knex.raw('coalesce(state_since, now())'), state_reason: reason.slice(0, 300) });
  }
}
