import type { Knex } from 'knex';
import { ValidationError, msg, shopDay } from '../../services/shared';
import type { FieldErrors } from '../../services/shared';
import { OUTCOMES } from '../calls';
import type { Outcome } from '../calls';
import { FINAL_DELIVERY_STATUSES, ORDER_STATUSES } from '../orders';
import type { FinalDeliveryStatus, OrderStatus } from '../orders';
import { compactDailyCounts, compactStatusCounts, statusCounts } from './counters';
import { deliveredRate, deliveryStats } from './deliveries';
import type { DeliveryStats, Doors } from './deliveries';
import { statsPageOf, teamPageOf } from './pages';
import type { ShownDelivery, TeamPage } from './pages';
import { DAY_MS, daysOf, ratio } from './period';
import type { Period } from './period';
import { deliveredByConfirmer, savedParcels, teamStats } from './team';
import type { SavedLine, TeamStats } from './team';

const CHANNELS = ['human', 'voice', 'whatsapp'] as const;

/** The ended calls of one channel (members, voice agents, WhatsApp messages) over the period. */
interface ChannelStats {
  calls: number;
  answered: number;
  answered_rate: number | null;
  by_outcome: Record<Outcome, number>;
  /** How the orders this channel confirmed ended at the door (their deliveries ended in the period). */
  delivered: number;
  refused: number;
  returned: number;
  lost: number;
  delivered_rate: number | null;
}

const DEFAULT_DAYS = 30;
export const MAX_DAYS = 366;

export interface Stats {
  from: string;
  to: string;
  orders: number;
  by_status: Record<OrderStatus, number>;
  /** Confirmed ÷ orders whose confirmation has finished, leaving out the orders a blocked number declined. */
  confirmation_rate: number | null;
  /** Orders declined at once because their number is blocked (no call was made). */
  blocked: number;
  calls: number;
  answered_rate: number | null;
  average_calls_to_confirm: number | null;
  /** What the confirmed orders of the period are to collect, in MAD (see CONFIRMED_AMOUNT). */
  confirmed_amount: string;
  by_day: Array<{ date: string; orders: number; confirmed: number; confirmed_amount: string }>;
  by_store: Array<{ store_name: string; orders: number; confirmed: number; confirmed_amount: string }>;
  /** Calls by channel: how each step of the ladder answers and what it ends with. */
  by_channel: Record<(typeof CHANNELS)[number], ChannelStats>;
  /** What happened at the door: orders whose delivery ended in the period (deliveries.ts). */
  delivery: DeliveryStats;
}

/** /stats's figures: the API's, each delivery tally with the columns the page adds up (pages.ts). */
export type StatsPage = Omit<Stats, 'delivery'> & { delivery: ShownDelivery };

/**
 * The sum of the confirmed orders' amounts, as text with two decimals. Only MAD is added up: the
 * shops are Moroccan, and a sum across currencies would mean nothing; an order without an amount
 * adds nothing.
 */
const CONFIRMED_AMOUNT = "coalesce(sum(amount) FILTER (WHERE status = 'confirmed' AND currency = 'MAD'), 0.00)::numeric(14, 2)::text";

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function readDay(query: Record<string, unknown>, name: 'from' | 'to', fields: FieldErrors): Date | null {
  const value = query[name];
  if (value === undefined || value === '') return null;
  const text = typeof value === 'string' ? value.trim() : '';
  const m = DATE.exec(text);
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!date || isoDay(date) !== text || date.getUTCFullYear() < 1970) {
    fields[name] = msg('dateSuchAs', { label: name });
    return null;
  }
  return date;
}

