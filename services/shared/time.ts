/**
 * The shops are in Morocco: a day, a calling hour, a time typed without a zone or shown to a person
 * is Morocco's. Casablanca's offset changes around Ramadan, so it is always read at the instant
 * itself, never assumed. (Old migrations write the zone as an SQL literal; new code uses this.)
 */
export const SHOP_TIME_ZONE = 'Africa/Casablanca';

const WALL_CLOCK = new Intl.DateTimeFormat('en-GB', {
  timeZone: SHOP_TIME_ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** What Morocco's clocks read at an instant, read part by part (what shopWallClock caches per quarter hour). */
export function wallClockByParts(at: number): number {
  const p = Object.fromEntries(WALL_CLOCK.formatToParts(at).map((part) => [part.type, Number(part.value)]));
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
}

const QUARTER_HOUR_MS = 15 * 60_000;
/** Each quarter hour's offset, read once: `formatToParts` costs microseconds, and the call queue asks often. */
const quarterOffsets = new Map<number, number>();

/** What Morocco's clocks read at an instant (ms since the epoch or a Date), written as if it were UTC (ms since the epoch, whole seconds). */
export function shopWallClock(at: number | Date): number {
  // As a Date reads a number: whole milliseconds, cut toward zero.
  const ms = Math.trunc(typeof at === 'number' ? at : at.getTime());
  const second = Math.floor(ms / 1000) * 1000;
  const quarter = Math.floor(ms / QUARTER_HOUR_MS);
  let offset = quarterOffsets.get(quarter);
  if (offset === undefined) {
    const start = quarter * QUARTER_HOUR_MS;
    const end = start + QUARTER_HOUR_MS - 1000;
    const first = wallClockByParts(start) - start;
    // A quarter hour the clocks change within (none since 1913: they change on the hour) is read at the instant itself.
    if (wallClockByParts(end) - end !== first) return wallClockByParts(ms);
    if (quarterOffsets.size >= 100_000) quarterOffsets.clear();
    quarterOffsets.set(quarter, first);
    offset = first;
  }
  return second + offset;
}

/** How far Morocco's clocks are ahead of UTC at an instant (ms since the epoch), in ms. */
export function shopClockOffset(at: number): number {
  return shopWallClock(at) - Math.floor(at / 1000) * 1000;
}

/** A wall-clock reading in Morocco (ms since the epoch as if it were UTC) as the instant it names. */
export function fromShopWallClock(clock: number): number {
  const first = clock - shopClockOffset(clock);
  return clock - shopClockOffset(first);
}

/** SQL: `column` (a timestamptz) falls within two Morocco days, both included, bound as `?, ?` (YYYY-MM-DD). */
export const WITHIN_SHOP_DAYS = (column: string) =>
  `${column} >= (?::date::timestamp AT TIME ZONE '${SHOP_TIME_ZONE}') AND ${column} < ((?::date + 1)::timestamp AT TIME ZONE '${SHOP_TIME_ZONE}')`;

/** The day in Morocco at an instant: "2026-11-22". */
export function shopDay(at: Date = new Date()): string {
  return new Date(shopWallClock(at)).toISOString().slice(0, 10);
}
