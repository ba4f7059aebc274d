import type { Knex } from 'knex';
import { z } from 'zod';
import type { JobData, Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import { newMessageId } from '../../integrations/signing';
import type { CallSettingsService } from './settings';
import { isOpen, nextOpening, settingsFrom } from './settings';
import {
  ConflictError,
  NotFoundError,
  lockOrderOfCall,
  lockOrdersOfNonHumanOperations,
  decode,
  msg,
  plain,
  bodyFields,
  camelOrSnake,
  isUuid,
  parse,
} from '../shared';
import { MAX_LADDER_AGENTS } from './ladder';
import type { Coded, Message } from '../shared';
import type { Call, Operation, Outcome, OrderStatus, Order } from '../orders';
import { CALL_FIELDS, operationWithCalls, OUTCOMES, toCall, CANCELLING_STATUSES, amountFields, checkDecimals, DEFAULT_CURRENCY, toOrder } from '../orders';

/** A voice call whose request no agent accepted within this long ends `failed` ("agent unreachable"). */
export const ACCEPT_WITHIN_MINUTES = 25;

/** An operation ends after this many calls in all, whatever their outcomes. */
const MAX_CALLS_PER_OPERATION = 10;
const FINAL_OUTCOMES: readonly Outcome[] = ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized'];

export interface CallConfig {
  cost: number;
  /** Credits per WhatsApp message, charged under the voice call's rule (the shop pays Meta itself: 0 by default). */
  whatsappCost: number;
  claimMinutes: number;
  resultTimeoutMinutes: number;
}

export interface OutcomeDetails {
  outcome: Outcome;
  callbackAt?: Date | null;
  changes?: string | null;
  summary?: string | null;
  durationSeconds?: number | null;
  /** What the customer wrote back to a WhatsApp message. */
  reply?: string | null;
  /** The code of a summary the service wrote itself (`systemSummary`), for the pages; absent for an agent's or a member's words. */
  summaryCode?: Coded | null;
}

/** A summary the service writes itself (no agent or member said it): its English for the API, its code for the pages. */
export function systemSummary(message: Message): { summary: string; summaryCode: Coded | null } {
  return { summary: plain(message), summaryCode: decode(message) };
}

/** A report a voice agent sent, authenticated. */
export type AgentReport = { type: 'call.started' } | ({ type: 'call.ended' } & OutcomeDetails);

/** A call row with what ending it needs (see lockCall). */
// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
type LockedCall = Record<string, any>;

export type DispatchResult = 'dispatched' | 'cancelled' | 'waiting' | 'not-due' | 'human';

/** The outcomes after which an operation may go on to the agent's fallback (the ladder). */
const UNANSWERED: readonly Outcome[] = ['no-answer', 'failed'];
/** The job that carries out an opened call, by the agent's kind. */
const SEND_QUEUE = { voice: QUEUES.callRequest.name, whatsapp: QUEUES.whatsappSend.name } as const;

export interface CallView {
  call: Call;
  operation: Operation;
  order: Order;
}

const text = (field: string) =>
  z
    .string({ error: msg('notText', { label: field }) })
    .max(2000, msg('tooLong', { label: field, max: '2,000' }))
    .nullable()
    .optional();

/** What an outcome report carries, from a member (camelCase or snake_case) or a voice agent. */
export function outcomeSchema(now: () => Date) {
  return z
    .object({
      outcome: z.enum(OUTCOMES, { error: msg('oneOf', { label: 'outcome', allowed: OUTCOMES.join(', ') }) }),
      callbackAt: z.iso
        .datetime({ offset: true, error: msg('isoDateTime', { label: 'callbackAt' }) })
        .nullable()
        .optional(),
      changes: text('changes'),
      notes: text('notes'),
      // The caller settles the amount with the customer: applied with the outcome.
      ...amountFields,
    })
    .superRefine((value, ctx) => {
      if (value.outcome !== 'postponed') return;
      if (!value.callbackAt) {
        ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: msg('requiredForPostponed', { label: 'callbackAt' }) });
        return;
      }
      const at = new Date(value.callbackAt).getTime();
      const current = now().getTime();
      if (at <= current) ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: msg('future', { label: 'callbackAt' }) });
      else if (at > current + 30 * 86_400_000) ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: msg('within30', { label: 'callbackAt' }) });
    });
}

