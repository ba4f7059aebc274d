import type { Knex } from 'knex';
import { sqlList } from '../calls/outcomes';
import { CANCELLING_STATUSES } from '../orders';

/** A refusal this recent still starts a follow-up call: the customer may take the parcel after all. */
const REFUSED_FOLLOW_UP_DAYS = 2;

/**
 * The follow-up calls (docs/team.md) that delivery news starts, in the caller's transaction: one per
 * order whose news is an attempt (the courier could not deliver yet), or whose delivery just became
 * `refused` within the last two days. A follow-up is an operation of its own purpose
 * (`follow_up`) in the human queue, due at once or at the next opening of the calling hours
 * (call_due_at, the calling hours' rule of every new operation), and assigned as a new order is
 * (team_assign_order). `follow_up_key` names what started it (the attempt and its time, or the
 * refusal): the same attempt never starts a second one. None when the workspace turned follow-ups
 * off, when the order already has an open operation, or when the workspace has no human agent.
 * Returns the orders that got one.
 */
export async function startFollowUps(
  db: Knex | Knex.Transaction,
  workspaceId: string,
  events: ReadonlyArray<{ orderId: string; status: string; at: string | Date }>,
  results: ReadonlyArray<{ attempted: boolean; changed: boolean }>,
  now: Date = new Date(),
): Promise<string[]> {
  const recent = now.getTime() - REFUSED_FOLLOW_UP_DAYS * 86_400_000;
  const wanted = new Map<string, string>();
  events.forEach((event, i) => {
    if (results[i]?.attempted) wanted.set(event.orderId, `attempt:${new Date(event.at).toISOString()}`);
    else if (results[i]?.changed && event.status === 'refused' && new Date(event.at).getTime() >= recent) wanted.set(event.orderId, 'refused');
  });
  if (wanted.size === 0) return [];
  // An order created already confirmed keeps its first operation pending until the worker cancels it
  // when due (confirmation-loop.md §7): cancelled here, so that it does not hold the follow-up back.
  await db.raw(
    `UPDATE operations op SET status = 'cancelled', next_attempt_at = NULL
       FROM orders o
      WHERE o.id = op.order_id AND o.workspace_id = ?::uuid AND op.order_id = ANY(?::uuid[]) AND op.status = 'pending'
        AND op.purpose = 'confirmation' AND o.status IN (${sqlList(CANCELLING_STATUSES)})`,
    [workspaceId, [...wanted.keys()]],
  );
  const { rows } = await db.raw(
    `WITH started AS (
       INSERT INTO operations (workspace_id, order_id, agent_id, direction, status, next_attempt_at, purpose, follow_up_key)
       SELECT o.workspace_id, o.id, a.id, 'outbound', 'pending', call_due_at(o.workspace_id, now()), 'follow_up', k.key
         FROM unnest(?::uuid[], ?::text[]) AS k(order_id, key)
         JOIN orders o ON o.id = k.order_id AND o.workspace_id = ?::uuid
         CROSS JOIN LATERAL (
           SELECT id FROM agents WHERE workspace_id = o.workspace_id AND kind = 'human' ORDER BY is_order_handler DESC, created_at, id LIMIT 1) a
        WHERE coalesce((SELECT follow_ups FROM team_settings WHERE workspace_id = ?::uuid), true)
          AND (k.key <> 'refused' OR o.delivery_status = 'refused')
       ON CONFLICT DO NOTHING
       RETURNING order_id
     )
     SELECT order_id FROM started ORDER BY order_id`,
    [[...wanted.keys()], [...wanted.values()], workspaceId, workspaceId],
  );
  const started = rows.map((row: { order_id: string }) => row.order_id);
  if (started.length > 0)
    await db.raw(
      `UPDATE orders o SET assigned_to = x.who, assigned_at = now()
         FROM (SELECT id, team_assign_order(workspace_id, store_name) AS who FROM orders WHERE id = ANY(?::uuid[]) ORDER BY created_at, id) x
        WHERE o.id = x.id AND x.who IS NOT NULL`,
      [started],
    );
  return started;
}
