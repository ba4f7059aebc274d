import type { Knex } from 'knex';
import { z } from 'zod';
import type { Jobs } from '../db/jobs';
import { newMessageId } from '../integrations/signing';
import { CallSettingsService, isOpen, nextOpening } from './call-settings';
import { ConflictError, NotFoundError } from './errors';
import { CANCELLING_STATUSES, Call, CALL_FIELDS, Operation, operationWithCalls, Outcome, OUTCOMES, toCall } from './operations';
import { Order, OrderStatus, toOrder } from './orders';
import { bodyFields, camelOrSnake, isUuid, parse } from './validation';

/** An operation ends after this many calls in all, whatever their outcomes (spec §6). */
export const MAX_CALLS_PER_OPERATION = 10;
const FINAL_OUTCOMES: readonly Outcome[] = ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized'];

export interface CallConfig {
  cost: number;
  claimMinutes: number;
  resultTimeoutMinutes: number;
}

export interface OutcomeDetails {
  outcome: Outcome;
  callbackAt?: Date | null;
  changes?: string | null;
  summary?: string | null;
  durationSeconds?: number | null;
}

export interface CallView {
  call: Call;
  operation: Operation;
  order: Order;
}

const text = (field: string) => z.string({ error: `${field} must be text` }).max(2000, `${field} must be at most 2,000 characters`).nullable().optional();

/** What an outcome report carries, from a member (camelCase or snake_case) or a voice agent. */
export function outcomeSchema(now: () => Date) {
  return z
    .object({
      outcome: z.enum(OUTCOMES, { error: `outcome must be one of: ${OUTCOMES.join(', ')}` }),
      callbackAt: z.iso.datetime({ offset: true, error: 'callbackAt must be an ISO 8601 date-time' }).nullable().optional(),
      changes: text('changes'),
      notes: text('notes'),
    })
    .superRefine((value, ctx) => {
      if (value.outcome !== 'postponed') return;
      if (!value.callbackAt) {
        ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: 'callbackAt is required for postponed' });
        return;
      }
      const at = new Date(value.callbackAt).getTime();
      const current = now().getTime();
      if (at <= current) ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: 'callbackAt must be in the future' });
      else if (at > current + 30 * 86_400_000) ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: 'callbackAt must be at most 30 days ahead' });
    });
}

