/**
 * The worker's dispatch of due operations, in the caller's transaction: an operation whose order
 * is final is cancelled, one that must wait gets a job at its time, and for voice and WhatsApp
 * agents the calls the credits pay for are opened and their sending queued.
 */
import type { Knex } from 'knex';
import type { JobData, Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import { newMessageId } from '../../integrations/signing';
import { lockOrdersOfNonHumanOperations } from '../../services/shared';
import type { OrderStatus } from '../orders';
import { CANCELLING_STATUSES, transition } from '../orders';
import { messagesWeCanPay } from './queries';
import type { CallSettingsService } from './settings';
import { isOpen, nextOpening } from './settings';

export type DispatchResult = 'dispatched' | 'cancelled' | 'waiting' | 'not-due' | 'human';

/** The job that carries out an opened call, by the agent's kind. */
const SEND_QUEUE = { voice: QUEUES.callRequest.name, whatsapp: QUEUES.whatsappSend.name } as const;

/** What a dispatch uses: the calling hours, the job engine, and the prices that bound what the credits pay for. */
interface DispatchDeps {
  settings: CallSettingsService;
  jobs: Jobs;
  prices: { cost: number; whatsappCost: number };
}

/**
 * One step of CallService.dispatchMany for `operationIds` (not empty), as of `now`: what became of each
 * operation. The operations' orders are locked first (services/shared/locks.ts); dispatches of one
 * workspace take turns on its row, so two workers never both spend the last credit.
 */
export async function dispatchDue(trx: Knex.Transaction, operationIds: string[], now: Date, deps: DispatchDeps): Promise<Record<string, DispatchResult>> {
  const results: Record<string, DispatchResult> = {};
  const ids = [...new Set(operationIds)];
  await lockOrdersOfNonHumanOperations(trx, ids);
  const pending = () =>
    trx('operations as op')
      .join('agents as a', 'a.id', 'op.agent_id')
      .whereIn('op.id', ids)
      .where('op.status', 'pending')
      .orderBy('op.id')
      .select('op.id', 'op.order_id', 'op.workspace_id', 'op.next_attempt_at', 'a.kind', 'op.purpose');
  // A human operation is only looked at, never locked: the queue's claim must find it free.
  const ops = [...(await pending().whereNot('a.kind', 'human').forUpdate('op')), ...(await pending().where('a.kind', 'human'))];
  if (ops.length === 0) return results;
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
    } else if (op.purpose !== 'follow_up' && CANCELLING_STATUSES.includes(orders.get(op.order_id) as OrderStatus)) {
      // A follow-up is about a confirmed order's parcel: the order's status does not end it.
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
    const settings = await deps.settings.get(workspaceId, trx);
    if (!isOpen(settings, now)) {
      const opening = nextOpening(settings, now);
      for (const op of due) {
        later.push({ data: { operationId: op.id }, startAfter: opening, singletonKey: op.id });
        results[op.id] = 'waiting';
      }
      continue;
    }
    const workspace = await trx('workspaces').where({ id: workspaceId }).forNoKeyUpdate().first('owner_id');
    const capacity = await messagesWeCanPay(trx, workspaceId, workspace.owner_id, deps.prices);
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
    await transition(
      trx,
      workspaceId,
      going.map((op) => op.order_id),
      'processing',
      'dispatched',
    );
    for (const op of going) {
      results[op.id] = 'dispatched';
      requests[op.kind as keyof typeof requests].push({ data: { callId: callOf.get(op.id)!, try: 1 } });
    }
  }
  await deps.jobs.sendMany(trx, QUEUES.operationDue.name, later);
  await deps.jobs.sendMany(trx, SEND_QUEUE.voice, requests.voice);
  await deps.jobs.sendMany(trx, SEND_QUEUE.whatsapp, requests.whatsapp);
  return results;
}
