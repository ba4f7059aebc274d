import type { Knex } from 'knex';
import { stringify } from 'csv-stringify/sync';
import { WITHIN_SHOP_DAYS } from '../../services/shared';
import { CONFIRMING_OUTCOMES, sqlList } from '../calls/outcomes';
import type { PayRule } from './settings';

/** One member's line of the pay view. */
interface PayLine {
  user_id: string;
  name: string;
  rule: PayRule;
  /** Orders the member's call confirmed within the period (the call's end, Morocco day). */
  confirmed: number;
  /** Orders they confirmed that were delivered within the period (the delivery's day). */
  delivered: number;
  /** The fixed part for the period: the monthly amount times the share of each month the period covers. */
  fixed_part: string;
  amount: string;
}

export interface PayView {
  from: string;
  to: string;
  currency: string;
  lines: PayLine[];
}

const DAY_MS = 86_400_000;

/**
 * The part of a month's fixed pay a period earns: for each month it touches, the days it covers
 * over the month's days. A whole month earns the amount exactly.
 */
function monthsCovered(from: string, to: string): number {
  let months = 0;
  for (let day = Date.parse(from); day <= Date.parse(to); day += DAY_MS) {
    const date = new Date(day);
    months += 1 / new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  }
  return months;
}

/** The outcomes that confirm an order, as CONFIRMING_CALL_SQL of services/orders reads them. */
const CONFIRMING_SQL = sqlList(CONFIRMING_OUTCOMES);

const money = (value: number) => (Math.round(value * 100) / 100).toFixed(2);

/**
 * The pay of each member over the period, by their rule: the counts the rule uses and the amount.
 * An order counts once, for the member whose call confirmed it (its last confirming call, the
 * confirmer its delivery records), in the period of that call's end (confirmed) or of its delivery
 * (delivered). `onlyUserId`: a member sees their own line alone. `delivered`: the members'
 * delivered orders over the period (`DeliveredBy`: the statistics' counters count them).
 */
export async function payView(
  knex: Knex,
  workspaceId: string,
  period: { from: string; to: string },
  delivered: Promise<Map<string, number>>,
  onlyUserId?: string,
): Promise<PayView> {
  const [settings, { rows }, deliveredBy] = await Promise.all([
    knex('team_settings').where({ workspace_id: workspaceId }).first('currency'),
    knex.raw(
      `SELECT m.user_id, u.name, m.pay_fixed, m.pay_per_confirmed, m.pay_per_delivered,
            coalesce(conf.n, 0)::int AS confirmed
       FROM workspace_members m
       JOIN users u ON u.id = m.user_id
       LEFT JOIN (
         -- The period's confirming calls that are their order's last (CONFIRMING_CALL_SQL's rule).
         SELECT k.made_by AS user_id, count(DISTINCT op.order_id) AS n
           FROM calls k JOIN operations op ON op.id = k.operation_id
          WHERE k.workspace_id = ? AND k.kind = 'human' AND k.outcome IN (${CONFIRMING_SQL}) AND k.dropped_at IS NULL AND ${WITHIN_SHOP_DAYS('k.ended_at')}
            AND NOT EXISTS (SELECT 1 FROM operations op2 JOIN calls k2 ON k2.operation_id = op2.id
                             WHERE op2.order_id = op.order_id AND k2.outcome IN (${CONFIRMING_SQL}) AND k2.dropped_at IS NULL AND k2.ended_at > k.ended_at)
          GROUP BY k.made_by) conf ON conf.user_id = m.user_id
      WHERE m.workspace_id = ? AND (?::uuid IS NULL OR m.user_id = ?::uuid)
      ORDER BY m.role DESC, u.name, u.id`,
      [workspaceId, period.from, period.to, workspaceId, onlyUserId ?? null, onlyUserId ?? null],
    ),
    delivered,
  ]);
  const months = monthsCovered(period.from, period.to);
  const text = (value: unknown) => (value === null || value === undefined ? null : Number(value).toFixed(2));
  const lines = rows.map(
    (row: {
      user_id: string;
      name: string;
      pay_fixed: number | null;
      pay_per_confirmed: number | null;
      pay_per_delivered: number | null;
      confirmed: number;
    }): PayLine => {
      const orders = deliveredBy.get(row.user_id) ?? 0;
      const fixed = (row.pay_fixed ?? 0) * months;
      const amount = fixed + (row.pay_per_confirmed ?? 0) * row.confirmed + (row.pay_per_delivered ?? 0) * orders;
      return {
        user_id: row.user_id,
        name: row.name,
        rule: { fixed: text(row.pay_fixed), per_confirmed: text(row.pay_per_confirmed), per_delivered: text(row.pay_per_delivered) },
        confirmed: row.confirmed,
        delivered: orders,
        fixed_part: money(fixed),
        amount: money(amount),
      };
    },
  );
  return { from: period.from, to: period.to, currency: settings?.currency ?? 'MAD', lines };
}

/** The CSV's columns, by their English header (the page's columns, in its order). */
const PAY_CSV_COLUMNS = ['member', 'fixed_per_month', 'per_confirmed', 'per_delivered', 'confirmed', 'delivered', 'fixed_part', 'amount', 'currency'] as const;

/** The pay view as CSV, a row per line of the page, with `headers` in the reader's language. */
export function payCsv(view: PayView, headers: readonly string[] = PAY_CSV_COLUMNS): string {
  const rows = view.lines.map((line) => [
    line.name,
    line.rule.fixed ?? '',
    line.rule.per_confirmed ?? '',
    line.rule.per_delivered ?? '',
    line.confirmed,
    line.delivered,
    line.fixed_part,
    line.amount,
    view.currency,
  ]);
  return `\uFEFF${stringify([headers as string[], ...rows])}`;
}
