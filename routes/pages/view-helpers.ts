import type { OrderStatus } from '../../services/orders';

/** Shop staff are in Morocco: dates are shown in Morocco's time, e.g. "22 Nov 2026, 01:22". */
export const TIME_ZONE = 'Africa/Casablanca';

const DATE_FORMAT = new Intl.DateTimeFormat('en-GB', {
  timeZone: TIME_ZONE,
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});
const NUMBER_FORMAT = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 2 });

export function formatDate(iso: string | null | undefined): string {
  return iso ? DATE_FORMAT.format(new Date(iso)) : '';
}

export function formatNumber(n: number): string {
  return NUMBER_FORMAT.format(n);
}

/** The badge text of a status: its value, read as words ("no-answer" → "no answer"). */
export function statusLabel(status: OrderStatus): string {
  return status.replace('-', ' ');
}

/** Helpers every template may use; none of them reads the request. */
export const viewHelpers = { formatDate, formatNumber, statusLabel, TIME_ZONE };
