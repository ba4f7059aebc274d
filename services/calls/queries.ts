/**
 * The loop's SQL, as functions of a transaction: locking a call with what ending it needs, writing
 * an ended call (its charge, order and operation in one statement), opening and dropping calls,
 * recording an agent's report, the credits left, and what a call.requested carries.
 */
import type { Knex } from 'knex';
import { CALL_REQUESTED_COLUMNS } from '../../db/order-fields';
import { lockOrderOfCall } from '../../services/shared';
import type { OrderStatus } from '../orders';
import { checkDecimals, DEFAULT_CURRENCY, transition } from '../orders';
import type { OutcomeDetails } from './reports';

/** A call row with what ending it needs (see lockCall). */
// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
export type LockedCall = Record<string, any>;

/** What became of a voice agent's report, by its webhook-id (see recordReport). */
export type ReportSeen = 'fresh' | 'already' | 'replayed';

/**
 * The call with what ending it needs (its operation, agent, owner, settings): its order locked
 * first, then the call and its operation (the lock order of services/shared/locks.ts).
 */
export async function lockCall(trx: Knex.Transaction, callId: string, workspaceId?: string): Promise<LockedCall | undefined> {
  if (!(await lockOrderOfCall(trx, callId, workspaceId))) return undefined;
  // Written out once rather than built per call: agents' reports take this path at a high rate.
  const { rows } = await trx.raw(
    `SELECT c.*, op.status AS op_status, op.attempts AS op_attempts, op.purpose AS op_purpose, op.order_id, op.agent_id, op.ladder_step, op.workspace_id AS op_workspace_id,
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

/** Records a report's webhook-id, which belongs to one report of one call of its agent. */
export async function recordReport(trx: Knex.Transaction, call: LockedCall, webhookId: string, type: string): Promise<ReportSeen> {
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

/** The amount the caller settled with the customer, on the order (locked with the call), in its currency. */
export async function settleAmount(trx: Knex.Transaction, orderId: string, amount: string, currency: string | null): Promise<void> {
  const order = await trx('orders').where({ id: orderId }).first('currency');
  const settled = currency ?? order?.currency ?? DEFAULT_CURRENCY;
  checkDecimals(amount, settled);
  await trx('orders')
    .where({ id: orderId })
    .andWhere((q) => q.whereRaw('total_amount IS DISTINCT FROM ?::numeric', [amount]).orWhereRaw('currency IS DISTINCT FROM ?', [settled]))
    .update({ total_amount: amount, currency: settled });
}

/**
 * The member's own call still open (claimed, not ended, not dropped, its claim not past), or null.
 * A member holds one open call at a time: their claims are taken one after the other (an advisory
 * lock on the member, released with the transaction), so two "Start next call" pressed at once
 * cannot both open a call. The lock is taken before any row lock and the claim that follows skips
 * locked rows, so it never closes a cycle with the lock order of services/shared/locks.ts.
 */
export async function openClaimOf(trx: Knex.Transaction, workspaceId: string, userId: string, now: Date): Promise<string | null> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`call-claim:${workspaceId}:${userId}`]);
  const row = await trx('calls')
    .where({ workspace_id: workspaceId, made_by: userId, kind: 'human' })
    .whereNull('ended_at')
    .whereNull('dropped_at')
    .where('claim_expires_at', '>', now)
    .orderBy('started_at', 'desc')
    .first('id');
  return row?.id ?? null;
}

/** Drops open human claims (`which` filters calls `c`); a claim whose rows another transaction holds is left for later. */
export async function dropClaims(trx: Knex.Transaction, now: () => Date, which: (query: Knex.QueryBuilder) => void): Promise<number> {
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
    .select('c.id', 'c.workspace_id', 'c.operation_id', 'c.order_status_before');
  for (const call of stale) {
    await trx('calls').where({ id: call.id }).update({ dropped_at: now() });
    const [op] = await trx('operations')
      .where({ id: call.operation_id, status: 'in_progress' })
      // Due again at once, or at the next opening when the hours closed meanwhile.
      .update({ status: 'pending', next_attempt_at: trx.raw('call_due_at(workspace_id, ?)', [now()]) })
      .returning('order_id');
    if (op) await transition(trx, call.workspace_id, [op.order_id], call.order_status_before as OrderStatus, 'claim-dropped');
  }
  return stale.length;
}

/**
 * How many more voice calls, or else WhatsApp messages, the balance pays for: credits less what
 * the open ones will cost, divided by the price of one (unlimited when it is free).
 */
export async function messagesWeCanPay(
  trx: Knex.Transaction,
  workspaceId: string,
  ownerId: string,
  prices: { cost: number; whatsappCost: number },
): Promise<{ voice: number; whatsapp: number }> {
  const { cost, whatsappCost } = prices;
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

/** What a call.requested needs, for each call still open and not yet accepted: the call, its agent and its order. */
export async function requestContexts(knex: Knex, callIds: string[]) {
  const rows = await knex('calls as c')
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
      // The order's columns are the call.requested's (db/order-fields.ts); its id is named apart from the call's.
      ...CALL_REQUESTED_COLUMNS.map((column) => (column === 'id' ? 'o.id as order_id' : `o.${column}`)),
      'w.id as workspace_id',
      'w.name as workspace_name',
    );
  return rows;
}

/** Opens a call of the operation (its attempt: the count of the calls that count, itself included) and marks the operation in progress. */
export async function openCall(
  trx: Knex.Transaction,
  now: () => Date,
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
      started_at: now(),
      order_status_before: orderStatus,
      ...fields,
    })
    .returning('id');
  await trx('operations').where({ id: operationId }).update({ status: 'in_progress', next_attempt_at: null });
  return call.id;
}

/** Writes an ended call in one statement: the call, its charge (never twice: one row per call), the order (its transition, when the call `moves` it), the operation. */
export async function writeEnding(
  trx: Knex.Transaction,
  call: LockedCall,
  details: OutcomeDetails,
  endedBy: 'member' | 'agent' | 'system',
  { now, charged, moves, attempts, next }: { now: Date; charged: number; moves: boolean; attempts: number; next: Date | null },
): Promise<void> {
  await trx.raw(
    `WITH ended AS (
       UPDATE calls SET ended_at = ?, outcome = ?, duration_seconds = ?, summary = ?, summary_code = ?, changes = ?, callback_at = ?, cost = ?, ended_by = ?, reply = ?
        WHERE id = ? RETURNING id
     ), charge AS (
       INSERT INTO credit_ledger (user_id, kind, amount, call_id, note)
       SELECT ?::uuid, 'spend', ?::numeric, id, ? FROM ended WHERE ?::numeric > 0
       ON CONFLICT (call_id) DO NOTHING RETURNING id
     ), moved AS (?)
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
      transition(trx, call.op_workspace_id, moves ? [call.order_id] : [], details.outcome, 'call-ended'),
      attempts,
      next ? 'pending' : 'completed',
      next,
      call.operation_id,
      moves,
    ],
  );
}
