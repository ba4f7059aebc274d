import type { Knex } from 'knex';
import { ORDER_STATUSES } from '../orders';
import type { OrderStatus } from '../orders';

/**
 * The counters the triggers keep (README's "Triggers and functions"): each trigger adds delta rows,
 * so that parallel writers never wait on one row; the worker's housekeeping folds them. Every sum
 * read is the same before and after a fold.
 */

/** How many orders of the workspace are in each status (the order list's tabs): ten numbers, not a count of every order. */
export async function statusCounts(knex: Knex, workspaceId: string): Promise<Record<OrderStatus, number>> {
  const rows: Array<{ status: OrderStatus; n: number }> = await knex('order_status_counts')
    .where({ workspace_id: workspaceId })
    .groupBy('status')
    .select('status', knex.raw('sum(n)::int AS n'));
  const counts = Object.fromEntries(ORDER_STATUSES.map((status) => [status, 0])) as Record<OrderStatus, number>;
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

/** Folds the status counters' deltas into one row per workspace and status, for the workspaces with more than `minRows` rows. */
export async function compactStatusCounts(knex: Knex, minRows = 20): Promise<number> {
  const { rowCount } = await knex.raw(
    `WITH folded AS (
       DELETE FROM order_status_counts
        WHERE workspace_id IN (SELECT workspace_id FROM order_status_counts GROUP BY workspace_id HAVING count(*) > ?)
       RETURNING workspace_id, status, n)
     INSERT INTO order_status_counts (workspace_id, status, n)
     SELECT workspace_id, status, sum(n) FROM folded GROUP BY workspace_id, status HAVING sum(n) <> 0`,
    [minRows],
  );
  return rowCount ?? 0;
}

/** The counters by Morocco day (or month), each a table of delta rows with the columns that key it, its period column first after the workspace. */
const DAILY_COUNTERS = {
  delivery_counts: { key: ['workspace_id', 'day', 'store_name', 'city', 'currency', 'status', 'confirmer_kind', 'confirmer_id'], sums: ['n', 'amount'] },
  delivery_day_counts: { key: ['workspace_id', 'day', 'currency', 'status', 'confirmer_kind', 'confirmer_id'], sums: ['n', 'amount'] },
  delivery_month_counts: {
    key: ['workspace_id', 'month', 'store_name', 'city', 'currency', 'status', 'confirmer_kind', 'confirmer_id'],
    sums: ['n', 'amount'],
  },
  call_counts: { key: ['workspace_id', 'day', 'kind', 'member_id', 'agent_id', 'outcome'], sums: ['n', 'answered', 'seconds'] },
  order_counts: { key: ['workspace_id', 'day', 'store_name', 'status', 'currency', 'finished', 'blocked'], sums: ['n', 'amount', 'calls', 'called'] },
} as const;

/**
 * Folds the counters by day or month (delivery_counts, delivery_day_counts, delivery_month_counts,
 * call_counts, order_counts) into one row per key, for the workspaces that have piled up more than
 * `minRows` delta rows on one day (month).
 */
export async function compactDailyCounts(knex: Knex, minRows = 50): Promise<number> {
  let folded = 0;
  for (const [table, { key, sums }] of Object.entries(DAILY_COUNTERS)) {
    const keys = key.join(', ');
    const { rowCount } = await knex.raw(
      `WITH folded AS (
         DELETE FROM ${table}
          WHERE workspace_id IN (SELECT workspace_id FROM ${table} GROUP BY workspace_id, ${key[1]} HAVING count(*) > ?)
         RETURNING *)
       INSERT INTO ${table} (${keys}, ${sums.join(', ')})
       SELECT ${keys}, ${sums.map((c) => `sum(${c})`).join(', ')}
         FROM folded GROUP BY ${keys}
       HAVING ${sums.map((c) => `sum(${c}) <> 0`).join(' OR ')}`,
      [minRows],
    );
    folded += rowCount ?? 0;
  }
  return folded;
}
