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
