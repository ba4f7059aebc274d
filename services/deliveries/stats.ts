import { stringify } from 'csv-stringify/sync';
import type { Knex } from 'knex';
import { defuse, amountText } from '../orders';
import { confirmedCount, OUTCOMES } from '../calls/outcomes';
import type { Outcome } from '../calls/outcomes';

/**
 * What the shop learns from its deliveries (docs/delivery.md), read from the counters the triggers
 * keep (delivery_counts, call_counts), never from the orders or calls themselves: a page costs the
 * number of days × stores × cities of the period, not the number of orders.
 */

interface Period {
  from: string;
  to: string;
}

/** Orders whose delivery ended in one of the final statuses, and what the delivered ones brought in. */
interface DeliveryTally {
  delivered: number;
  refused: number;
  returned: number;
  lost: number;
  /** delivered ÷ (delivered + refused + returned + lost); null when none ended. */
  delivered_rate: number | null;
  /** The delivered orders' amounts, per currency, with the currency's decimals (`{"MAD": "1250.00"}`). */
  collected: Record<string, string>;
}

export interface DeliveryStats extends DeliveryTally {
  by_day: Array<{ date: string } & DeliveryTally>;
  by_store: Array<{ store_name: string } & DeliveryTally>;
  by_city: Array<{ city: string | null } & DeliveryTally>;
  /** Orders confirmed by a call (a member's or an agent's outcome of CONFIRMING_OUTCOMES). */
  confirmed_by_call: DeliveryTally;
  /** Orders shipped without a confirmed call. */
  without_confirmed_call: DeliveryTally;
}

const FINAL = ['delivered', 'refused', 'returned', 'lost'] as const;
type Final = (typeof FINAL)[number];
const DAY_MS = 86_400_000;

const ratio = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 100) / 100);

/** Sums counter rows into a tally. */
class Tally {
  counts: Record<Final, number> = { delivered: 0, refused: 0, returned: 0, lost: 0 };
  collected = new Map<string, number>();

  add(row: { status: string; currency: string; n: number; amount: number }): void {
    this.counts[row.status as Final] += row.n;
    if (row.status === 'delivered' && row.currency) this.collected.set(row.currency, (this.collected.get(row.currency) ?? 0) + row.amount);
  }

  get total(): number {
    return FINAL.reduce((n, status) => n + this.counts[status], 0);
  }

  json(): DeliveryTally {
    const collected: Record<string, string> = {};
    for (const [currency, amount] of [...this.collected].sort(([a], [b]) => a.localeCompare(b))) collected[currency] = amountText(amount, currency) ?? '0';
    return { ...this.counts, delivered_rate: ratio(this.counts.delivered, this.total), collected };
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
  const byDay: DeliveryStats['by_day'] = [];
  for (let t = Date.parse(period.from); t <= Date.parse(period.to); t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    byDay.push({ date, ...(days.get(date) ?? new Tally()).json() });
  }
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

/** One confirmer's row of /stats/team: a member, a voice agent or a WhatsApp agent. */
interface TeamRow {
  kind: 'member' | 'voice' | 'whatsapp';
  id: string;
  name: string;
  calls: number;
  answered: number;
  by_outcome: Record<Outcome, number>;
  /** confirming ÷ (confirming + unconfirmed), the confirming outcomes being CONFIRMING_OUTCOMES; null without such an outcome. */
  confirmation_rate: number | null;
  /** Members and WhatsApp: from claim (or message) to outcome; voice agents: the call's reported duration. Seconds. */
  average_handling_seconds: number | null;
  /** The orders they confirmed whose delivery ended in the period. */
  delivered: number;
  refused: number;
  returned: number;
  lost: number;
  delivered_rate: number | null;
}

/** A channel's sum of its confirmers' rows: members (human), voice agents, WhatsApp agents. */
type ChannelRow = Omit<TeamRow, 'kind' | 'id' | 'name' | 'average_handling_seconds'>;

export interface TeamStats {
  from: string;
  to: string;
  rows: TeamRow[];
  by_channel: Record<'human' | 'voice' | 'whatsapp', ChannelRow>;
}

/** The rates of a row from its counts. */
function rated<T extends Omit<ChannelRow, 'confirmation_rate' | 'delivered_rate'>>(row: T): T & Pick<ChannelRow, 'confirmation_rate' | 'delivered_rate'> {
  const confirmed = confirmedCount(row.by_outcome);
  return {
    ...row,
    confirmation_rate: ratio(confirmed, confirmed + row.by_outcome.unconfirmed),
    delivered_rate: ratio(row.delivered, row.delivered + row.refused + row.returned + row.lost),
  };
}

/** Each channel's rows summed. */
function byChannel(rows: TeamRow[]): TeamStats['by_channel'] {
  const channelOf = { member: 'human', voice: 'voice', whatsapp: 'whatsapp' } as const;
  const sums = Object.fromEntries(
    (['human', 'voice', 'whatsapp'] as const).map((channel) => {
      const mine = rows.filter((r) => channelOf[r.kind] === channel);
      const sum = (pick: (r: TeamRow) => number) => mine.reduce((n, r) => n + pick(r), 0);
      const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, sum((r) => r.by_outcome[o])])) as Record<Outcome, number>;
      return [
        channel,
        rated({
          calls: sum((r) => r.calls),
          answered: sum((r) => r.answered),
          by_outcome: byOutcome,
          delivered: sum((r) => r.delivered),
          refused: sum((r) => r.refused),
          returned: sum((r) => r.returned),
          lost: sum((r) => r.lost),
        }),
      ];
    }),
  );
  return sums as TeamStats['by_channel'];
}

