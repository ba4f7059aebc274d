import { MINOR_UNITS, USUAL_MINOR_UNITS } from '../model';

/**
 * `currency_minor_units(currency)`: how many decimals webhook_order gives a currency's amounts, from
 * the same table as the API's amounts (MINOR_UNITS). The text is what `pg_get_functiondef` shows.
 */
const unitsNamed = [...new Set(Object.values(MINOR_UNITS))];
const codesWith = (units: number) =>
  Object.keys(MINOR_UNITS)
    .filter((code) => MINOR_UNITS[code] === units)
    .map((code) => `'${code}'`)
    .join(', ');
const cases = unitsNamed.map((units) => `WHEN currency IN (${codesWith(units)}) THEN ${units}`).join(' ');

export const definition = `CREATE OR REPLACE FUNCTION public.currency_minor_units(currency text)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT CASE ${cases} ELSE ${USUAL_MINOR_UNITS} END $function$`;
