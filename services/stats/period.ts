/** A period of Morocco days, both included (`readPeriod`). */
export interface Period {
  from: string;
  to: string;
}

export const DAY_MS = 86_400_000;

/** part ÷ whole with two decimals, as every rate of the statistics; null when there is no whole. */
export const ratio = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 100) / 100);

/** Every day of the period in order, as YYYY-MM-DD: a figure by day lists the days without any too. */
export function daysOf(period: Period): string[] {
  const days: string[] = [];
  for (let t = Date.parse(period.from); t <= Date.parse(period.to); t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/**
 * How a period is read from a counter kept both by day and by month (delivery_counts and
 * delivery_month_counts): its whole months by month, and each month it only partly covers either by
 * its days in the period, or as the whole month minus the month's days outside the period, whichever
 * reads fewer days' rows. Days after `today` hold no rows yet (a delivery is counted on the day it
 * ends), so leaving them out costs nothing: the current month is read as one month.
 */
export interface Spans {
  /** The first day of each month read whole. */
  months: string[];
  /** Days read and added. */
  days: string[];
  /** Days of the months read whole that the period leaves out: read and taken away. */
  minusDays: string[];
}

const dayText = (t: number) => new Date(t).toISOString().slice(0, 10);

export function spansOf(period: Period, today: string): Spans {
  const spans: Spans = { months: [], days: [], minusDays: [] };
  const from = Date.parse(period.from);
  const to = Date.parse(period.to);
  const first = new Date(from);
  for (let m = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), 1); m <= to; ) {
    const start = new Date(m);
    const next = Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1);
    const inside: string[] = [];
    const outside: string[] = [];
    for (let t = m; t < next; t += DAY_MS) (t >= from && t <= to ? inside : outside).push(dayText(t));
    const outsideToRead = outside.filter((day) => day <= today).length;
    if (outside.length === 0 || 1 + outsideToRead < inside.length) {
      spans.months.push(dayText(m));
      spans.minusDays.push(...outside);
    } else spans.days.push(...inside);
    m = next;
  }
  return spans;
}

/**
 * The rows of a period from a counter kept by day and by month (`spansOf`), as one SELECT to group:
 * `columns` and each of `sums` of the month rows and the added days, minus those of the days taken
 * away. `where` filters each part further (" AND …", with `whereBindings` for its placeholders).
 */
export function spannedRows(
  spans: Spans,
  workspaceId: string,
  tables: { byDay: string; byMonth: string },
  columns: string,
  sums: string[],
  where = '',
  whereBindings: string[] = [],
): { sql: string; bindings: string[] } {
  const parts: string[] = [];
  const bindings: string[] = [];
  const part = (table: string, column: 'day' | 'month', values: string[], sign: '' | '-') => {
    if (values.length === 0) return;
    const summed = sums.map((s) => (sign ? `-${s} AS ${s}` : s)).join(', ');
    parts.push(`SELECT ${columns}, ${summed} FROM ${table} WHERE workspace_id = ? AND ${column} = ANY(?::date[])${where}`);
    bindings.push(workspaceId, `{${values.join(',')}}`, ...whereBindings);
  };
  part(tables.byMonth, 'month', spans.months, '');
  part(tables.byDay, 'day', spans.days, '');
  part(tables.byDay, 'day', spans.minusDays, '-');
  return { sql: parts.join('\n UNION ALL '), bindings };
}
