import type { Knex } from 'knex';
import { z } from 'zod';
import { msg, bodyFields, camelOrSnake, parse, SHOP_TIME_ZONE, shopClockOffset, shopWallClock } from '../../services/shared';
import { audit } from '../audit';

export interface CallSettings {
  max_attempts: number;
  retry_interval_minutes: number;
  calling_hours: { start: string; end: string };
  timezone: typeof SHOP_TIME_ZONE;
}

/**
 * The calling hours' constants: the shop's time zone and the hours of a workspace without settings.
 * `call_due_at`, the same rule in SQL, is generated from this table (db/call_due_at.sql.ts).
 */
export const CALLING_HOURS = { timeZone: SHOP_TIME_ZONE, defaults: { start: '09:00', end: '21:00' } } as const;

const DEFAULT_SETTINGS = { max_attempts: 3, retry_interval_minutes: 120, hours_start: CALLING_HOURS.defaults.start, hours_end: CALLING_HOURS.defaults.end };

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$|^24:00$/;
const time = (label: string) => z.string({ error: msg('timeHHMM', { label }) }).regex(HHMM, msg('timeHHMM', { label }));

export const schema = z.object({
  maxAttempts: z
    .number({ error: msg('wholeNumber', { label: 'maxAttempts', min: 1, max: 10 }) })
    .int(msg('wholeNumber', { label: 'maxAttempts', min: 1, max: 10 }))
    .min(1, msg('wholeNumber', { label: 'maxAttempts', min: 1, max: 10 }))
    .max(10, msg('wholeNumber', { label: 'maxAttempts', min: 1, max: 10 }))
    .optional(),
  retryIntervalMinutes: z
    .number({ error: msg('wholeNumber', { label: 'retryIntervalMinutes', min: 1, max: 1440 }) })
    .int(msg('wholeNumber', { label: 'retryIntervalMinutes', min: 1, max: 1440 }))
    .min(1, msg('wholeNumber', { label: 'retryIntervalMinutes', min: 1, max: 1440 }))
    .max(1440, msg('wholeNumber', { label: 'retryIntervalMinutes', min: 1, max: 1440 }))
    .optional(),
  callingHours: z
    .object({ start: time('Start'), end: time('End') }, { error: msg('hoursShape') })
    .refine((h) => minutesOf(h.start) < minutesOf(h.end), msg('hoursOrder'))
    .optional(),
});

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

type Row = { max_attempts: number; retry_interval_minutes: number; hours_start: string; hours_end: string };

/** Settings from a row that may come from a LEFT JOIN (null columns: the workspace has the defaults). */
export function settingsFrom(row: Partial<Row> | null | undefined): CallSettings {
  return toSettings(row?.max_attempts == null ? DEFAULT_SETTINGS : (row as Row));
}

function toSettings(row: Row): CallSettings {
  return {
    max_attempts: row.max_attempts,
    retry_interval_minutes: row.retry_interval_minutes,
    calling_hours: { start: row.hours_start, end: row.hours_end },
    timezone: CALLING_HOURS.timeZone,
  };
}

const DAY_MS = 86_400_000;

/** True when `at` falls inside the calling hours (start inclusive, end exclusive), Casablanca time. */
export function isOpen(settings: CallSettings, at: Date): boolean {
  const minutes = Math.floor((shopWallClock(at) % DAY_MS) / 60_000);
  return minutes >= minutesOf(settings.calling_hours.start) && minutes < minutesOf(settings.calling_hours.end);
}

/**
 * `at` itself when the hours are open then, else the first instant after it when they are: the next
 * time the clock reads the start, unless Casablanca moves its clock before then (around Ramadan; at
 * most once a day). Then it is the moment of the change, when the clock lands inside the hours, or
 * the clock's next reading of the start from there. `call_due_at` is the same rule, step for step.
 */