/**
 * Per member and per voice or WhatsApp agent over the period: their calls by outcome and handling
 * time (call_counts), and the delivery of the orders they confirmed (delivery_counts). Every current
 * member and agent has a row; someone who left keeps theirs while the period holds their calls.
 */
export async function teamStats(knex: Knex, workspaceId: string, period: Period): Promise<TeamStats> {
  const bounds = [workspaceId, period.from, period.to];
  const [calls, deliveries, members, agents] = await Promise.all([
    knex.raw(
      `SELECT kind, coalesce(member_id, agent_id) AS who, outcome, sum(n)::int AS n, sum(answered)::int AS answered, sum(seconds)::float AS seconds
         FROM call_counts WHERE workspace_id = ? AND day BETWEEN ?::date AND ?::date
        GROUP BY kind, coalesce(member_id, agent_id), outcome HAVING sum(n) <> 0`,
      bounds,
    ),
    knex.raw(
      `SELECT confirmer_kind AS kind, confirmer_id AS who, status, sum(n)::int AS n
         FROM delivery_counts WHERE workspace_id = ? AND day BETWEEN ?::date AND ?::date AND confirmer_kind <> ''
        GROUP BY confirmer_kind, confirmer_id, status HAVING sum(n) <> 0`,
      bounds,
    ),
    knex('workspace_members as m').join('users as u', 'u.id', 'm.user_id').where('m.workspace_id', workspaceId).select('u.id', 'u.name'),
    knex('agents').where({ workspace_id: workspaceId }).whereIn('kind', ['voice', 'whatsapp']).select('id', 'name', 'kind'),
  ]);
  const rows = new Map<string, TeamRow & { handled: number; seconds: number }>();
  const rowOf = (kind: TeamRow['kind'], id: string, name = '') => {
    const key = `${kind}:${id}`;
    if (!rows.has(key)) {
      const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
      rows.set(key, {
        kind,
        id,
        name,
        calls: 0,
        answered: 0,
        by_outcome: byOutcome,
        confirmation_rate: null,
        average_handling_seconds: null,
        delivered: 0,
        refused: 0,
        returned: 0,
        lost: 0,
        delivered_rate: null,
        handled: 0,
        seconds: 0,
      });
    }
    return rows.get(key)!;
  };
  for (const m of members) rowOf('member', m.id, m.name);
  for (const a of agents) rowOf(a.kind, a.id, a.name);
  const kindOf = (kind: string): TeamRow['kind'] => (kind === 'human' ? 'member' : (kind as TeamRow['kind']));
  for (const c of calls.rows as Array<{ kind: string; who: string | null; outcome: Outcome; n: number; answered: number; seconds: number }>) {
    if (!c.who) continue;
    const row = rowOf(kindOf(c.kind), c.who);
    row.calls += c.n;
    row.answered += c.answered;
    row.by_outcome[c.outcome] += c.n;
    row.handled += c.n;
    row.seconds += c.seconds;
  }
  for (const d of deliveries.rows as Array<{ kind: string; who: string | null; status: Final; n: number }>) {
    if (!d.who) continue;
    rowOf(kindOf(d.kind), d.who)[d.status] += d.n;
  }
  // Names of people who have left, or agents deleted since: their user or agent row if it is still there.
  const nameless = [...rows.values()].filter((r) => !r.name);
  if (nameless.length > 0) {
    const [users, gone] = await Promise.all([
      knex('users')
        .whereIn(
          'id',
          nameless.filter((r) => r.kind === 'member').map((r) => r.id),
        )
        .select('id', 'name'),
      knex('agents')
        .whereIn(
          'id',
          nameless.filter((r) => r.kind !== 'member').map((r) => r.id),
        )
        .select('id', 'name'),
    ]);
    const names = new Map([...users, ...gone].map((x: { id: string; name: string }) => [x.id, x.name]));
    for (const r of nameless) r.name = names.get(r.id) ?? '—';
  }
  const order = { member: 0, voice: 1, whatsapp: 2 };
  const teamRows = [...rows.values()]
    .map(({ handled, seconds, ...row }) => ({ ...rated(row), average_handling_seconds: handled === 0 ? null : Math.round(seconds / handled) }))
    .sort((a, b) => order[a.kind] - order[b.kind] || b.calls - a.calls || a.name.localeCompare(b.name));
  return { from: period.from, to: period.to, rows: teamRows, by_channel: byChannel(teamRows) };
}

/** The team's table as CSV (UTF-8 with a BOM, for spreadsheets), what a shop pays its confirmers from. */
export function teamCsv(stats: TeamStats, headers: string[]): string {
  const lines = stats.rows.map((r) => [
    r.kind,
    defuse(r.name),
    r.calls,
    r.answered,
    ...OUTCOMES.map((o) => r.by_outcome[o]),
    r.confirmation_rate ?? '',
    r.average_handling_seconds ?? '',
    r.delivered,
    r.refused,
    r.returned,
    r.lost,
    r.delivered_rate ?? '',
  ]);
  return `\ufeff${stringify([headers, ...lines])}`;
}

/** The CSV's columns, in English (the API's names); pages may give translated ones in the same order. */
export const TEAM_CSV_COLUMNS = [
  'kind',
  'name',
  'calls',
  'answered',
  ...OUTCOMES,
  'confirmation_rate',
  'average_handling_seconds',
  'delivered',
  'refused',
  'returned',
  'lost',
  'delivered_rate',
];
