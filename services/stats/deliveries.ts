import type { Knex } from 'knex';
import { amountText, endedDeliveries, FINAL_DELIVERY_STATUSES } from '../orders';
import type { FinalDeliveryStatus } from '../orders';
import { daysOf, ratio } from './period';
import type { Period } from './period';

/**
 * What the shop learns from its deliveries (docs/delivery.md), read from the counters the triggers
 * keep (delivery_counts, call_counts), never from the orders or calls themselves: a page costs the
 * number of days × stores × cities of the period, not the number of orders.
 */

/** Orders whose delivery ended in one of the final statuses, and what the delivered ones brought in. */
export interface DeliveryTally extends Record<FinalDeliveryStatus, number> {
  /** delivered ÷ every ended delivery (FINAL_DELIVERY_STATUSES); null when none ended. */
  delivered_rate: number | null;
  /** The delivered orders' amounts, per currency, with the currency's decimals (`{"MAD": "1250.00"}`). */
  collected: Record<string, string>;
}

export interface DeliveryStats extends DeliveryTally {
  by_day: Array<{ date: string } & DeliveryTally>;
  by_store: Array<{ store_name: string } & DeliveryTally>;
  by_city: Array<{ city: string | null } & DeliveryTally>;
  /** Orders confirmed by a call (a member's or an agent's `confirmed` or `order-changed`). */
  confirmed_by_call: DeliveryTally;
  /** Orders shipped without a confirmed call. */
  without_confirmed_call: DeliveryTally;
}

/** delivered ÷ every ended delivery. */
export const deliveredRate = (counts: Record<FinalDeliveryStatus, number>) => ratio(counts.delivered, endedDeliveries(counts));

/** Sums counter rows into a tally. */
class Tally {
  counts = Object.fromEntries(FINAL_DELIVERY_STATUSES.map((status) => [status, 0])) as Record<FinalDeliveryStatus, number>;
  collected = new Map<string, number>();

  add(row: { status: string; currency: string; n: number; amount: number }): void {
    this.counts[row.status as FinalDeliveryStatus] += row.n;
    if (row.status === 'delivered' && row.currency) this.collected.set(row.currency, (this.collected.get(row.currency) ?? 0) + row.amount);
  }

  get total(): number {
    return endedDeliveries(this.counts);
  }

  json(): DeliveryTally {
    const collected: Record<string, string> = {};
    for (const [currency, amount] of [...this.collected].sort(([a], [b]) => a.localeCompare(b))) collected[currency] = amountText(amount, currency) ?? '0';
    return { ...this.counts, delivered_rate: deliveredRate(this.counts), collected };
  }
}

function grouped<K>(rows: CountRow[], key: (row: CountRow) => K): Map<K, Tally> {
  const map = new Map<K, Tally>();
  for (const row of rows) {
    const k = key(row);
    if (!map.has(k)) map.set(k, new Tally());
    map.get(k)!.add(row);
  }
  return map;
}

interface CountRow {
  grouping: number;
  day: string | null;
  store_name: string | null;
  city: string | null;
  confirmed: boolean | null;
  currency: string;
  status: string;
  n: number;
  amount: number;
}

/** GROUPING(day, store_name, city, confirmed) of each grouping set below: a bit per column left out. */
const BY = { total: 0b1111, day: 0b0111, store: 0b1011, city: 0b1101, confirmed: 0b1110 };

/** The period's counters summed by SQL per day, store, city and confirmation (delta rows folded here when the worker has not yet). */
async function countRows(knex: Knex, workspaceId: string, period: Period): Promise<CountRow[]> {
  const { rows } = await knex.raw(
    `SELECT GROUPING(day, store_name, city, confirmed) AS grouping, to_char(day, 'YYYY-MM-DD') AS day, store_name, city, confirmed,
            currency, status, sum(n)::int AS n, sum(amount)::float AS amount
       FROM (SELECT *, confirmer_kind <> '' AS confirmed FROM delivery_counts
              WHERE workspace_id = ? AND day BETWEEN ?::date AND ?::date) c
      GROUP BY GROUPING SETS ((status, currency), (day, status, currency), (store_name, status, currency), (city, status, currency), (confirmed, status, currency))
     HAVING sum(n) <> 0`,
    [workspaceId, period.from, period.to],
  );
  return rows;
}

export async function deliveryStats(knex: Knex, workspaceId: string, period: Period): Promise<DeliveryStats> {
  const rows = await countRows(knex, workspaceId, period);
  const of = (set: number) => rows.filter((r) => r.grouping === set);
  const total = new Tally();
  for (const row of of(BY.total)) total.add(row);
  const days = grouped(of(BY.day), (r) => r.day);
  const byDay = daysOf(period).map((date) => ({ date, ...(days.get(date) ?? new Tally()).json() }));
  const ranked = <K>(map: Map<K, Tally>) => [...map].sort(([, a], [, b]) => b.total - a.total).slice(0, 50);
  const confirmed = grouped(of(BY.confirmed), (r) => r.confirmed);
  return {
    ...total.json(),
    by_day: byDay,
    by_store: ranked(grouped(of(BY.store), (r) => r.store_name ?? '')).map(([store_name, tally]) => ({ store_name, ...tally.json() })),
    by_city: ranked(grouped(of(BY.city), (r) => r.city ?? '')).map(([city, tally]) => ({ city: city || null, ...tally.json() })),
    confirmed_by_call: (confirmed.get(true) ?? new Tally()).json(),
    without_confirmed_call: (confirmed.get(false) ?? new Tally()).json(),
  };
}
