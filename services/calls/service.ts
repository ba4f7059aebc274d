/**
 * The confirmation loop's rules (CallService): the human queue and its claims, the dispatch of due
 * operations to agents, the agents' reports, time-outs, and what an ended call moves.
 */
import type { Knex } from 'knex';
import type { Secrets } from '../../integrations/secrets';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import type { CallSettingsService } from './settings';
import { isOpen, nextOpening, settingsFrom } from './settings';
import { ConflictError, NotFoundError, msg, bodyFields, camelOrSnake, isUuid, parse } from '../../services/shared';
import { MAX_LADDER_AGENTS } from './ladder';
import type { Message } from '../../services/shared';
import type { OrderStatus } from '../orders';
import { CANCELLING_STATUSES, transition } from '../orders';
import type { AgentReport, OutcomeDetails } from './reports';
import { outcomeSchema, systemSummary } from './reports';
import type { DispatchResult } from './dispatch';
import { dispatchDue } from './dispatch';
import type { LockedCall } from './queries';
import { dropClaims, lockCall, messagesWeCanPay, openCall, openClaimOf, recordReport, requestContexts, settleAmount, writeEnding } from './queries';
import type { CallView } from './views';
import { callView } from './views';
import { nextDueOperation, offeredTo } from './claims';
import { endFollowUp, followUpSchema, isFollowUpCall } from './follow-ups';
import { FINAL_OUTCOMES, UNANSWERED_OUTCOMES } from './outcomes';

/** A voice call whose request no agent accepted within this long ends `failed` ("agent unreachable"). */
export const ACCEPT_WITHIN_MINUTES = 25;

/** An operation ends after this many calls in all, whatever their outcomes. */
const MAX_CALLS_PER_OPERATION = 10;

