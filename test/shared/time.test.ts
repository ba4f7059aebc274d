import { expect } from 'chai';
import { shopDay, shopWallClock, wallClockByParts as byParts } from '../../services/shared';

/** A seeded generator (mulberry32): the same instants on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("Morocco's wall clock (shopWallClock)", () => {
  it('reads what the clock reads part by part: every 7 seconds around each clock change of 2018–2030, and 20,000 seeded instants of 1900–2090', () => {
    const wrong: string[] = [];
    const check = (at: number) => {
      for (const given of [at, new Date(at)]) {
        if (shopWallClock(given) !== byParts(at)) wrong.push(new Date(at).toISOString());
      }
    };
    // Each change of the offset in those years, found hour by hour, then every 7 seconds of the three hours around it.
    const offset = (at: number) => byParts(at) - at;
    let changes = 0;
    for (let day = Date.UTC(2018, 0, 1); day < Date.UTC(2031, 0, 1); day += 86_400_000) {
      if (offset(day + 86_400_000) === offset(day)) continue;
      for (let hour = day; hour < day + 86_400_000; hour += 3_600_000) {
        if (offset(hour + 3_600_000) === offset(hour)) continue;
        changes += 1;
        for (let at = hour - 3_600_000; at <= hour + 2 * 3_600_000; at += 7000) check(at);
      }
    }
    const random = seeded(57);
    for (let i = 0; i < 20_000; i += 1) {
      // Whole and fractional milliseconds, before and after 1970.
      const at = Date.UTC(1900, 0, 1) + random() * (Date.UTC(2090, 0, 1) - Date.UTC(1900, 0, 1));
      check(i % 2 === 0 ? Math.floor(at) : at);
    }
    expect(changes, 'clock changes found (Ramadan, and the hour of 2018)').to.be.greaterThan(20);
    expect(wrong.slice(0, 5)).to.deep.equal([]);
  });

  it('refuses what is not an instant as the clock did, and shopDay reads the same day', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) {
      expect(() => byParts(bad)).to.throw(RangeError);
      expect(() => shopWallClock(bad)).to.throw(RangeError);
    }
    // 23:30 UTC on 31 December 2025 is already 1 January in Morocco (UTC+1).
    expect(shopDay(new Date('2025-12-31T23:30:00Z'))).to.equal('2026-01-01');
  });
});
