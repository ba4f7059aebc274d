import { ValidationError, msg } from '../../services/shared';

/** How far ahead of our clock an event's time may be (a carrier's clock a little fast), and no more. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** An event's time: ISO 8601, not in the future; absent means now. */
export function eventTime(value: unknown, field = 'at'): Date {
  if (value === undefined || value === null || value === '') return new Date();
  const date = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value.trim()) ? new Date(value.trim()) : null;
  if (!date || Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1970) throw new ValidationError({ [field]: msg('deliveryAtInvalid') });
  if (date.getTime() > Date.now() + CLOCK_SKEW_MS) throw new ValidationError({ [field]: msg('deliveryAtFuture') });
  return date;
}
