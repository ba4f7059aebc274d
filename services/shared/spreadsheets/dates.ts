import { fromShopWallClock } from '../time';

/** A wall-clock reading that exists (no 31 June, no 25:00), in ms since the epoch as if it were UTC. */
function clock(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number | undefined {
  const at = Date.UTC(year, month - 1, day, hour, minute, second);
  const d = new Date(at);
  const exists = d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
  return exists && year >= 1900 && year <= 9999 ? at : undefined;
}

/** Excel's serial dates count days from 1899-12-30, and hold a 29 February 1900 that never was (serial 60). */
const EXCEL_EPOCH = Date.UTC(1899, 11, 30);
const DAY_MS = 86_400_000;
/** 9999-12-31, the last day Excel has. */
const EXCEL_LAST_SERIAL = 2_958_465;

/**
 * An order date as a shop's spreadsheet writes it, as an ISO 8601 UTC instant with milliseconds, or
 * undefined when it is not a date: `24/11/2026`, `24/11/2026 14:30` (day first, as in France and
 * Morocco; `-` or `.` between its parts too), ISO 8601 (`2026-11-24`, `2026-11-24T14:30:00Z`) and
 * Excel's serial dates (`46350`, `46350.6` for 14:24). A date or time without a zone is Morocco
 * time; a date without a time is midnight there (`SHOP_TIME_ZONE`).
 */
export function parseSheetDate(typed: string): string | undefined {
  const text = typed.trim();
  let wall: number | undefined;
  const dayFirst = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:[ T,]+(\d{1,2})[:h](\d{2})(?::(\d{2}))?)?$/.exec(text);
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(text);
  if (dayFirst) {
    const [, d, m, y, h, min, s] = dayFirst;
    wall = clock(Number(y), Number(m), Number(d), Number(h ?? 0), Number(min ?? 0), Number(s ?? 0));
  } else if (iso) {
    const [, y, m, d, h, min, s, zone] = iso;
    wall = clock(Number(y), Number(m), Number(d), Number(h ?? 0), Number(min ?? 0), Number(s ?? 0));
    if (wall !== undefined && zone) {
      const at = Date.parse(text.replace(' ', 'T'));
      return Number.isNaN(at) ? undefined : new Date(at).toISOString();
    }
  } else if (/^\d+(\.\d+)?$/.test(text)) {
    const serial = Number(text);
    if (serial < 1 || serial > EXCEL_LAST_SERIAL) return undefined;
    // Before 1 March 1900 Excel's count is one day ahead of the calendar.
    const days = serial < 61 ? serial + 1 : serial;
    wall = EXCEL_EPOCH + Math.round((days * DAY_MS) / 1000) * 1000;
  }
  return wall === undefined ? undefined : new Date(fromShopWallClock(wall)).toISOString();
}
