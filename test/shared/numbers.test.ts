import { expect } from 'chai';
import { createI18n } from '../../routes/middleware/i18n';
import { localeHelpers } from '../../routes/pages/view-helpers';
import { formatAmount, formatDecimal, formatMoney, formatNumber, formatPercent, parseAmount } from '../../services/shared';

/** U+202F, French's group separator; U+00A0, before a currency. */
const NNBSP = '\u202f';
const NBSP = '\u00a0';

describe('numbers as the staff write them (services/shared/numbers.ts; issue 53, defect 7)', () => {
  it('counts: "20 000" in French, "20,000" in English, Western digits in Arabic', () => {
    expect(formatNumber(20_000, 'fr')).to.equal(`20${NNBSP}000`);
    expect(formatNumber(1_250_000, 'fr')).to.equal(`1${NNBSP}250${NNBSP}000`);
    expect(formatNumber(3.5, 'fr')).to.equal('3,5');
    expect(formatNumber(999, 'fr')).to.equal('999');
    expect(formatNumber(20_000, 'en')).to.equal('20,000');
    expect(formatNumber(20_000, 'ar')).to.equal('20.000');
    expect(formatNumber(1_234_567.5, 'ar')).to.match(/^[0-9.,]+$/);
    expect(formatPercent(0.61, 'fr')).to.equal(`61${NBSP}%`);
  });

  it('amounts: "1 250,00 MAD" in French, with the currency’s own decimals; Western digits in Arabic', () => {
    expect(formatAmount(1250, 'fr')).to.equal(`1${NNBSP}250,00${NBSP}MAD`);
    expect(formatAmount('249.00', 'fr')).to.equal(`249,00${NBSP}MAD`);
    expect(formatAmount('89.350', 'fr', 'TND')).to.equal(`89,350${NBSP}TND`);
    expect(formatAmount('1250', 'en')).to.equal(`MAD${NBSP}1,250.00`);
    expect(formatAmount('1250', 'ar')).to.contain('1.250,00').and.contain('د.م.').and.not.match(/[٠-٩]/);
    expect(formatMoney('1250.5', 'fr')).to.equal(`1${NNBSP}250,50`);
  });

  it('an amount field shows the stored amount as it is typed, and the forms read that back to the same amount', () => {
    const cases: Array<[string, Record<'en' | 'fr' | 'ar', string>]> = [
      ['249.00', { en: '249.00', fr: '249,00', ar: '249,00' }],
      ['1250.00', { en: '1,250.00', fr: `1${NNBSP}250,00`, ar: '1.250,00' }],
      // Three decimals (TND) whose last is a zero: two, or a form would read "89,350" as 89350.
      ['89.350', { en: '89.35', fr: '89,35', ar: '89,35' }],
      ['20000', { en: '20,000', fr: `20${NNBSP}000`, ar: '20.000' }],
    ];
    for (const [stored, shown] of cases) {
      for (const lang of ['en', 'fr', 'ar'] as const) {
        expect(formatDecimal(stored, lang), `${stored} ${lang}`).to.equal(shown[lang]);
        expect(Number(parseAmount(formatDecimal(stored, lang))), `${stored} ${lang} read back`).to.equal(Number(stored));
      }
    }
    expect(formatDecimal('not a number', 'fr')).to.equal('not a number');
  });

  it('a page’s helpers and a plural’s count use the same formats: "20 000 commandes"', () => {
    const i18n = createI18n();
    const fr = localeHelpers('fr', i18n.getFixedT('fr'));
    expect(fr.formatNumber(20_000)).to.equal(`20${NNBSP}000`);
    expect(fr.formatAmount(1250)).to.equal(`1${NNBSP}250,00${NBSP}MAD`);
    expect(fr.formatDecimal('249.00')).to.equal('249,00');
    expect(i18n.getFixedT('fr')('orders.captionAll', { count: 20_000 })).to.match(new RegExp(`^20${NNBSP}000 commandes`));
    expect(i18n.getFixedT('en')('orders.captionAll', { count: 20_000 })).to.match(/^20,000 orders/);
    expect(i18n.getFixedT('ar')('orders.captionAll', { count: 20_000 })).to.match(/^20\.000 /);
    // A value that is not a count is left as it is given.
    expect(i18n.getFixedT('fr')('importFile.fileHint', { rows: 20000 })).to.contain('20000 commandes');
  });
});