/** What became of a voice agent's report, by its webhook-id (see recordReport). */
type ReportSeen = 'fresh' | 'already' | 'replayed';

/**
 * The confirmation loop's rules, whoever drives them: a member working the queue, a voice agent's
 * report, or the worker (dispatch, time-outs, expired claims). Every change happens in one
 * transaction with the rows it depends on locked in the one lock order of services/shared/locks.ts
 * (order, operation, call), so concurrent workers and requests agree and never deadlock.
 */
export class CallService {
  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    private readonly settings: CallSettingsService,
    private readonly config: CallConfig,
    private readonly now: () => Date = () => new Date(),
  ) {}

  // ---- the human queue --------------------------------------------------------------------

  /**
   * The human queue as a member sees it: how many calls can be made now (none while the calling
   * hours are closed), how many wait for a later time, and when the next one can be made (inside
   * the calling hours; null when nothing waits).
   */
  async queue(workspaceId: string): Promise<{ dueNow: number; waiting: number; nextAt: Date | null }> {
    const now = this.now();
    const [settings, row] = await Promise.all([
      this.settings.get(workspaceId),
      this.knex('operations as op')
        .join('agents as a', 'a.id', 'op.agent_id')
        .where({ 'op.workspace_id': workspaceId, 'op.status': 'pending', 'a.kind': 'human' })
        .first(
          this.knex.raw('count(*) FILTER (WHERE op.next_attempt_at <= ?)::int AS due', [now]),
          this.knex.raw('count(*)::int AS waiting'),
          this.knex.raw('min(op.next_attempt_at) AS first_at'),
        ),
    ]);
    const open = isOpen(settings, now);
    const dueNow = open ? row.due : 0;
    const nextAt = row.first_at ? nextOpening(settings, new Date(Math.max(row.first_at.getTime(), now.getTime()))) : null;
    return { dueNow, waiting: row.waiting - dueNow, nextAt };
  }

  /** Claims the oldest due human call of the workspace for `userId`; null when nothing is due or the hours are closed. */
  async claimNext(workspaceId: string, userId: string): Promise<CallView | null> {
    await this.expireClaims(workspaceId);
    const now = this.now();
    return this.knex.transaction(async (trx) => {
      const settings = await this.settings.get(workspaceId, trx);
      if (!isOpen(settings, now)) return null;
      for (;;) {
        // The operation before its order, against the lock order: so this statement never waits.
        const op = await trx('operations as op')
          .join('agents as a', 'a.id', 'op.agent_id')
          .join('orders as o', 'o.id', 'op.order_id')
          .where({ 'op.workspace_id': workspaceId, 'op.status': 'pending', 'a.kind': 'human' })
          .where('op.next_attempt_at', '<=', now)
          .orderBy([{ column: 'op.next_attempt_at' }, { column: 'op.id' }])
          .forUpdate('op', 'o')
          .skipLocked()
          .first('op.id', 'op.order_id', 'o.status');
        if (!op) return null;
        const order = { status: op.status as OrderStatus };
        if (CANCELLING_STATUSES.includes(order.status)) {
          await trx('operations').where({ id: op.id }).update({ status: 'cancelled', next_attempt_at: null });
          continue;
        }
        const claimExpiresAt = new Date(now.getTime() + this.config.claimMinutes * 60_000);
        const callId = await this.openCall(trx, workspaceId, op.id, order.status, {
          kind: 'human',
          made_by: userId,
          claim_expires_at: claimExpiresAt,
        });
        await trx('orders').where({ id: op.order_id }).update({ status: 'calling' });
        await this.jobs.send(trx, QUEUES.claimExpiry.name, { callId }, { startAfter: claimExpiresAt });
        return this.view(trx, callId);
      }
    });
  }

  /** A member records the outcome of the call they claimed. */
  async recordHumanOutcome(workspaceId: string, userId: string, callId: string, body: unknown): Promise<CallView> {
    const source = bodyFields(body);
    const input = parse(outcomeSchema(this.now), {
      outcome: source.outcome,
      callbackAt: camelOrSnake(source, 'callbackAt', 'callback_at'),
      changes: source.changes,
      notes: source.notes,
      totalAmount: camelOrSnake(source, 'totalAmount', 'total_amount'),
      currency: source.currency,
    });
    if (!isUuid(callId)) throw callNotFound();
    await this.expireClaims(workspaceId);
    return this.knex.transaction(async (trx) => {
      const call = await this.lockCall(trx, callId, workspaceId);
      if (!call) throw callNotFound();
      if (call.kind !== 'human' || call.ended_at || call.dropped_at || call.made_by !== userId) {
        throw new ConflictError(msg('CALL_NOT_OPEN'), 'CALL_NOT_OPEN');
      }
      if (input.totalAmount) await this.settleAmount(trx, call.order_id, input.totalAmount, input.currency ?? null);
      await this.finish(
        trx,
        call,
        {
          outcome: input.outcome,
          callbackAt: input.callbackAt ? new Date(input.callbackAt) : null,
          changes: input.changes ?? null,
          summary: input.notes ?? null,
        },
        'member',
      );
      return this.view(trx, callId);
    });
  }

  /** The amount the caller settled with the customer, on the order (locked with the call), in its currency. */
  private async settleAmount(trx: Knex.Transaction, orderId: string, amount: string, currency: string | null): Promise<void> {
    const order = await trx('orders').where({ id: orderId }).first('currency');
    const settled = currency ?? order?.currency ?? DEFAULT_CURRENCY;
    checkDecimals(amount, settled);
    await trx('orders')
      .where({ id: orderId })
      .andWhere((q) => q.whereRaw('total_amount IS DISTINCT FROM ?::numeric', [amount]).orWhereRaw('currency IS DISTINCT FROM ?', [settled]))
      .update({ total_amount: amount, currency: settled });
  }

  /** Human claims past their deadline are dropped: the operation is due again, the order as before. */
  async expireClaims(workspaceId?: string, callId?: string): Promise<number> {
    return this.knex.transaction((trx) =>
      this.dropClaims(trx, (q) => {
        q.where('c.claim_expires_at', '<=', this.now());
        if (workspaceId) q.where({ 'c.workspace_id': workspaceId });
        if (callId) q.where({ 'c.id': callId });
      }),
    );
  }

  /** A member leaves the workspace: their open claims are dropped at once, in the caller's transaction. */
  async releaseClaimsOf(trx: Knex.Transaction, workspaceId: string, userId: string): Promise<number> {
    return this.dropClaims(trx, (q) => q.where({ 'c.workspace_id': workspaceId, 'c.made_by': userId }));
  }

  /** Drops open human claims (`which` filters calls `c`); a claim whose rows another transaction holds is left for later. */
  private async dropClaims(trx: Knex.Transaction, which: (query: Knex.QueryBuilder) => void): Promise<number> {
    // Order, operation and call in one statement that never waits (SKIP LOCKED).
    const stale = await trx('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .join('orders as o', 'o.id', 'op.order_id')
      .where({ 'c.kind': 'human' })
      .whereNull('c.ended_at')
      .whereNull('c.dropped_at')
      .modify(which)
      .forUpdate('o', 'op', 'c')
      .skipLocked()
      .select('c.id', 'c.operation_id', 'c.order_status_before');
    for (const call of stale) {
      await trx('calls').where({ id: call.id }).update({ dropped_at: this.now() });
      const [op] = await trx('operations')
        .where({ id: call.operation_id, status: 'in_progress' })
        // Due again at once, or at the next opening when the hours closed meanwhile.
        .update({ status: 'pending', next_attempt_at: trx.raw('call_due_at(workspace_id, ?)', [this.now()]) })
        .returning('order_id');
      if (op) await trx('orders').where({ id: op.order_id, status: 'calling' }).update({ status: call.order_status_before });
    }
    return stale.length;
  }

  // ---- voice agents -----------------------------------------------------------------------

  /** The worker's step for one operation (see dispatchMany). */
  async dispatch(operationId: string): Promise<DispatchResult> {
    return (await this.dispatchMany([operationId]))[operationId] ?? 'not-due';
  }

  /**
   * The worker's step for operations that may be due, a batch at a time: cancel those whose order
   * has a final status, wait (hours closed: a job at the next opening; no credits: the sweep tries
   * again), or — for voice agents — open the calls and queue their call.requested, all in one
   * transaction. Dispatches of one workspace take turns on its row, so two workers never both
   * spend the last credit.
   */
  async dispatchMany(operationIds: string[]): Promise<Record<string, DispatchResult>> {
    const now = this.now();
    const results: Record<string, DispatchResult> = {};
    if (operationIds.length === 0) return results;
    await this.knex.transaction(async (trx) => {
      const ids = [...new Set(operationIds)];
      await lockOrdersOfNonHumanOperations(trx, ids);
      const pending = () =>
        trx('operations as op')
          .join('agents as a', 'a.id', 'op.agent_id')
          .whereIn('op.id', ids)
          .where('op.status', 'pending')
          .orderBy('op.id')
          .select('op.id', 'op.order_id', 'op.workspace_id', 'op.next_attempt_at', 'a.kind');
      // A human operation is only looked at, never locked: the queue's claim must find it free.
      const ops = [...(await pending().whereNot('a.kind', 'human').forUpdate('op')), ...(await pending().where('a.kind', 'human'))];
      if (ops.length === 0) return;
      const orders = new Map<string, string>(
        (
          await trx('orders')
            .whereIn(
              'id',
              ops.map((op) => op.order_id),
            )
            .select('id', 'status')
        ).map((o) => [o.id, o.status]),
      );
      const later: Array<{ data: JobData['operation-due']; startAfter: Date; singletonKey: string }> = [];
      const cancelled: string[] = [];
      const cancelledHuman: string[] = [];
      const byWorkspace = new Map<string, typeof ops>();
      for (const op of ops) {
        if (op.next_attempt_at > now) {
          later.push({ data: { operationId: op.id }, startAfter: op.next_attempt_at, singletonKey: op.id });
          results[op.id] = 'not-due';
        } else if (CANCELLING_STATUSES.includes(orders.get(op.order_id) as OrderStatus)) {
          (op.kind === 'human' ? cancelledHuman : cancelled).push(op.id);
          results[op.id] = 'cancelled';
        } else if (op.kind === 'human') {
          results[op.id] = 'human';
        } else {
          byWorkspace.set(op.workspace_id, [...(byWorkspace.get(op.workspace_id) ?? []), op]);
        }
      }
      if (cancelled.length > 0) await trx('operations').whereIn('id', cancelled).update({ status: 'cancelled', next_attempt_at: null });
      // One a member holds is theirs to settle (the claim cancels it too when its order is final).
      if (cancelledHuman.length > 0) {
        await trx.raw(
          `UPDATE operations SET status = 'cancelled', next_attempt_at = NULL
            WHERE id IN (SELECT id FROM operations WHERE id = ANY(?::uuid[]) AND status = 'pending' FOR UPDATE SKIP LOCKED)`,
          [cancelledHuman],
        );
      }

      const requests = { voice: [] as Array<{ data: JobData['call-request'] }>, whatsapp: [] as Array<{ data: JobData['whatsapp-send'] }> };
      for (const [workspaceId, due] of byWorkspace) {
        const settings = await this.settings.get(workspaceId, trx);
        if (!isOpen(settings, now)) {
          const opening = nextOpening(settings, now);
          for (const op of due) {
            later.push({ data: { operationId: op.id }, startAfter: opening, singletonKey: op.id });
            results[op.id] = 'waiting';
          }
          continue;
        }
        const workspace = await trx('workspaces').where({ id: workspaceId }).forNoKeyUpdate().first('owner_id');
        const capacity = await this.messagesWeCanPay(trx, workspaceId, workspace.owner_id);
        due.sort((x, y) => x.next_attempt_at - y.next_attempt_at);
        const going: typeof due = [];
        for (const op of due) {
          const kind = op.kind as keyof typeof capacity;
          if (capacity[kind] > 0) {
            capacity[kind] -= 1;
            going.push(op);
          } else results[op.id] = 'waiting';
        }
        if (going.length === 0) continue;
        const counts = new Map<string, number>(
          (
            await trx('calls')
              .whereIn(
                'operation_id',
                going.map((op) => op.id),
              )
              .whereNull('dropped_at')
              .groupBy('operation_id')
              .select('operation_id', trx.raw('count(*)::int AS n'))
          ).map((r) => [r.operation_id, r.n]),
        );
        const calls = await trx('calls')
          .insert(
            going.map((op) => ({
              workspace_id: workspaceId,
              operation_id: op.id,
              kind: op.kind,
              attempt: (counts.get(op.id) ?? 0) + 1,
              started_at: now,
              order_status_before: orders.get(op.order_id),
              request_id: newMessageId(),
            })),
          )
          .returning(['id', 'operation_id']);
        const callOf = new Map<string, string>(calls.map((c: { id: string; operation_id: string }) => [c.operation_id, c.id]));
        await trx('operations')
          .whereIn(
            'id',
            going.map((op) => op.id),
          )
          .update({ status: 'in_progress', next_attempt_at: null });
        await trx('orders')
          .whereIn(
            'id',
            going.map((op) => op.order_id),
          )
          .update({ status: 'processing' });
        for (const op of going) {
          results[op.id] = 'dispatched';
          requests[op.kind as keyof typeof requests].push({ data: { callId: callOf.get(op.id)!, try: 1 } });
        }
      }
      await this.jobs.sendMany(trx, QUEUES.operationDue.name, later);
      await this.jobs.sendMany(trx, SEND_QUEUE.voice, requests.voice);
      await this.jobs.sendMany(trx, SEND_QUEUE.whatsapp, requests.whatsapp);
    });
    return results;
  }

  /** How many more voice calls the balance pays for: credits − cost × open voice calls, in calls. */
  private async callsWeCanPay(trx: Knex.Transaction, workspaceId: string, ownerId: string): Promise<number> {
    return (await this.messagesWeCanPay(trx, workspaceId, ownerId)).voice;
  }

  /**
   * How many more voice calls, or else WhatsApp messages, the balance pays for: credits less what
   * the open ones will cost, divided by the price of one (unlimited when it is free).
   */
  private async messagesWeCanPay(trx: Knex.Transaction, workspaceId: string, ownerId: string): Promise<{ voice: number; whatsapp: number }> {
    const { cost, whatsappCost } = this.config;
    if (cost === 0 && whatsappCost === 0) return { voice: Number.MAX_SAFE_INTEGER, whatsapp: Number.MAX_SAFE_INTEGER };
    const { rows } = await trx.raw(
      `SELECT
         (SELECT coalesce(sum(CASE WHEN kind = 'grant' THEN amount ELSE -amount END), 0) FROM credit_ledger WHERE user_id = ?) AS credits,
         (SELECT count(*) FROM calls WHERE workspace_id = ? AND kind = 'voice' AND ended_at IS NULL AND dropped_at IS NULL) AS open_calls,
         (SELECT count(*) FROM calls WHERE workspace_id = ? AND kind = 'whatsapp' AND ended_at IS NULL AND dropped_at IS NULL) AS open_messages`,
      [ownerId, workspaceId, workspaceId],
    );
    const left = Number(rows[0].credits) - cost * Number(rows[0].open_calls) - whatsappCost * Number(rows[0].open_messages);
    const fits = (price: number) => (price === 0 ? Number.MAX_SAFE_INTEGER : Math.max(0, Math.floor(left / price)));
    return { voice: fits(cost), whatsapp: fits(whatsappCost) };
  }

  /** Whether the workspace's voice calls are paused for lack of credits (the dashboard's banner). */
  async pausedForCredits(workspaceId: string, ownerId: string): Promise<boolean> {
    const voice = await this.knex('agents').where({ workspace_id: workspaceId, kind: 'voice' }).first('id');
    if (!voice) return false;
    return this.knex.transaction(async (trx) => (await this.callsWeCanPay(trx, workspaceId, ownerId)) === 0);
  }

  /** What a call.requested needs, for each call still open and not yet accepted: the call, its agent and its order. */
  async requestContexts(callIds: string[]) {
    const rows = await this.knex('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .join('agents as a', 'a.id', 'op.agent_id')
      .join('orders as o', 'o.id', 'op.order_id')
      .join('workspaces as w', 'w.id', 'c.workspace_id')
      .whereIn('c.id', callIds)
      .where('c.kind', 'voice')
      .whereNull('c.ended_at')
      .whereNull('c.accepted_at')
      .select(
        'c.id',
        'c.attempt',
        'c.request_id',
        'c.operation_id',
        'a.endpoint_url',
        'a.secret',
        'o.id as order_id',
        'o.client_name',
        'o.phone',
        'o.store_name',
        'o.products_name',
        'o.address',
        'o.city',
        'o.note',
        'o.status',
        'o.created_at',
        'o.placed_at',
        'o.external_ref',
        'o.total_amount',
        'o.currency',
        'w.id as workspace_id',
        'w.name as workspace_name',
      );
    return rows;
  }

  get resultTimeoutMinutes(): number {
    return this.config.resultTimeoutMinutes;
  }

  /** Queues another try of a call.requested (the same message id) in `delaySeconds`. */
  async retryRequest(callId: string, attempt: number, delaySeconds: number): Promise<void> {
    await this.jobs.send(this.knex, QUEUES.callRequest.name, { callId, try: attempt }, { startAfter: delaySeconds });
  }

  /** The agents accepted these calls: their results are due within the time-out. */
  async accepted(callIds: string[]): Promise<void> {
    if (callIds.length === 0) return;
    await this.knex.transaction(async (trx) => {
      // One reading of the clock: the time-out is exactly resultTimeoutMinutes after acceptance.
      const acceptedAt = this.now();
      const due = new Date(acceptedAt.getTime() + this.config.resultTimeoutMinutes * 60_000);
      const updated = await trx('calls')
        .whereIn('id', callIds)
        .whereNull('ended_at')
        .whereNull('accepted_at')
        .update({ accepted_at: acceptedAt, result_due_at: due })
        .returning('id');
      await this.jobs.sendMany(
        trx,
        QUEUES.callTimeout.name,
        updated.map((c: { id: string }) => ({ data: { callId: c.id }, startAfter: due })),
      );
    });
  }

  /**
   * The worker gives up on a call: `failed`, nothing charged. `onlyIf` names the deadline that must
   * have passed: the agent's result (`result`), or its acceptance of the request (`acceptance`).
   */
  async fail(callId: string, summary: Message, onlyIf?: 'result' | 'acceptance'): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const call = await this.lockCall(trx, callId);
      if (!call || call.ended_at || call.dropped_at) return false;
      const now = this.now();
      if (onlyIf === 'result' && !(call.result_due_at && call.result_due_at <= now)) return false;
      if (onlyIf === 'acceptance' && (call.accepted_at || call.started_at.getTime() + ACCEPT_WITHIN_MINUTES * 60_000 > now.getTime())) return false;
      await this.finish(trx, call, { outcome: 'failed', ...systemSummary(summary) }, 'system');
      return true;
    });
  }

  /**
   * Ends an open call of any kind with `details`, as `endedBy`, when `onlyIf` (given the locked
   * call) allows it and `firstTime` (in the same transaction: recording the event that ends it)
   * says it is new; false when the call is unknown, already ended, or not allowed. The WhatsApp
   * webhook and its reply window end their calls through this.
   */
  async endCall(
    callId: string,
    details: OutcomeDetails,
    endedBy: 'agent' | 'system',
    onlyIf: (call: LockedCall) => boolean = () => true,
    firstTime: (trx: Knex.Transaction) => Promise<boolean> = async () => true,
  ): Promise<boolean> {
    if (!isUuid(callId)) return false;
    return this.knex.transaction(async (trx) => {
      const call = await this.lockCall(trx, callId);
      if (!call || call.ended_at || call.dropped_at || !onlyIf(call)) return false;
      if (!(await firstTime(trx))) return false;
      await this.finish(trx, call, details, endedBy);
      return true;
    });
  }

  /**
   * A report from the voice agent, in one transaction: the call locked (its order first), the report
   * authenticated with the secret of the call's agent (`authenticate` throws for a bad signature or
   * payload before anything is written), its webhook-id recorded, then applied. `already` when this
   * webhook-id was processed for this call before (200, nothing more changes); ConflictError
   * `REPLAYED` when the agent used it for another call; ConflictError `CALL_CLOSED` for a different
   * result of an ended call.
   */
  /** Whether a voice agent's call by this id exists: the only calls whose reports are read (a body is read after this). */
  async takesReports(callId: string): Promise<boolean> {
    if (!isUuid(callId)) return false;
    return (await this.knex('calls').where({ id: callId, kind: 'voice' }).first('id')) !== undefined;
  }

  async agentReport(callId: string, webhookId: string, authenticate: (secret: string) => AgentReport): Promise<'ok' | 'already'> {
    if (!isUuid(callId)) throw callNotFound();
    return this.knex.transaction(async (trx) => {
      const call = await this.lockCall(trx, callId);
      if (call?.kind !== 'voice' || call.agent_kind !== 'voice') throw callNotFound();
      const report = authenticate(call.agent_secret);
      const seen = await this.recordReport(trx, call, webhookId, report.type);
      if (seen === 'replayed') throw new ConflictError(msg('replayed'), 'REPLAYED');
      if (seen === 'already') return 'already';
      if (report.type === 'call.started') {
        if (!call.ended_at && call.op_status === 'in_progress') await trx('orders').where({ id: call.order_id }).update({ status: 'calling' });
        return 'ok';
      }
      if (call.ended_at) {
        if (call.ended_by === 'agent' && call.outcome === report.outcome) return 'ok';
        throw new ConflictError(msg('callClosedReport'), 'CALL_CLOSED');
      }
      await this.finish(trx, call, report, 'agent');
      return 'ok';
    });
  }

  /** Records a report's webhook-id, which belongs to one report of one call of its agent. */
  private async recordReport(trx: Knex.Transaction, call: LockedCall, webhookId: string, type: string): Promise<ReportSeen> {
    const { rows } = await trx.raw(
      `WITH recorded AS (
         INSERT INTO call_reports (agent_id, webhook_id, call_id, type) VALUES (?, ?, ?, ?)
         ON CONFLICT (agent_id, webhook_id) DO NOTHING RETURNING 1
       )
       SELECT (SELECT count(*) FROM recorded)::int AS fresh,
              (SELECT call_id FROM call_reports WHERE agent_id = ? AND webhook_id = ?) AS earlier_call`,
      [call.agent_id, webhookId, call.id, type, call.agent_id, webhookId],
    );
    if (rows[0].fresh) return 'fresh';
    return rows[0].earlier_call === call.id ? 'already' : 'replayed';
  }

  /**
   * The call with what ending it needs (its operation, agent, owner, settings): its order locked
   * first, then the call and its operation (the lock order of services/shared/locks.ts).
   */
  private async lockCall(trx: Knex.Transaction, callId: string, workspaceId?: string): Promise<LockedCall | undefined> {
    if (!(await lockOrderOfCall(trx, callId, workspaceId))) return undefined;
    // Written out once rather than built per call: agents' reports take this path at a high rate.
    const { rows } = await trx.raw(
      `SELECT c.*, op.status AS op_status, op.attempts AS op_attempts, op.order_id, op.agent_id, op.ladder_step, op.workspace_id AS op_workspace_id,
              a.kind AS agent_kind, a.secret AS agent_secret, a.fallback_agent_id,
              w.owner_id, s.max_attempts, s.retry_interval_minutes, s.hours_start, s.hours_end
         FROM calls c
         JOIN operations op ON op.id = c.operation_id
         JOIN agents a ON a.id = op.agent_id
         JOIN workspaces w ON w.id = c.workspace_id
         LEFT JOIN call_settings s ON s.workspace_id = c.workspace_id
        WHERE c.id = ?
        FOR UPDATE OF c, op`,
      [callId],
    );
    return rows[0];
  }

  // ---- the rules of an ended call --------------------------------------

  /**
   * Ends an open call with its outcome, moves the operation and the order, and charges a voice call
   * (anything but `failed`) — all in the caller's transaction. An operation a person cancelled keeps
   * the order as the person left it; the call is still recorded (and charged: it happened).
   */
  private async finish(trx: Knex.Transaction, call: LockedCall, details: OutcomeDetails, endedBy: 'member' | 'agent' | 'system'): Promise<void> {
    const now = this.now();
    const price = call.kind === 'voice' ? this.config.cost : call.kind === 'whatsapp' ? this.config.whatsappCost : 0;
    const charged = details.outcome !== 'failed' ? price : 0;
    // A person's cancellation keeps the order and operation as the person left them.
    const moves = call.op_status !== 'cancelled';
    const settings = settingsFrom(call);
    let attempts = call.op_attempts;
    let next: Date | null = null;
    if (details.outcome === 'postponed') {
      next = nextOpening(settings, details.callbackAt ?? now);
    } else if (!FINAL_OUTCOMES.includes(details.outcome)) {
      attempts += 1;
      if (attempts < settings.max_attempts) next = nextOpening(settings, new Date(now.getTime() + settings.retry_interval_minutes * 60_000));
    }
    // A call's attempt number is the count of the operation's calls that count, itself included.
    if (call.attempt >= MAX_CALLS_PER_OPERATION) next = null;
    // A WhatsApp agent sends one message per operation: silence or a failure ends it at once.
    if (call.kind === 'whatsapp' && details.outcome !== 'postponed') next = null;
    // One statement: the call ended, its charge (never twice: one row per call), the order, the operation.
    await trx.raw(
      `WITH ended AS (
         UPDATE calls SET ended_at = ?, outcome = ?, duration_seconds = ?, summary = ?, summary_code = ?, changes = ?, callback_at = ?, cost = ?, ended_by = ?, reply = ?
          WHERE id = ? RETURNING id
       ), charge AS (
         INSERT INTO credit_ledger (user_id, kind, amount, call_id, note)
         SELECT ?::uuid, 'spend', ?::numeric, id, ? FROM ended WHERE ?::numeric > 0
         ON CONFLICT (call_id) DO NOTHING RETURNING id
       ), moved AS (
         UPDATE orders SET status = ? WHERE id = ? AND ?::boolean RETURNING id
       )
       UPDATE operations SET attempts = ?, status = ?, next_attempt_at = ? WHERE id = ? AND ?::boolean`,
      [
        now,
        details.outcome,
        details.durationSeconds ?? null,
        details.summary ?? null,
        details.summaryCode ? JSON.stringify(details.summaryCode) : null,
        details.changes ?? null,
        details.callbackAt ?? null,
        charged,
        endedBy,
        details.reply ?? null,
        call.id,
        call.owner_id,
        charged,
        `Call ${call.id}`,
        charged,
        details.outcome,
        call.order_id,
        moves,
        attempts,
        next ? 'pending' : 'completed',
        next,
        call.operation_id,
        moves,
      ],
    );
    if (moves && next)
      await this.jobs.send(trx, QUEUES.operationDue.name, { operationId: call.operation_id }, { startAfter: next, singletonKey: call.operation_id });
    if (moves && !next && UNANSWERED.includes(details.outcome)) await this.climbLadder(trx, call, settings, now);
  }

  /**
   * The operation ended without an answer: when its agent names a fallback and the ladder has room,
   * the fallback's operation is created here, in the transaction of the outcome, due at once (or at
   * the next opening of the calling hours), and the order is `pending` until that step starts.
   */
  private async climbLadder(trx: Knex.Transaction, call: LockedCall, settings: ReturnType<typeof settingsFrom>, now: Date): Promise<void> {
    if (!call.fallback_agent_id || call.ladder_step >= MAX_LADDER_AGENTS) return;
    const due = nextOpening(settings, now);
    const [operation] = await trx('operations')
      .insert({
        workspace_id: call.op_workspace_id,
        order_id: call.order_id,
        agent_id: call.fallback_agent_id,
        direction: 'outbound',
        status: 'pending',
        next_attempt_at: due,
        ladder_step: call.ladder_step + 1,
      })
      .returning('id');
    await trx('orders').where({ id: call.order_id }).update({ status: 'pending' });
    await this.jobs.send(trx, QUEUES.operationDue.name, { operationId: operation.id }, { startAfter: due, singletonKey: operation.id });
  }

  private async openCall(
    trx: Knex.Transaction,
    workspaceId: string,
    operationId: string,
    orderStatus: string,
    fields: Record<string, unknown>,
  ): Promise<string> {
    const [{ n }] = await trx('calls').where({ operation_id: operationId }).whereNull('dropped_at').count({ n: '*' });
    const [call] = await trx('calls')
      .insert({
        workspace_id: workspaceId,
        operation_id: operationId,
        attempt: Number(n) + 1,
        started_at: this.now(),
        order_status_before: orderStatus,
        ...fields,
      })
      .returning('id');
    await trx('operations').where({ id: operationId }).update({ status: 'in_progress', next_attempt_at: null });
    return call.id;
  }

  private async view(trx: Knex.Transaction, callId: string): Promise<CallView> {
    const call = await trx('calls')
      .where({ id: callId })
      .first([...CALL_FIELDS, 'operation_id']);
    const operation = await operationWithCalls(trx, call.operation_id);
    const order = await trx('orders').where({ id: operation.order_id }).first();
    return { call: toCall(call), operation, order: toOrder({ ...order, operation_id: operation.id }) };
  }
}

function callNotFound(): NotFoundError {
  return new NotFoundError(msg('callNotFound'));
}