/**
 * The confirmation loop's rules, whoever drives them: a member working the queue, a voice agent's
 * report, or the worker (dispatch, time-outs, expired claims). Every change happens in one
 * transaction with the rows it depends on locked, so concurrent workers and requests agree.
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

  /** How many human calls are due now in the workspace. */
  async dueCount(workspaceId: string): Promise<number> {
    const row = await this.knex('operations as op')
      .join('agents as a', 'a.id', 'op.agent_id')
      .where({ 'op.workspace_id': workspaceId, 'op.status': 'pending', 'a.kind': 'human' })
      .where('op.next_attempt_at', '<=', this.now())
      .first(this.knex.raw('count(*)::int AS n'));
    return row.n;
  }

  /** Claims the oldest due human call of the workspace for `userId`; null when nothing is due or the hours are closed. */
  async claimNext(workspaceId: string, userId: string): Promise<CallView | null> {
    await this.expireClaims(workspaceId);
    const now = this.now();
    return this.knex.transaction(async (trx) => {
      const settings = await this.settings.get(workspaceId, trx);
      if (!isOpen(settings, now)) return null;
      for (;;) {
        const op = await trx('operations as op')
          .join('agents as a', 'a.id', 'op.agent_id')
          .where({ 'op.workspace_id': workspaceId, 'op.status': 'pending', 'a.kind': 'human' })
          .where('op.next_attempt_at', '<=', now)
          .orderBy([{ column: 'op.next_attempt_at' }, { column: 'op.id' }])
          .forUpdate('op')
          .skipLocked()
          .first('op.id', 'op.order_id');
        if (!op) return null;
        const order = await trx('orders').where({ id: op.order_id }).forUpdate().first('status');
        if (CANCELLING_STATUSES.includes(order.status)) {
          await trx('operations').where({ id: op.id }).update({ status: 'cancelled', next_attempt_at: null });
          continue;
        }
        const claimExpiresAt = new Date(now.getTime() + this.config.claimMinutes * 60_000);
        const callId = await this.openCall(trx, workspaceId, op.id, order.status, {
          kind: 'human', made_by: userId, claim_expires_at: claimExpiresAt,
        });
        await trx('orders').where({ id: op.order_id }).update({ status: 'calling' });
        await this.jobs.send(trx, 'claim-expiry', { callId }, { startAfter: claimExpiresAt });
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
    });
    if (!isUuid(callId)) throw callNotFound();
    await this.expireClaims(workspaceId);
    return this.knex.transaction(async (trx) => {
      const call = await trx('calls').where({ id: callId, workspace_id: workspaceId }).forUpdate().first();
      if (!call) throw callNotFound();
      if (call.kind !== 'human' || call.ended_at || call.dropped_at || call.made_by !== userId) {
        throw new ConflictError('This call is no longer open for you: it has ended, its claim expired, or another member has it', 'CALL_NOT_OPEN');
      }
      await this.finish(trx, call, {
        outcome: input.outcome,
        callbackAt: input.callbackAt ? new Date(input.callbackAt) : null,
        changes: input.changes ?? null,
        summary: input.notes ?? null,
      }, 'member');
      return this.view(trx, callId);
    });
  }

  /** Human claims past their deadline are dropped: the operation is due again, the order as before. */
  async expireClaims(workspaceId?: string, callId?: string): Promise<number> {
    return this.knex.transaction(async (trx) => {
      const stale = await trx('calls')
        .where({ kind: 'human' })
        .whereNull('ended_at')
        .whereNull('dropped_at')
        .where('claim_expires_at', '<=', this.now())
        .modify((q) => {
          if (workspaceId) q.where({ workspace_id: workspaceId });
          if (callId) q.where({ id: callId });
        })
        .forUpdate()
        .skipLocked()
        .select('id', 'operation_id', 'order_status_before');
      for (const call of stale) {
        await trx('calls').where({ id: call.id }).update({ dropped_at: this.now() });
        const [op] = await trx('operations')
          .where({ id: call.operation_id, status: 'in_progress' })
          .update({ status: 'pending', next_attempt_at: this.now() })
          .returning('order_id');
        if (op) await trx('orders').where({ id: op.order_id, status: 'calling' }).update({ status: call.order_status_before });
      }
      return stale.length;
    });
  }

  // ---- voice agents -----------------------------------------------------------------------

  /**
   * The worker's step for an operation that may be due: cancel it (the order has a final status),
   * wait (hours closed: a job at the next opening; no credits: the sweep tries again), or — for a
   * voice agent — open the call and queue its call.requested, all in one transaction.
   */
  async dispatch(operationId: string): Promise<'dispatched' | 'cancelled' | 'waiting' | 'not-due' | 'human'> {
    const now = this.now();
    return this.knex.transaction(async (trx) => {
      const op = await trx('operations as op')
        .join('agents as a', 'a.id', 'op.agent_id')
        .where({ 'op.id': operationId, 'op.status': 'pending' })
        .forUpdate('op')
        .first('op.id', 'op.order_id', 'op.workspace_id', 'op.next_attempt_at', 'a.kind');
      if (!op) return 'not-due';
      if (op.next_attempt_at > now) {
        await this.jobs.send(trx, 'operation-due', { operationId }, { startAfter: op.next_attempt_at, singletonKey: operationId });
        return 'not-due';
      }
      const order = await trx('orders').where({ id: op.order_id }).forUpdate().first('status');
      if (CANCELLING_STATUSES.includes(order.status)) {
        await trx('operations').where({ id: op.id }).update({ status: 'cancelled', next_attempt_at: null });
        return 'cancelled';
      }
      if (op.kind !== 'voice') return 'human';
      const settings = await this.settings.get(op.workspace_id, trx);
      if (!isOpen(settings, now)) {
        await this.jobs.send(trx, 'operation-due', { operationId }, { startAfter: nextOpening(settings, now), singletonKey: operationId });
        return 'waiting';
      }
      // Dispatches of one workspace take turns here, so two workers never both spend the last credit.
      const workspace = await trx('workspaces').where({ id: op.workspace_id }).forNoKeyUpdate().first('owner_id');
      if (!(await this.canPayAnotherCall(trx, op.workspace_id, workspace.owner_id))) return 'waiting';
      const callId = await this.openCall(trx, op.workspace_id, op.id, order.status, { kind: 'voice', request_id: newMessageId() });
      await trx('orders').where({ id: op.order_id }).update({ status: 'processing' });
      await this.jobs.send(trx, 'call-request', { callId, try: 1 });
      return 'dispatched';
    });
  }

  /** credits − cost × open voice calls ≥ cost (spec §9). */
  private async canPayAnotherCall(trx: Knex.Transaction, workspaceId: string, ownerId: string): Promise<boolean> {
    if (this.config.cost === 0) return true;
    const { rows } = await trx.raw(
      `SELECT
         (SELECT coalesce(sum(CASE WHEN kind = 'grant' THEN amount ELSE -amount END), 0) FROM credit_ledger WHERE user_id = ?) AS credits,
         (SELECT count(*) FROM calls WHERE workspace_id = ? AND kind = 'voice' AND ended_at IS NULL AND dropped_at IS NULL) AS open_calls`,
      [ownerId, workspaceId],
    );
    return Number(rows[0].credits) - this.config.cost * Number(rows[0].open_calls) >= this.config.cost;
  }

  /** Whether the workspace's voice calls are paused for lack of credits (the dashboard's banner). */
  async pausedForCredits(workspaceId: string, ownerId: string): Promise<boolean> {
    const voice = await this.knex('agents').where({ workspace_id: workspaceId, kind: 'voice' }).first('id');
    if (!voice) return false;
    return this.knex.transaction(async (trx) => !(await this.canPayAnotherCall(trx, workspaceId, ownerId)));
  }

  /** What a call.requested needs: the open, not yet accepted call, its agent and its order. */
  async requestContext(callId: string) {
    const row = await this.knex('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .join('agents as a', 'a.id', 'op.agent_id')
      .join('orders as o', 'o.id', 'op.order_id')
      .join('workspaces as w', 'w.id', 'c.workspace_id')
      .where({ 'c.id': callId, 'c.kind': 'voice' })
      .whereNull('c.ended_at')
      .whereNull('c.accepted_at')
      .first(
        'c.id', 'c.attempt', 'c.request_id', 'c.operation_id', 'a.endpoint_url', 'a.secret',
        'o.id as order_id', 'o.client_name', 'o.phone', 'o.store_name', 'o.products_name', 'o.address', 'o.status', 'o.created_at',
        'w.id as workspace_id', 'w.name as workspace_name',
      );
    return row ?? null;
  }

  get resultTimeoutMinutes(): number {
    return this.config.resultTimeoutMinutes;
  }

  /** Queues another try of a call.requested (the same message id) in `delaySeconds`. */
  async retryRequest(callId: string, attempt: number, delaySeconds: number): Promise<void> {
    await this.jobs.send(this.knex, 'call-request', { callId, try: attempt }, { startAfter: delaySeconds });
  }

  /** The agent accepted the call: its result is due within the time-out. */
  async accepted(callId: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const due = new Date(this.now().getTime() + this.config.resultTimeoutMinutes * 60_000);
      const updated = await trx('calls').where({ id: callId }).whereNull('ended_at').whereNull('accepted_at').update({ accepted_at: this.now(), result_due_at: due });
      if (updated) await this.jobs.send(trx, 'call-timeout', { callId }, { startAfter: due });
    });
  }

  /** The worker gives up on a call (agent unreachable, no result): `failed`, nothing charged. */
  async fail(callId: string, summary: string, onlyIfOverdue = false): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const call = await trx('calls').where({ id: callId }).whereNull('ended_at').whereNull('dropped_at').forUpdate().first();
      if (!call) return false;
      if (onlyIfOverdue && !(call.result_due_at && call.result_due_at <= this.now())) return false;
      await this.finish(trx, call, { outcome: 'failed', summary }, 'system');
      return true;
    });
  }

  /** The secret that signs a voice call's reports, or null when there is no such voice call. */
  async reportSecret(callId: string): Promise<string | null> {
    if (!isUuid(callId)) return null;
    const row = await this.knex('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .join('agents as a', 'a.id', 'op.agent_id')
      .where({ 'c.id': callId, 'c.kind': 'voice', 'a.kind': 'voice' })
      .first('a.secret');
    return row?.secret ?? null;
  }

  /**
   * A signed report from the agent. `already` when this webhook-id was processed before (200,
   * nothing more changes); throws ConflictError('call_closed') for a different result of an ended call.
   */
  async agentReport(callId: string, webhookId: string, report: { type: 'call.started' } | ({ type: 'call.ended' } & OutcomeDetails)): Promise<'ok' | 'already'> {
    return this.knex.transaction(async (trx) => {
      const call = await trx('calls').where({ id: callId }).forUpdate().first();
      if (!call) throw callNotFound();
      const [seen] = await trx('call_reports').insert({ call_id: callId, webhook_id: webhookId, type: report.type }).onConflict(['call_id', 'webhook_id']).ignore().returning('webhook_id');
      if (!seen) return 'already';
      if (report.type === 'call.started') {
        if (!call.ended_at) {
          const op = await trx('operations').where({ id: call.operation_id }).first('status', 'order_id');
          if (op.status === 'in_progress') await trx('orders').where({ id: op.order_id }).update({ status: 'calling' });
        }
        return 'ok';
      }
      if (call.ended_at) {
        const same = call.ended_by === 'agent' && call.outcome === report.outcome;
        if (same) return 'ok';
        throw new ConflictError('call_closed', 'CALL_CLOSED');
      }
      await this.finish(trx, call, report, 'agent');
      return 'ok';
    });
  }

  // ---- the rules of an ended call (spec §6, §7, §9) --------------------------------------

  /**
   * Ends an open call with its outcome, moves the operation and the order, and charges a voice call
   * (anything but `failed`) — all in the caller's transaction. An operation a person cancelled keeps
   * the order as the person left it; the call is still recorded (and charged: it happened).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private async finish(trx: Knex.Transaction, call: any, details: OutcomeDetails, endedBy: 'member' | 'agent' | 'system'): Promise<void> {
    const now = this.now();
    const charged = call.kind === 'voice' && details.outcome !== 'failed' ? this.config.cost : 0;
    await trx('calls').where({ id: call.id }).update({
      ended_at: now,
      outcome: details.outcome,
      duration_seconds: details.durationSeconds ?? null,
      summary: details.summary ?? null,
      changes: details.changes ?? null,
      callback_at: details.callbackAt ?? null,
      cost: charged,
      ended_by: endedBy,
    });
    if (charged > 0) {
      const { owner_id: ownerId } = await trx('workspaces').where({ id: call.workspace_id }).first('owner_id');
      await trx('credit_ledger')
        .insert({ user_id: ownerId, kind: 'spend', amount: charged, call_id: call.id, note: `Call ${call.id}` })
        .onConflict('call_id')
        .ignore();
    }

    const op = await trx('operations').where({ id: call.operation_id }).forUpdate().first();
    if (op.status === 'cancelled') return;
    await trx('orders').where({ id: op.order_id }).update({ status: details.outcome as OrderStatus });

    const settings = await this.settings.get(call.workspace_id, trx);
    const callsMade = Number((await trx('calls').where({ operation_id: op.id }).whereNull('dropped_at').count({ n: '*' }))[0].n);
    let attempts = op.attempts;
    let next: Date | null = null;
    if (details.outcome === 'postponed') {
      next = nextOpening(settings, details.callbackAt ?? now);
    } else if (!FINAL_OUTCOMES.includes(details.outcome)) {
      attempts += 1;
      if (attempts < settings.max_attempts) next = nextOpening(settings, new Date(now.getTime() + settings.retry_interval_minutes * 60_000));
    }
    if (callsMade >= MAX_CALLS_PER_OPERATION) next = null;
    await trx('operations').where({ id: op.id }).update({ attempts, status: next ? 'pending' : 'completed', next_attempt_at: next });
    if (next) await this.jobs.send(trx, 'operation-due', { operationId: op.id }, { startAfter: next, singletonKey: op.id });
  }

  private async openCall(trx: Knex.Transaction, workspaceId: string, operationId: string, orderStatus: string, fields: Record<string, unknown>): Promise<string> {
    const [{ n }] = await trx('calls').where({ operation_id: operationId }).whereNull('dropped_at').count({ n: '*' });
    const [call] = await trx('calls')
      .insert({ workspace_id: workspaceId, operation_id: operationId, attempt: Number(n) + 1, started_at: this.now(), order_status_before: orderStatus, ...fields })
      .returning('id');
    await trx('operations').where({ id: operationId }).update({ status: 'in_progress', next_attempt_at: null });
    return call.id;
  }

  private async view(trx: Knex.Transaction, callId: string): Promise<CallView> {
    const call = await trx('calls').where({ id: callId }).first([...CALL_FIELDS, 'operation_id']);
    const operation = await operationWithCalls(trx, call.operation_id);
    const order = await trx('orders').where({ id: operation.order_id }).first();
    return { call: toCall(call), operation, order: toOrder({ ...order, operation_id: operation.id }) };
  }
}

function callNotFound(): NotFoundError {
  return new NotFoundError('Call not found');
}
