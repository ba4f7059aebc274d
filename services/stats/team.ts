import { stringify } from 'csv-stringify/sync';
import type { Knex } from 'knex';
import { shopDay, WITHIN_SHOP_DAYS } from '../../services/shared';
import { confirmedCount, OUTCOMES } from '../calls';
import type { Outcome } from '../calls';
import { defuse, FINAL_DELIVERY_STATUSES } from '../orders';
import type { FinalDeliveryStatus } from '../orders';
import { deliveredRate } from './deliveries';
import { ratio, spannedRows, spansOf } from './period';
import type { Period } from './period';

/** One confirmer's row of /stats/team: a member, a voice agent or a WhatsApp agent. */
interface TeamRow extends Record<FinalDeliveryStatus, number> {
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
  return { ...row, confirmation_rate: ratio(confirmed, confirmed + row.by_outcome.unconfirmed), delivered_rate: deliveredRate(row) };
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
          ...(Object.fromEntries(FINAL_DELIVERY_STATUSES.map((status) => [status, sum((r) => r[status])])) as Record<FinalDeliveryStatus, number>),
        }),
      ];
    }),
  );
  return sums as TeamStats['by_channel'];
}

/** The delivery counters that keep the confirmer: by day for a period's ragged ends, by month for its whole months. */
const BY_CONFIRMER = { byDay: 'delivery_day_counts', byMonth: 'delivery_month_counts' } as const;

/**
 * Per member and per voice or WhatsApp agent over the period: their calls by outcome and handling
 * time (call_counts), and the delivery of the orders they confirmed (delivery_counts). Every current
 * member and agent has a row; someone who left keeps theirs while the period holds their calls.
 */
export async function teamStats(knex: Knex, workspaceId: string, period: Period, today = shopDay()): Promise<TeamStats> {
  const bounds = [workspaceId, period.from, period.to];
  const confirmed = spannedRows(spansOf(period, today), workspaceId, BY_CONFIRMER, 'confirmer_kind, confirmer_id, status', ['n'], " AND confirmer_kind <> ''");
  const [calls, deliveries, members, agents] = await Promise.all([
    knex.raw(
      `SELECT kind, coalesce(member_id, agent_id) AS who, outcome, sum(n)::int AS n, sum(answered)::int AS answered, sum(seconds)::float AS seconds
         FROM call_counts WHERE workspace_id = ? AND day BETWEEN ?::date AND ?::date
        GROUP BY kind, coalesce(member_id, agent_id), outcome HAVING sum(n) <> 0`,
      bounds,
    ),
    // Whole months from delivery_month_counts, the rest by day from delivery_day_counts (`spansOf`).
    knex.raw(
      `SELECT confirmer_kind AS kind, confirmer_id AS who, status, sum(n)::int AS n
         FROM (${confirmed.sql}) c
        GROUP BY confirmer_kind, confirmer_id, status HAVING sum(n) <> 0`,
      confirmed.bindings,
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
        ...(Object.fromEntries(FINAL_DELIVERY_STATUSES.map((status) => [status, 0])) as Record<FinalDeliveryStatus, number>),
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
  for (const d of deliveries.rows as Array<{ kind: string; who: string | null; status: FinalDeliveryStatus; n: number }>) {
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

/**
 * The orders each confirmer of a kind confirmed that were delivered in the period (by the day of
 * their delivery, in Morocco): confirmer id → orders. What the pay view pays per delivered order,
 * read from delivery_month_counts and delivery_day_counts as the team's figures are.
 */
export async function deliveredByConfirmer(knex: Knex, workspaceId: string, period: Period, kind: string, today = shopDay()): Promise<Map<string, number>> {
  const delivered = spannedRows(spansOf(period, today), workspaceId, BY_CONFIRMER, 'confirmer_id', ['n'], " AND status = 'delivered' AND confirmer_kind = ?", [
    kind,
  ]);
  const { rows } = await knex.raw(
    `SELECT confirmer_id AS who, sum(n)::int AS n FROM (${delivered.sql}) c
      WHERE confirmer_id IS NOT NULL GROUP BY confirmer_id HAVING sum(n) <> 0`,
    delivered.bindings,
  );
  return new Map(rows.map((r: { who: string; n: number }) => [r.who, r.n]));
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
  ...FINAL_DELIVERY_STATUSES,
  'delivered_rate',
];

/** One member's follow-ups over a period: the follow-up calls they ended, and the parcels delivered after their follow-up. */
export interface SavedLine {
  user_id: string;
  name: string;
  follow_ups: number;
  saved: number;
}

/**
 * Saved parcels (docs/team.md): per member, the follow-up calls they ended within the period, and
 * the orders they followed up that were then delivered, counted in the period of the delivery.
 * A member's calls are `human` ones (only those have `made_by`): said in the statement, so that the
 * workspace's ended human calls are read through `calls_human_ended_idx` instead of every call of
 * every workspace.
 */
export async function savedParcels(knex: Knex, workspaceId: string, period: { from: string; to: string }): Promise<SavedLine[]> {
  const { rows } = await knex.raw(
    `SELECT m.user_id, u.name, coalesce(f.n, 0)::int AS follow_ups, coalesce(s.n, 0)::int AS saved
       FROM workspace_members m
       JOIN users u ON u.id = m.user_id
       LEFT JOIN (
         SELECT k.made_by AS user_id, count(*) AS n
           FROM calls k JOIN operations op ON op.id = k.operation_id
          WHERE k.workspace_id = ? AND k.kind = 'human' AND op.purpose = 'follow_up' AND k.outcome IS NOT NULL AND k.dropped_at IS NULL AND ${WITHIN_SHOP_DAYS('k.ended_at')}
          GROUP BY k.made_by) f ON f.user_id = m.user_id
       LEFT JOIN (
         SELECT k.made_by AS user_id, count(DISTINCT o.id) AS n
           FROM calls k JOIN operations op ON op.id = k.operation_id JOIN orders o ON o.id = op.order_id
          WHERE k.workspace_id = ? AND k.kind = 'human' AND op.purpose = 'follow_up' AND k.outcome IS NOT NULL AND k.dropped_at IS NULL
            AND o.delivery_status = 'delivered' AND o.delivery_at > k.ended_at AND ${WITHIN_SHOP_DAYS('o.delivery_at')}
          GROUP BY k.made_by) s ON s.user_id = m.user_id
      WHERE m.workspace_id = ?
      ORDER BY m.role DESC, u.name, u.id`,
    [workspaceId, period.from, period.to, workspaceId, period.from, period.to, workspaceId],
  );
  return rows;
}
