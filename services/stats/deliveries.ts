import type { Knex } from 'knex';
import { amountText, endedDeliveries, FINAL_DELIVERY_STATUSES } from '../orders';
import type { FinalDeliveryStatus } from '../orders';
import { shopDay } from '../../services/shared';
import { daysOf, ratio, spannedRows, spansOf } from './period';
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

  /** Adds another tally's counts and amounts. */
  merge(other: Tally): void {
    for (const status of FINAL_DELIVERY_STATUSES) this.counts[status] += other.counts[status];
    for (const [currency, amount] of other.collected) this.collected.set(currency, (this.collected.get(currency) ?? 0) + amount);
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
  confirmer_kind: string | null;
  store_name: string | null;
  city: string | null;
  currency: string;
  status: string;
  n: number;
  amount: number;
}

/** GROUPING(day, confirmer_kind) and GROUPING(store_name, city) of each grouping set below: a bit per column left out. */
const BY = { day: 0b01, confirmer: 0b10, store: 0b01, city: 0b10 };

/**
 * The period's deliveries by day and by who confirmed them, from delivery_day_counts (no store, no
 * city: a few rows a day); the whole period's tallies are the sums of the confirmers' rows.
 */
async function dayRows(knex: Knex, workspaceId: string, period: Period): Promise<CountRow[]> {
  const { rows } = await knex.raw(
    `SELECT GROUPING(day, confirmer_kind) AS grouping, to_char(day, 'YYYY-MM-DD') AS day, confirmer_kind,
            currency, status, sum(n)::int AS n, sum(amount)::float AS amount
       FROM delivery_day_counts WHERE workspace_id = ? AND day BETWEEN ?::date AND ?::date
      GROUP BY GROUPING SETS ((day, status, currency), (confirmer_kind, status, currency))
     HAVING sum(n) <> 0`,
    [workspaceId, period.from, period.to],
  );
  return rows;
}

/** The period's deliveries by store and by city: its whole months from delivery_month_counts, the rest by day from delivery_counts (`spansOf`). */
async function placeRows(knex: Knex, workspaceId: string, period: Period, today: string): Promise<CountRow[]> {
  const spanned = spannedRows(
    spansOf(period, today),
    workspaceId,
    { byDay: 'delivery_counts', byMonth: 'delivery_month_counts' },
    'store_name, city, currency, status',
    ['n', 'amount'],
  );
  const { rows } = await knex.raw(
    `SELECT GROUPING(store_name, city) AS grouping, store_name, city, currency, status, sum(n)::int AS n, sum(amount)::float AS amount
       FROM (${spanned.sql}) c
      GROUP BY GROUPING SETS ((store_name, status, currency), (city, status, currency))
     HAVING sum(n) <> 0`,
    spanned.bindings,
  );
  return rows;
}

/** Each confirming channel's confirmed orders whose delivery ended in the period: kind (`human`, `voice`, `whatsapp`) → final status → orders. */
export type Doors = Map<string, Record<FinalDeliveryStatus, number>>;

/** What happened at the door over the period, and what each channel's confirmed orders became (`doors`). */
export async function deliveryStats(knex: Knex, workspaceId: string, period: Period, today = shopDay()): Promise<{ delivery: DeliveryStats; doors: Doors }> {
  const [byDay, byPlace] = await Promise.all([dayRows(knex, workspaceId, period), placeRows(knex, workspaceId, period, today)]);
  const confirmers = grouped(
    byDay.filter((r) => r.grouping === BY.confirmer),
    (r) => r.confirmer_kind ?? '',
  );
  const total = new Tally();
  const confirmed = new Tally();
  for (const [kind, tally] of confirmers) {
    total.merge(tally);
    if (kind) confirmed.merge(tally);
  }
  const days = grouped(
    byDay.filter((r) => r.grouping === BY.day),
    (r) => r.day,
  );
  // Most ended deliveries first; a tie by name (the database returns groups in no given order).
  const ranked = (map: Map<string, Tally>) => [...map].sort(([x, a], [y, b]) => b.total - a.total || x.localeCompare(y)).slice(0, 50);
  const stores = grouped(
    byPlace.filter((r) => r.grouping === BY.store),
    (r) => r.store_name ?? '',
  );
  const cities = grouped(
    byPlace.filter((r) => r.grouping === BY.city),
    (r) => r.city ?? '',
  );
  const delivery: DeliveryStats = {
    ...total.json(),
    by_day: daysOf(period).map((date) => ({ date, ...(days.get(date) ?? new Tally()).json() })),
    by_store: ranked(stores).map(([store_name, tally]) => ({ store_name, ...tally.json() })),
    by_city: ranked(cities).map(([city, tally]) => ({ city: city || null, ...tally.json() })),
    confirmed_by_call: confirmed.json(),
    without_confirmed_call: (confirmers.get('') ?? new Tally()).json(),
  };
  const doors: Doors = new Map([...confirmers].filter(([kind]) => kind !== '').map(([kind, tally]) => [kind, { ...tally.counts }]));
  return { delivery, doors };
}