/** The period asked for: dates in Morocco time, both included; by default the last 30 days. */
export function readPeriod(query: Record<string, unknown>, today = shopDay()): Period {
  const fields: FieldErrors = {};
  const from = readDay(query, 'from', fields);
  let to = readDay(query, 'to', fields);
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  to ??= new Date(Date.parse(today));
  const start = from ?? new Date(to.getTime() - (DEFAULT_DAYS - 1) * DAY_MS);
  if (start > to) throw new ValidationError({ from: msg('fromBeforeTo') });
  if ((to.getTime() - start.getTime()) / DAY_MS + 1 > MAX_DAYS) throw new ValidationError({ from: msg('maxDays', { days: MAX_DAYS }) });
  return { from: isoDay(start), to: isoDay(to) };
}

/** Every figure a page or the API shows from the counters, and the counters' folding. */
export class StatsService {
  constructor(private readonly knex: Knex) {}

  /** GET /api/stats/team: each member's and agent's calls, and the delivery of the orders they confirmed. */
  team(workspaceId: string, period: Period): Promise<TeamStats> {
    return teamStats(this.knex, workspaceId, period);
  }

  /** /stats/team: the team's figures with the columns the page adds up. */
  async teamPage(workspaceId: string, period: Period): Promise<TeamPage> {
    return teamPageOf(await this.team(workspaceId, period));
  }

  /** /stats: the period's figures with the columns the page adds up. */
  async page(workspaceId: string, period: Period): Promise<StatsPage> {
    return statsPageOf(await this.forPeriod(workspaceId, period));
  }

  /** The orders each confirmer of `kind` confirmed that were delivered in the period: confirmer id → orders (the pay view's). */
  deliveredByConfirmer(workspaceId: string, period: Period, kind: 'human' | 'voice' | 'whatsapp'): Promise<Map<string, number>> {
    return deliveredByConfirmer(this.knex, workspaceId, period, kind);
  }

  /** /stats/team: saved parcels per member over a period (follow-ups, then delivered). */
  saved(workspaceId: string, period: Period): Promise<SavedLine[]> {
    return savedParcels(this.knex, workspaceId, period);
  }

  /** The order list's count of orders in each status. */
  statusCounts(workspaceId: string): Promise<Record<OrderStatus, number>> {
    return statusCounts(this.knex, workspaceId);
  }

  /** Housekeeping (each minute): folds the status counters' deltas. */
  compactStatusCounts(minRows?: number): Promise<number> {
    return compactStatusCounts(this.knex, minRows);
  }

  /** Housekeeping (each minute): folds the counters by day (orders, calls, deliveries). */
  compactDailyCounts(minRows?: number): Promise<number> {
    return compactDailyCounts(this.knex, minRows);
  }

  /**
   * Every figure is read from counters kept by triggers (order_counts, call_counts, delivery_counts),
   * by Morocco day: a period costs its days, stores and statuses, not its orders and calls.
   */
  async forPeriod(workspaceId: string, period: Period): Promise<Stats> {
    const scope = [workspaceId, period.from, period.to];
    const [groups, calls, confirming, { delivery, doors }] = await Promise.all([
      // A blocked number's order is declined at once, its operation cancelled: not a customer's answer (`blocked`).
      this.knex.raw(
        `SELECT GROUPING(status, day, store_name) AS grouping, status, to_char(day, 'YYYY-MM-DD') AS day, store_name,
                sum(n)::int AS orders,
                coalesce(sum(n) FILTER (WHERE status = 'confirmed'), 0)::int AS confirmed,
                ${CONFIRMED_AMOUNT} AS confirmed_amount,
                coalesce(sum(n) FILTER (WHERE finished AND NOT blocked), 0)::int AS finished,
                coalesce(sum(n) FILTER (WHERE finished AND status = 'confirmed'), 0)::int AS confirmed_finished,
                coalesce(sum(n) FILTER (WHERE blocked), 0)::int AS blocked
           FROM order_counts WHERE workspace_id = ? AND day BETWEEN ?::date AND ?::date
          GROUP BY GROUPING SETS ((status), (day), (store_name), ())
         HAVING sum(n) <> 0`,
        scope,
      ),
      // From the calls' counters (call_counts, kept per statement by a trigger on calls), by the day each call started.
      this.knex.raw(
        `SELECT kind, outcome, sum(n)::int AS calls, sum(answered)::int AS answered
           FROM call_counts WHERE workspace_id = ? AND day BETWEEN ?::date AND ?::date
          GROUP BY kind, outcome HAVING sum(n) <> 0`,
        scope,
      ),
      // Confirmed orders with calls: their ended calls ÷ their number.
      this.knex.raw(
        `SELECT (sum(calls)::float / nullif(sum(called), 0)) AS average
           FROM order_counts WHERE workspace_id = ? AND day BETWEEN ?::date AND ?::date AND status = 'confirmed'`,
        scope,
      ),
      // With the deliveries of the orders each channel confirmed (`doors`, by who confirmed them).
      deliveryStats(this.knex, workspaceId, period),
    ]);
    return { ...this.assemble(period, groups.rows, calls.rows, confirming.rows[0].average, doors), delivery };
  }

