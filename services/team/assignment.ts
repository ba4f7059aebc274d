import type { Knex } from 'knex';
import { z } from 'zod';
import { NotFoundError, ValidationError, bodyFields, camelOrSnake, isUuid, msg, ownerOnly, parse } from '../../services/shared';
import type { WorkspaceActor } from '../../services/shared';

/** How many orders one reassignment may name. */
const ASSIGN_MAX_ORDERS = 1000;

/**
 * The orders that waited unassigned for a call (nobody was on shift, or their store's confirmers
 * were not) get an assignee now, oldest first, each as a new order would (team_assign_order, under
 * the workspace's lock). With `assignment: open` nothing changes.
 */
export async function assignWaiting(knex: Knex, workspaceId: string): Promise<number> {
  const mode = await knex('team_settings').where({ workspace_id: workspaceId }).first('assignment');
  if (!mode || mode.assignment === 'open') return 0;
  const waiting: Array<{ id: string; store_name: string }> = await knex('orders as o')
    .join('operations as op', 'op.id', 'o.operation_id')
    .where({ 'o.workspace_id': workspaceId, 'op.status': 'pending' })
    .whereNull('o.assigned_to')
    .orderBy([{ column: 'o.created_at' }, { column: 'o.id' }])
    .limit(5000)
    .select('o.id', 'o.store_name');
  let assigned = 0;
  for (const order of waiting) {
    const { rowCount } = await knex.transaction((trx) =>
      trx.raw(
        `UPDATE orders SET assigned_to = a.who, assigned_at = now()
           FROM (SELECT team_assign_order(?::uuid, ?::text) AS who) a
          WHERE id = ? AND assigned_to IS NULL AND a.who IS NOT NULL`,
        [workspaceId, order.store_name, order.id],
      ),
    );
    if (!rowCount) break;
    assigned += rowCount;
  }
  return assigned;
}

const assignSchema = z.object({
  orderIds: z
    .array(z.string().refine(isUuid, msg('notValid', { label: 'orderIds' })), { error: msg('required', { label: 'orderIds' }) })
    .min(1, msg('required', { label: 'orderIds' }))
    .max(ASSIGN_MAX_ORDERS, msg('tooMany', { label: 'orderIds', max: ASSIGN_MAX_ORDERS })),
  userId: z.union([z.string().refine(isUuid, msg('notValid', { label: 'userId' })), z.null()], { error: msg('required', { label: 'userId' }) }),
});

/**
 * The owner gives selected orders to a member (`userId`), or back to the pool (null): all of them
 * or none. An order of another workspace is not found (404); a user who is not a member is a 400.
 */
export async function reassign(knex: Knex, workspace: WorkspaceActor, body: unknown): Promise<{ assigned: number }> {
  ownerOnly(workspace);
  const source = bodyFields(body);
  const input = parse(assignSchema, { orderIds: camelOrSnake(source, 'orderIds', 'order_ids'), userId: camelOrSnake(source, 'userId', 'user_id') });
  const ids = [...new Set(input.orderIds)];
  return knex.transaction(async (trx) => {
    if (input.userId) {
      const member = await trx('workspace_members').where({ workspace_id: workspace.id, user_id: input.userId }).first('user_id');
      if (!member) throw new ValidationError({ userId: msg('memberNotFound') });
    }
    const found = await trx('orders').where({ workspace_id: workspace.id }).whereIn('id', ids).orderBy('id').forUpdate().pluck('id');
    if (found.length !== ids.length) throw new NotFoundError(msg('orderNotFound'));
    const assigned = await trx('orders')
      .where({ workspace_id: workspace.id })
      .whereIn('id', ids)
      .update({ assigned_to: input.userId, assigned_at: input.userId ? trx.fn.now() : null });
    return { assigned };
  });
}

/** A member leaves the workspace: their orders go back to the pool and their stores forget them, in the caller's transaction. */
export async function releaseOrdersOf(trx: Knex.Transaction, workspaceId: string, userId: string): Promise<number> {
  await trx('store_confirmers').where({ workspace_id: workspaceId, user_id: userId }).delete();
  return trx('orders').where({ workspace_id: workspaceId, assigned_to: userId }).update({ assigned_to: null, assigned_at: null });
}

/** What "Start next call" needs to know of the assignment: its mode and the reserve. */
export interface ClaimRules {
  assignment: 'open' | 'round_robin' | 'weighted';
  reserveMinutes: number;
}

export async function claimRules(db: Knex | Knex.Transaction, workspaceId: string): Promise<ClaimRules> {
  const row = await db('team_settings').where({ workspace_id: workspaceId }).first('assignment', 'reserve_minutes');
  return { assignment: row?.assignment ?? 'open', reserveMinutes: row?.reserve_minutes ?? 30 };
}
