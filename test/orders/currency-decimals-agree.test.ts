import { expect } from 'chai';
import { currencyMinorUnitsDefinition, MINOR_UNITS, minorUnits } from '../../services/orders';
import { testKnex } from '../helpers/db';
import { functionText } from '../helpers/functions';

/**
 * Issue 54, must-hold 1: a currency's decimals are one table (MINOR_UNITS). The API's amounts read
 * it in TypeScript; webhook_order's read `currency_minor_units`, generated from it.
 */
describe('currency decimals: MINOR_UNITS and currency_minor_units agree (issue 54)', () => {
  it('the database runs the text generated from the table', async () => {
    expect(await functionText('currency_minor_units')).to.equal(currencyMinorUnitsDefinition.trim());
  });

  it('every currency of the table, the usual ones and an unknown code: the same decimals on both sides', async () => {
    const codes = [...Object.keys(MINOR_UNITS), 'MAD', 'EUR', 'USD', 'XYZ', ''];
    const { rows } = await testKnex().raw<{ rows: Array<{ code: string; units: number }> }>(
      'SELECT c.code, currency_minor_units(c.code) AS units FROM unnest(?::text[]) AS c(code)',
      [codes],
    );
    expect(Object.fromEntries(rows.map((r) => [r.code, r.units]))).to.deep.equal(Object.fromEntries(codes.map((code) => [code, minorUnits(code)])));
    expect(Object.values(MINOR_UNITS)).to.include.members([0, 3]);
  });
});
