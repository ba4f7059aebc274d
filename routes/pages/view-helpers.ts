import { TIMEZONE } from '../../services/call-settings';
import type { Outcome } from '../../services/operations';
import type { OrderStatus } from '../../services/order-status';
import type { OrderFlag } from '../../services/order-flags';

/** Shop staff are in Morocco: dates are shown in Morocco's time, e.g. "22 Nov 2026, 01:22". */
const TIME_ZONE = TIMEZONE;

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

function formatNumber(n: number): string {
  return NUMBER_FORMAT.format(n);
}

/** The badge text of a status: its value, read as words ("no-answer" → "no answer"). */
export function statusLabel(status: OrderStatus): string {
  return status.replace('-', ' ');
}

/** The badge text of a flag. */
const FLAG_LABELS: Record<OrderFlag, string> = {
  possible_duplicate: 'possible duplicate',
  blocked_phone: 'blocked number',
};

/** What a member picks on the call page: each outcome in words. */
const OUTCOME_LABELS: Record<Outcome, string> = {
  confirmed: 'Confirmed',
  unconfirmed: 'Declined (unconfirmed)',
  'order-changed': 'Order changed',
  unrecognized: 'Does not know this order',
  postponed: 'Call back later',
  'no-answer': 'No answer',
  failed: 'Could not call (unreachable)',
};

function formatDuration(seconds: number | null): string {
  if (seconds === null) return '';
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

const LOCAL_PARTS = new Intl.DateTimeFormat('en-GB', {
  timeZone: TIME_ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
});

/** An instant as a `datetime-local` value in Morocco time: "2026-11-22T19:30". */
export function moroccoLocal(at: Date): string {
  const p = Object.fromEntries(LOCAL_PARTS.formatToParts(at).map((part) => [part.type, part.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

/**
 * A `datetime-local` value typed in Morocco time ("2026-11-22T19:30") as a UTC ISO instant, or null
 * when it is not such a value. Casablanca's offset changes around Ramadan, so it is read at the instant itself.
 */
export function moroccoLocalToIso(value: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::\d{2})?$/.exec(value.trim());
  if (!m) return null;
  const asUtc = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]));
  if (Number.isNaN(asUtc) || new Date(asUtc).getUTCDate() !== Number(m[3])) return null;
  const offsetAt = (t: number) => Date.parse(`${moroccoLocal(new Date(t))}:00Z`) - t;
  let at = asUtc - offsetAt(asUtc);
  at = asUtc - offsetAt(at);
  return new Date(at).toISOString();
}

/** Helpers every template may use; none of them reads the request. */
export const viewHelpers = { formatDate, formatDuration, formatNumber, statusLabel, FLAG_LABELS, OUTCOME_LABELS, TIME_ZONE };