  private assemble(
    period: Period,
    // biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
    rows: any[],
    callRows: Array<{ kind: (typeof CHANNELS)[number]; outcome: Outcome; calls: number; answered: number }>,
    average: number | null,
    doors: Doors,
  ): Omit<Stats, 'delivery'> {
    const byChannel = Object.fromEntries(
      CHANNELS.map((channel) => {
        const mine = callRows.filter((r) => r.kind === channel);
        const calls = mine.reduce((n, r) => n + r.calls, 0);
        const answered = mine.reduce((n, r) => n + r.answered, 0);
        const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, mine.find((r) => r.outcome === o)?.calls ?? 0])) as Record<Outcome, number>;
        const door = doors.get(channel);
        const ended = Object.fromEntries(FINAL_DELIVERY_STATUSES.map((status) => [status, door?.[status] ?? 0])) as Record<FinalDeliveryStatus, number>;
        return [channel, { calls, answered, answered_rate: ratio(answered, calls), by_outcome: byOutcome, ...ended, delivered_rate: deliveredRate(ended) }];
      }),
    ) as Stats['by_channel'];
    const calls = { calls: callRows.reduce((n, r) => n + r.calls, 0), answered: callRows.reduce((n, r) => n + r.answered, 0) };
    // GROUPING() is a bit mask over (status, day, store_name): 0b011 = by status, 0b101 = by day, 0b110 = by store.
    const total = rows.find((r) => r.grouping === 0b111) ?? { orders: 0, confirmed_finished: 0, finished: 0, blocked: 0, confirmed_amount: '0.00' };
    const byStatus = Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0])) as Record<OrderStatus, number>;
    for (const r of rows.filter((row) => row.grouping === 0b011)) byStatus[r.status as OrderStatus] = r.orders;
    const days = new Map(rows.filter((r) => r.grouping === 0b101).map((r) => [r.day, r]));
    const byDay = daysOf(period).map((date) => {
      const day = days.get(date);
      return { date, orders: day?.orders ?? 0, confirmed: day?.confirmed ?? 0, confirmed_amount: day?.confirmed_amount ?? '0.00' };
    });
    const byStore = rows
      .filter((r) => r.grouping === 0b110)
      .map((r) => ({
        store_name: r.store_name as string,
        orders: r.orders as number,
        confirmed: r.confirmed as number,
        confirmed_amount: r.confirmed_amount as string,
      }))
      .sort((a, b) => b.orders - a.orders || a.store_name.localeCompare(b.store_name))
      .slice(0, 50);
    return {
      from: period.from,
      to: period.to,
      orders: total.orders,
      by_status: byStatus,
      confirmation_rate: ratio(total.confirmed_finished, total.finished),
      blocked: total.blocked,
      calls: calls.calls,
      answered_rate: ratio(calls.answered, calls.calls),
      average_calls_to_confirm: average === null ? null : Math.round(average * 100) / 100,
      confirmed_amount: total.confirmed_amount,
      by_day: byDay,
      by_store: byStore,
      by_channel: byChannel,
    };
  }
}
