import type { Knex } from 'knex';

/**
 * The one lock order. Every transaction that changes an order together with its operation or its
 * calls takes the row locks in this order, and never the other way round:
 *
 *   1. orders        (several at once: by id)
 *   2. operations    (several at once: by id)
 *   3. calls
 *   4. the workspace row (a dispatch's credit check), then the credit ledger
 *
 * A person's status change (orders, then cancelOpen's operations), a delete (the order, then its
 * operations and calls by cascade) and "call again" start at the order anyway. The loop starts from
 * an operation or a call, so it locks that row's order first (the functions below), and then the
 * operation or call. A statement that must lock out of this order never waits (SKIP LOCKED: the
 * queue's claim, the drop of expired claims, the worker's cancelling of a human operation), so it
 * can never close a cycle. The worker's dispatch locks nothing of a human operation it only looks at. Postgres breaks any
 * deadlock left with 40P01, and the transaction helper (db/transaction.ts) runs the loser again.
 */

/** Locks the order of a call; false when there is no such call (in that workspace, when given). */
export async function lockOrderOfCall(trx: Knex.Transaction, callId: string, workspaceId?: string): Promise<boolean> {
  const { rows } = await trx.raw(
    `SELECT o.id FROM calls c
       JOIN operations op ON op.id = c.operation_id
       JOIN orders o ON o.id = op.order_id
      WHERE c.id = ? AND (?::uuid IS NULL OR c.workspace_id = ?::uuid)
      FOR UPDATE OF o`,
    [callId, workspaceId ?? null, workspaceId ?? null],
  );
  return rows.length > 0;
}

/**
 * Locks the orders of operations, by id, except those whose agent is a person: the worker only
 * looks at a human operation (the queue's claim takes it, with its order, when a member asks), and
 * a lock held for that look would hide a due call from the claim, which skips locked rows.
 */
export async function lockOrdersOfNonHumanOperations(trx: Knex.Transaction, operationIds: string[]): Promise<void> {
  await trx.raw(
    `SELECT o.id FROM orders o
      WHERE o.id IN (SELECT op.order_id FROM operations op JOIN agents a ON a.id = op.agent_id
                      WHERE op.id = ANY(?::uuid[]) AND a.kind <> 'human')
      ORDER BY o.id
      FOR UPDATE OF o`,
    [operationIds],
  );
}
