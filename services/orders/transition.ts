import type { Knex } from 'knex';
import { OUTCOMES } from '../calls/outcomes';
import type { OrderStatus } from './status';
import { ORDER_STATUSES } from './status';

/**
 * Every move of an order's status other than a person's edit (OrderService.update): why it moves,
 * the statuses it may move to, and the status it must have for the move (`from`; none: any status).
 * No module outside services/orders/ writes orders.status (test/orders/status-owner.test.ts).
 */
export const STATUS_TRANSITIONS = {
  /** A person queued a new confirmation of the order (OperationService.requeue). */
  requeued: { to: ['pending'] },
  /** The order's store cancelled it (the store intake). */
  'store-cancelled': { to: ['unconfirmed'] },
  /** The worker opened a voice or WhatsApp agent's call for it. */
  dispatched: { to: ['processing'] },
  /** A member claimed its call ("Start next call"). */
  'call-claimed': { to: ['calling'] },
  /** The voice agent says the call started. */
  'call-started': { to: ['calling'] },
  /** Meta took the WhatsApp message: only while the dispatch's `processing` stands (an outcome may have come first). */
  'message-sent': { to: ['calling'], from: ['processing'] },
  /** A member's claim was dropped: the status before the call, unless something moved it since the claim. */
  'claim-dropped': { to: ORDER_STATUSES, from: ['calling'] },
  /** A call ended: its outcome is the order's status. */
  'call-ended': { to: OUTCOMES },
  /** The operation went on to the agent's fallback: pending until that step starts. */
  'ladder-climbed': { to: ['pending'] },
} as const satisfies Record<string, { to: readonly OrderStatus[]; from?: readonly OrderStatus[] }>;

export type StatusCause = keyof typeof STATUS_TRANSITIONS;
type TargetOf<C extends StatusCause> = (typeof STATUS_TRANSITIONS)[C]['to'][number];

/**
 * Moves the workspace's orders `orderIds` (ids, or a subquery selecting them) to `to` for `cause`,
 * those whose status `cause` allows. It runs in the caller's transaction `db` and answers the ids
 * of the orders it moved; being a query, it also goes whole into a statement of the caller's
 * (`WITH moved AS (?)`) where one statement must write the order with other rows.
 */
export function transition<C extends StatusCause>(
  db: Knex | Knex.Transaction,
  workspaceId: string,
  orderIds: readonly string[] | Knex.QueryBuilder,
  to: TargetOf<C>,
  cause: C,
): Knex.QueryBuilder<{ id: string }, Array<{ id: string }>> {
  const rule = STATUS_TRANSITIONS[cause];
  const from: readonly OrderStatus[] | undefined = 'from' in rule ? rule.from : undefined;
  return db('orders')
    .where({ workspace_id: workspaceId })
    .whereIn('id', orderIds as string[] | Knex.QueryBuilder)
    .modify((query) => {
      if (from) query.whereIn('status', from);
    })
    .update({ status: to })
    .returning('id');
}
