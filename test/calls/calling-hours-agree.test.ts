import { expect } from 'chai';
import type { CallSettings } from '../../services/calls';
import { callDueAtDefinition, isOpen, nextOpening, settingsFrom } from '../../services/calls';
import { SHOP_TIME_ZONE, shopWallClock } from '../../services/shared';
import { signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { functionText } from '../helpers/functions';

/**
 * Issue 54, must-hold 1: the calling hours are one rule. `nextOpening` (TypeScript) and `call_due_at`
 * (SQL, generated from the same table) give the same instant for every shape of settings and 10,000
 * instants each, half of them spread over fifteen years and half on the days Morocco moves its clock
 * (around Ramadan), where a local time is skipped or read twice.
 */

const INSTANTS_PER_SHAPE = 10_000;
const FROM = Date.UTC(2020, 0, 1);
const TO = Date.UTC(2035, 0, 1);
const HOUR = 3_600_000;

/** A seeded generator (mulberry32): the same instants on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The hours at which the shop's clock changes between FROM and TO, found hour by hour. */
function clockChanges(): number[] {
  const offsetAt = (t: number) => shopWallClock(t) - t;
  const changes: number[] = [];
  for (let t = FROM; t < TO; t += HOUR) if (offsetAt(t + HOUR) !== offsetAt(t)) changes.push(t);
  return changes;
}

function instants(random: () => number, changes: number[]): Date[] {
  const out: Date[] = [];
  for (let i = 0; i < INSTANTS_PER_SHAPE; i++) {
    if (i % 2 === 0) out.push(new Date(FROM + Math.floor(random() * (TO - FROM))));
    else {
      const change = changes[Math.floor(random() * changes.length)];
      // Within two days either side of the change, on a whole minute or not.
      const at = change - 48 * HOUR + Math.floor(random() * 96 * HOUR);
      out.push(new Date(random() < 0.3 ? at - (at % 60_000) : at));
    }
  }
  return out;
}

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/**
 * Every shape the settings can take: the hours are one window a day, the same every day, in the
 * shop's time zone, start before end (no overnight window, no closed day: the settings have neither).
 * The workspace without settings (the defaults), the edges of the day, windows opening or closing in
 * the hour the clock skips or repeats, and seeded random windows.
 */
function shapes(random: () => number): Array<{ label: string; hours: { start: string; end: string } | null }> {
  const fixed: Array<[string, string]> = [
    ['09:00', '21:00'],
    ['00:00', '24:00'],
    ['00:00', '00:01'],
    ['23:59', '24:00'],
    ['00:00', '23:59'],
    ['02:00', '03:00'],
    ['02:30', '04:00'],
    ['01:59', '02:01'],
    ['02:59', '03:01'],
    ['03:00', '23:00'],
    ['08:30', '12:15'],
    ['12:00', '12:01'],
  ];
  const randomWindows: Array<[string, string]> = [];
  while (randomWindows.length < 8) {
    const a = Math.floor(random() * 1441);
    const b = Math.floor(random() * 1441);
    if (a !== b) randomWindows.push([hhmm(Math.min(a, b)), hhmm(Math.max(a, b))]);
  }
  return [
    { label: 'no settings (the defaults)', hours: null },
    ...[...fixed, ...randomWindows].map(([start, end]) => ({ label: `${start}–${end}`, hours: { start, end } })),
  ];
}

describe('calling hours: nextOpening and call_due_at agree (issue 54)', function () {
  this.timeout(120_000);
  const random = seeded(54);
  const changes = clockChanges();
  let workspaceId: string;

  before(async () => {
    workspaceId = (await signUp()).workspaceId!;
  });

  it('finds the clock changes the instants gather around', () => {
    expect(SHOP_TIME_ZONE).to.equal('Africa/Casablanca');
    expect(changes.length, 'two a year around Ramadan').to.be.greaterThan(20);
  });

  it('the database runs the text generated from the calling hours’ table', async () => {
    expect(await functionText('call_due_at')).to.equal(callDueAtDefinition.trim());
  });

  for (const shape of shapes(random)) {
    const at = instants(random, changes);
    it(`${shape.label}: ${INSTANTS_PER_SHAPE.toLocaleString('en')} instants, the same next opening`, async () => {
      const row = shape.hours && { max_attempts: 3, retry_interval_minutes: 120, hours_start: shape.hours.start, hours_end: shape.hours.end };
      await testKnex()('call_settings').where({ workspace_id: workspaceId }).delete();
      if (row) await testKnex()('call_settings').insert({ workspace_id: workspaceId, ...row });
      const settings: CallSettings = settingsFrom(row);
      // The database works on its answers while TypeScript works on its own.
      const inDatabase = testKnex().raw<{ rows: Array<{ due: Date }> }>(
        'SELECT call_due_at(?::uuid, i.at) AS due FROM unnest(?::timestamptz[]) WITH ORDINALITY AS i(at, n) ORDER BY i.n',
        [workspaceId, at.map((t) => t.toISOString())],
      );
      const inTypeScript = at.map((t) => nextOpening(settings, t).toISOString());
      const { rows } = await inDatabase;
      expect(rows).to.have.length(at.length);
      const differ = at.map((t, i) => ({ at: t.toISOString(), ts: inTypeScript[i], sql: rows[i].due.toISOString() })).filter((d) => d.ts !== d.sql);
      expect(differ.slice(0, 5), `${differ.length} instants differ`).to.deep.equal([]);
      // And the answer is the first open instant: open, never before `at`, closed the second before.
      const wrong = at.filter((t, i) => {
        const due = rows[i].due;
        return due < t || !isOpen(settings, due) || (due > t && isOpen(settings, new Date(due.getTime() - 1000)));
      });
      expect(
        wrong.slice(0, 5).map((t) => t.toISOString()),
        `${wrong.length} answers are not the next opening`,
      ).to.deep.equal([]);
    });
  }
});