export function nextOpening(settings: CallSettings, at: Date): Date {
  if (isOpen(settings, at)) return at;
  const start = minutesOf(settings.calling_hours.start) * 60_000;
  const untilStart = (t: number) => {
    const wait = start - ((t + shopClockOffset(t)) % DAY_MS);
    return wait >= 0 ? wait : wait + DAY_MS;
  };
  const from = at.getTime();
  const byTheClock = from + untilStart(from);
  const offset = shopClockOffset(from);
  if (shopClockOffset(byTheClock) === offset) return new Date(byTheClock);
  // The clock changes on a whole second: the first second with the new offset, halving the wait.
  let before = Math.floor(from / 1000);
  let after = Math.ceil(byTheClock / 1000);
  while (after - before > 1) {
    const middle = Math.floor((before + after) / 2);
    if (shopClockOffset(middle * 1000) === offset) before = middle;
    else after = middle;
  }
  const change = new Date(after * 1000);
  return isOpen(settings, change) ? change : new Date(change.getTime() + untilStart(change.getTime()));
}

/** Per-workspace call settings; a workspace without a row has the defaults. */
export class CallSettingsService {
  constructor(private readonly knex: Knex) {}

  async get(workspaceId: string, db: Knex | Knex.Transaction = this.knex): Promise<CallSettings> {
    const row = await db('call_settings').where({ workspace_id: workspaceId }).first();
    return toSettings(row ?? DEFAULT_SETTINGS);
  }

  async update(workspaceId: string, body: unknown): Promise<CallSettings> {
    const source = bodyFields(body);
    const data = parse(schema, {
      maxAttempts: camelOrSnake(source, 'maxAttempts', 'max_attempts'),
      retryIntervalMinutes: camelOrSnake(source, 'retryIntervalMinutes', 'retry_interval_minutes'),
      callingHours: camelOrSnake(source, 'callingHours', 'calling_hours'),
    });
    return this.knex.transaction(async (trx) => {
      const current = await this.get(workspaceId, trx);
      const row: Row = {
        max_attempts: data.maxAttempts ?? current.max_attempts,
        retry_interval_minutes: data.retryIntervalMinutes ?? current.retry_interval_minutes,
        hours_start: data.callingHours?.start ?? current.calling_hours.start,
        hours_end: data.callingHours?.end ?? current.calling_hours.end,
      };
      await trx('call_settings')
        .insert({ workspace_id: workspaceId, ...row })
        .onConflict('workspace_id')
        .merge();
      // Calls already waiting keep to the new hours: one that waited for the old opening is due from
      // now under the new hours; any other moves to the new hours' next opening if it falls outside them.
      await trx.raw(
        `UPDATE operations SET next_attempt_at = CASE
           WHEN next_attempt_at > now() AND to_char(next_attempt_at AT TIME ZONE ?, 'HH24:MI:SS') = ?
             THEN call_due_at(workspace_id, now())
           ELSE call_due_at(workspace_id, next_attempt_at) END
         WHERE workspace_id = ? AND status = 'pending'`,
        [CALLING_HOURS.timeZone, `${current.calling_hours.start}:00`, workspaceId],
      );
      const changed = (Object.keys(row) as Array<keyof Row>).filter((field) => String(row[field]) !== String(currentRow(current)[field]));
      if (changed.length > 0)
        await audit.record(trx, {
          workspaceId,
          action: 'settings_changed',
          target: { type: 'settings', id: null, label: 'calls' },
          details: {
            changed,
            max_attempts: row.max_attempts,
            retry_interval_minutes: row.retry_interval_minutes,
            hours: `${row.hours_start}–${row.hours_end}`,
          },
        });
      return toSettings(row);
    });
  }
}

/** The settings as their row holds them. */
function currentRow(settings: CallSettings): Row {
  return {
    max_attempts: settings.max_attempts,
    retry_interval_minutes: settings.retry_interval_minutes,
    hours_start: settings.calling_hours.start,
    hours_end: settings.calling_hours.end,
  };
}
