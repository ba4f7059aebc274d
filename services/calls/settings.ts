import type { Knex } from 'knex';
import { z } from 'zod';
import { msg, bodyFields, camelOrSnake, parse, SHOP_TIME_ZONE, shopWallClock } from '../../services/shared';
import { audit } from '../audit';

export interface CallSettings {
  max_attempts: number;
  retry_interval_minutes: number;
  calling_hours: { start: string; end: string };
  timezone: typeof SHOP_TIME_ZONE;
}

const DEFAULT_SETTINGS = { max_attempts: 3, retry_interval_minutes: 120, hours_start: '09:00', hours_end: '21:00' };

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
    timezone: SHOP_TIME_ZONE,
  };
}

/** Minutes since local midnight in Casablanca, and the UTC instant of that midnight. */
function localClock(at: Date): { minutes: number; midnight: Date } {
  const wall = shopWallClock(at);
  const minutes = Math.floor((wall % 86_400_000) / 60_000);
  const offset = wall - Math.floor(at.getTime() / 1000) * 1000;
  return { minutes, midnight: new Date(wall - (wall % 86_400_000) - offset) };
}

/** True when `at` falls inside the calling hours (start inclusive, end exclusive), Casablanca time. */
export function isOpen(settings: CallSettings, at: Date): boolean {
  const { minutes } = localClock(at);
  return minutes >= minutesOf(settings.calling_hours.start) && minutes < minutesOf(settings.calling_hours.end);
}

/** `at` itself when the hours are open then, else the next opening of the calling hours. */
export function nextOpening(settings: CallSettings, at: Date): Date {
  if (isOpen(settings, at)) return at;
  const { minutes, midnight } = localClock(at);
  const start = minutesOf(settings.calling_hours.start);
  const day = minutes < start ? midnight : localClock(new Date(midnight.getTime() + 36 * 3600_000)).midnight;
  // The offset can change across a day (Casablanca moves its clock around Ramadan): correct once.
  const guess = new Date(day.getTime() + start * 60_000);
  const drift = localClock(guess).minutes - start;
  return drift === 0 ? guess : new Date(guess.getTime() - drift * 60_000);
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
        [SHOP_TIME_ZONE, `${current.calling_hours.start}:00`, workspaceId],
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