export interface CallConfig {
  cost: number;
  /** Credits per WhatsApp message, charged under the voice call's rule (the shop pays Meta itself: 0 by default). */
  whatsappCost: number;
  claimMinutes: number;
  resultTimeoutMinutes: number;
}

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
    /** Opens the voice agents' signing secrets (sealed at rest). */
    private readonly secrets: Secrets,
    private readonly now: () => Date = () => new Date(),
  ) {}

  // ---- the human queue --------------------------------------------------------------------

  /**
   * The human queue as a member sees it: how many calls can be made now (none while the calling
   * hours are closed), how many wait for a later time, and when the next one can be made (inside
   * the calling hours; null when nothing waits).
   */
  async queue(workspaceId: string, userId?: string): Promise<{ dueNow: number; waiting: number; nextAt: Date | null }> {
    const now = this.now();
    const pending = this.knex('operations as op')
      .join('agents as a', 'a.id', 'op.agent_id')
      .join('orders as o', 'o.id', 'op.order_id')
      .where({ 'op.workspace_id': workspaceId, 'op.status': 'pending', 'a.kind': 'human' });
    // With assignment, "due now" counts what this member may take: not another's reserved order.
    const offered = pending.clone().where('op.next_attempt_at', '<=', now);
    if (userId) await offeredTo(this.knex, offered, workspaceId, userId, now);
    const [settings, row, mine] = await Promise.all([
      this.settings.get(workspaceId),
      pending.first(this.knex.raw('count(*)::int AS waiting'), this.knex.raw('min(op.next_attempt_at) AS first_at')),
      offered.first(this.knex.raw('count(*)::int AS due')),
    ]);
    const open = isOpen(settings, now);
    const dueNow = open ? mine.due : 0;
    const nextAt = row.first_at ? nextOpening(settings, new Date(Math.max(row.first_at.getTime(), now.getTime()))) : null;
    return { dueNow, waiting: row.waiting - dueNow, nextAt };
  }

  /**
   * Claims the oldest due human call of the workspace for `userId`; null when nothing is due or the
   * hours are closed. A member who still holds an open call gets that call back instead of a second
   * one (one open call per member: a second would hold its order "calling" until its claim expired).
   */
  async claimNext(workspaceId: string, userId: string): Promise<CallView | null> {
    await this.expireClaims(workspaceId);
    const now = this.now();
    return this.knex.transaction(async (trx) => {
      const mine = await openClaimOf(trx, workspaceId, userId, now);
      if (mine) return callView(trx, mine);
      const settings = await this.settings.get(workspaceId, trx);
      if (!isOpen(settings, now)) return null;
      for (;;) {
        const op = await nextDueOperation(trx, workspaceId, userId, now);
        if (!op) return null;
        const order = { status: op.status as OrderStatus };
        // A follow-up is about a parcel on its way: its order's status (confirmed, most often) stays.
        const followUp = op.purpose === 'follow_up';
        if (!followUp && CANCELLING_STATUSES.includes(order.status)) {
          await trx('operations').where({ id: op.id }).update({ status: 'cancelled', next_attempt_at: null });
          continue;
        }
        const claimExpiresAt = new Date(now.getTime() + this.config.claimMinutes * 60_000);
        const callId = await openCall(trx, this.now, workspaceId, op.id, order.status, {
          kind: 'human',
          made_by: userId,
          claim_expires_at: claimExpiresAt,
        });
        if (!followUp) await transition(trx, workspaceId, [op.order_id], 'calling', 'call-claimed');
        await this.jobs.send(trx, QUEUES.claimExpiry.name, { callId }, { startAfter: claimExpiresAt });
        return callView(trx, callId);
      }
    });
  }

  /** A member records the outcome of the call they claimed (a follow-up's outcomes are its own: see follow-ups.ts). */
  async recordHumanOutcome(workspaceId: string, userId: string, callId: string, body: unknown, userName = ''): Promise<CallView> {
    const source = bodyFields(body);
    if (isUuid(callId) && (await isFollowUpCall(this.knex, workspaceId, callId))) return this.recordFollowUp(workspaceId, userId, callId, source, userName);
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
      const call = await lockCall(trx, callId, workspaceId);
      if (!call) throw callNotFound();
      if (call.kind !== 'human' || call.ended_at || call.dropped_at || call.made_by !== userId) {
        throw new ConflictError(msg('CALL_NOT_OPEN'), 'CALL_NOT_OPEN');
      }
      if (input.totalAmount) await settleAmount(trx, call.order_id, input.totalAmount, input.currency ?? null);
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
      return callView(trx, callId);
    });
  }

  /** A member ends the follow-up call they claimed (see endFollowUp). */
  private async recordFollowUp(workspaceId: string, userId: string, callId: string, source: Record<string, unknown>, userName: string): Promise<CallView> {
    const input = parse(followUpSchema(this.now), {
      outcome: source.outcome,
      rescheduledFor: camelOrSnake(source, 'rescheduledFor', 'rescheduled_for'),
      notes: source.notes,
    });
    await this.expireClaims(workspaceId);
    return this.knex.transaction(async (trx) => {
      const call = await lockCall(trx, callId, workspaceId);
      if (!call) throw callNotFound();
      if (call.kind !== 'human' || call.ended_at || call.dropped_at || call.made_by !== userId) {
        throw new ConflictError(msg('CALL_NOT_OPEN'), 'CALL_NOT_OPEN');
      }
      await endFollowUp(trx, call, input, userName, this.now());
      return callView(trx, callId);
    });
  }

  /** Human claims past their deadline are dropped: the operation is due again, the order as before. */
  async expireClaims(workspaceId?: string, callId?: string): Promise<number> {
    return this.knex.transaction((trx) =>
      dropClaims(trx, this.now, (q) => {
        q.where('c.claim_expires_at', '<=', this.now());
        if (workspaceId) q.where({ 'c.workspace_id': workspaceId });
        if (callId) q.where({ 'c.id': callId });
      }),
    );
  }

  /** A member leaves the workspace: their open claims are dropped at once, in the caller's transaction. */
  async releaseClaimsOf(trx: Knex.Transaction, workspaceId: string, userId: string): Promise<number> {
    return dropClaims(trx, this.now, (q) => q.where({ 'c.workspace_id': workspaceId, 'c.made_by': userId }));
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
    if (operationIds.length === 0) return {};
    return this.knex.transaction((trx) => dispatchDue(trx, operationIds, now, { settings: this.settings, jobs: this.jobs, prices: this.config }));
  }

  /** How many more voice calls the balance pays for: credits − cost × open voice calls, in calls. */
  private async callsWeCanPay(trx: Knex.Transaction, workspaceId: string, ownerId: string): Promise<number> {
    return (await messagesWeCanPay(trx, workspaceId, ownerId, this.config)).voice;
  }

  /** Whether the workspace's voice calls are paused for lack of credits (the dashboard's banner). */
  async pausedForCredits(workspaceId: string, ownerId: string): Promise<boolean> {
    const voice = await this.knex('agents').where({ workspace_id: workspaceId, kind: 'voice' }).first('id');
    if (!voice) return false;
    return this.knex.transaction(async (trx) => (await this.callsWeCanPay(trx, workspaceId, ownerId)) === 0);
  }

  /** What a call.requested needs, for each call still open and not yet accepted: the call, its agent and its order. */
  async requestContexts(callIds: string[]) {
    return (await requestContexts(this.knex, callIds)).map((ctx) => this.secrets.openFields(ctx, ['secret']));
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
      const call = await lockCall(trx, callId);
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
      const call = await lockCall(trx, callId);
      if (!call || call.ended_at || call.dropped_at || !onlyIf(call)) return false;
      if (!(await firstTime(trx))) return false;
      await this.finish(trx, call, details, endedBy);
      return true;
    });
  }

  /** Whether a voice agent's call by this id exists: the only calls whose reports are read (a body is read after this). */
  async takesReports(callId: string): Promise<boolean> {
    if (!isUuid(callId)) return false;
    return (await this.knex('calls').where({ id: callId, kind: 'voice' }).first('id')) !== undefined;
  }

  /**
   * A report from the voice agent, in one transaction: the call locked (its order first), the report
   * authenticated with the secret of the call's agent (`authenticate` throws for a bad signature or
   * payload before anything is written), its webhook-id recorded, then applied. `already` when this
   * webhook-id was processed for this call before (200, nothing more changes); ConflictError
   * `REPLAYED` when the agent used it for another call; ConflictError `CALL_CLOSED` for a different
   * result of an ended call.
   */
  async agentReport(callId: string, webhookId: string, authenticate: (secret: string) => AgentReport): Promise<'ok' | 'already'> {
    if (!isUuid(callId)) throw callNotFound();
    return this.knex.transaction(async (trx) => {
      const call = await lockCall(trx, callId);
      if (call?.kind !== 'voice' || call.agent_kind !== 'voice') throw callNotFound();
      const report = authenticate(this.secrets.open(call.agent_secret));
      const seen = await recordReport(trx, call, webhookId, report.type);
      if (seen === 'replayed') throw new ConflictError(msg('replayed'), 'REPLAYED');
      if (seen === 'already') return 'already';
      if (report.type === 'call.started') {
        if (!call.ended_at && call.op_status === 'in_progress') await transition(trx, call.op_workspace_id, [call.order_id], 'calling', 'call-started');
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
    await writeEnding(trx, call, details, endedBy, { now, charged, moves, attempts, next });
    if (moves && next)
      await this.jobs.send(trx, QUEUES.operationDue.name, { operationId: call.operation_id }, { startAfter: next, singletonKey: call.operation_id });
    if (moves && !next && UNANSWERED_OUTCOMES.includes(details.outcome)) await this.climbLadder(trx, call, settings, now);
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
    await transition(trx, call.op_workspace_id, [call.order_id], 'pending', 'ladder-climbed');
    await this.jobs.send(trx, QUEUES.operationDue.name, { operationId: operation.id }, { startAfter: due, singletonKey: operation.id });
  }
}

function callNotFound(): NotFoundError {
  return new NotFoundError(msg('callNotFound'));
}
