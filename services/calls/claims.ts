/**
 * Which due human call "Start next call" takes for a member (docs/team.md): with `assignment:
 * open`, the earliest due in the workspace, as always; otherwise the member's own orders first,
 * then the pool: orders nobody has, orders whose assignee is off shift, and orders whose reserve
 * (reserve_minutes from when they fell due) has run out. Another member's reserved order is never
 * offered.
 */
import type { Knex } from 'knex';
import { ON_SHIFT_SQL, claimRules } from '../team';

export interface DueOperation {
  id: string;
  order_id: string;
  status: string;
  purpose: string;
}

/**
 * Narrows a query over operations `op` joined to their orders `o` to those `userId` may take now
 * (docs/team.md); with `assignment: open`, all of them. Its order puts the member's own first.
 */
export async function offeredTo(
  db: Knex | Knex.Transaction,
  query: Knex.QueryBuilder,
  workspaceId: string,
  userId: string,
  now: Date,
): Promise<{ assigned: boolean }> {
  const rules = await claimRules(db, workspaceId);
  if (rules.assignment === 'open') return { assigned: false };
  const reserveEnd = new Date(now.getTime() - rules.reserveMinutes * 60_000);
  query
    .leftJoin('workspace_members as m', function () {
      this.on('m.user_id', '=', 'o.assigned_to').andOn('m.workspace_id', '=', 'o.workspace_id');
    })
    .where((q) =>
      q
        .whereNull('o.assigned_to')
        .orWhere('o.assigned_to', userId)
        .orWhere('op.next_attempt_at', '<=', reserveEnd)
        .orWhereRaw(`NOT coalesce(${ON_SHIFT_SQL}, false)`),
    );
  return { assigned: true };
}

/** The next due operation for `userId`, locked with its order (skipping rows another claim holds); undefined when none. */
export async function nextDueOperation(trx: Knex.Transaction, workspaceId: string, userId: string, now: Date): Promise<DueOperation | undefined> {
  // The operation before its order, against the lock order: so this statement never waits.
  const query = trx('operations as op')
    .join('agents as a', 'a.id', 'op.agent_id')
    .join('orders as o', 'o.id', 'op.order_id')
    .where({ 'op.workspace_id': workspaceId, 'op.status': 'pending', 'a.kind': 'human' })
    .where('op.next_attempt_at', '<=', now);
  const { assigned } = await offeredTo(trx, query, workspaceId, userId, now);
  if (assigned) query.orderByRaw('(o.assigned_to IS NOT DISTINCT FROM ?) DESC, op.next_attempt_at, op.id', [userId]);
  else query.orderBy([{ column: 'op.next_attempt_at' }, { column: 'op.id' }]);
  return query.forUpdate('op', 'o').skipLocked().first('op.id', 'op.order_id', 'o.status', 'op.purpose');
}
