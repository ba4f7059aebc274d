import { MOROCCAN_CITIES } from './city-names';

/** A city (or district) of a carrier's list, as its adapter reads it. */
export interface CarrierCity {
  id: string;
  name: string;
  arabicName?: string | null;
}

/** How an order's written city became a carrier's city, or why it did not. */
export type CityMatch = { matched: true; city: CarrierCity; by: 'remembered' | 'exact' | 'known' } | { matched: false; candidates: CarrierCity[] };

/**
 * A written city as we compare it: case, accents (French é, Arabic harakat and tatweel), the forms of
 * alef, final yaa and taa marbuta, hyphens, apostrophes, dots and spaces aside. `Fès`, ` FES `,
 * `Fe-s` are one key; `الدار البيضاء` and `الدارالبيضاء` too. Nothing else is forgiven: a letter
 * more or less is another word.
 */
export function cityKey(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/\u0640/g, '')
    .replace(/[أإآٱ]/g, 'ا')
    .replace(/ى/g, 'ي')
    .replace(/ة/g, 'ه')
    .replace(/گ/g, 'ك')
    .toLowerCase()
    .replace(/[\s\-'’‘`´.,_/()]+/g, '');
}

/** Each spelling's key → the city's row in the table (its index). */
const KNOWN = new Map<string, number>(MOROCCAN_CITIES.flatMap((spellings, i) => spellings.map((spelling) => [cityKey(spelling), i] as const)));

/** The row of the built-in table a written city is one of the spellings of, if any. */
export function knownCity(written: string): number | undefined {
  return KNOWN.get(cityKey(written));
}

function keysOf(city: CarrierCity): string[] {
  return [city.name, city.arabicName ?? ''].map(cityKey).filter((key) => key !== '');
}

/** One candidate is a match; two or none are a choice for a person. */
function one(candidates: CarrierCity[], by: 'exact' | 'known'): CityMatch | undefined {
  const distinct = [...new Map(candidates.map((city) => [city.id, city])).values()];
  if (distinct.length === 1) return { matched: true, city: distinct[0], by };
  if (distinct.length > 1) return { matched: false, candidates: distinct };
  return undefined;
}

/**
 * Matches an order's written city to a carrier's list, never by guess, in this order:
 * 1. the shop's remembered choice for that written city (`remembered`: key → the carrier's city id);
 * 2. the carrier's cities whose name or Arabic name has the same key;
 * 3. the carrier's cities that are spellings of the same city of the built-in table (`Casa` finds
 *    `Casablanca`, `فاس` finds `Fes`).
 * One city at a step is the match; two are a choice (the candidates); none goes to the next step,
 * and none at the end is a choice among the whole list (no candidates named).
 */
export function matchCity(written: string | null | undefined, cities: readonly CarrierCity[], remembered?: ReadonlyMap<string, string>): CityMatch {
  const key = cityKey(written ?? '');
  if (key === '') return { matched: false, candidates: [] };
  const choice = remembered?.get(key);
  const chosen = choice === undefined ? undefined : cities.find((city) => city.id === choice);
  if (chosen) return { matched: true, city: chosen, by: 'remembered' };
  const exact = one(
    cities.filter((city) => keysOf(city).includes(key)),
    'exact',
  );
  if (exact) return exact;
  const row = KNOWN.get(key);
  if (row === undefined) return { matched: false, candidates: [] };
  const known = one(
    cities.filter((city) => keysOf(city).some((cityKeyOf) => KNOWN.get(cityKeyOf) === row)),
    'known',
  );
  return known ?? { matched: false, candidates: [] };
}
