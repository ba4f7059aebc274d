import type { Language } from './languages';

/**
 * The `Intl` locale of each language's numbers, as shop staff in Morocco write them: digits are
 * Western (0–9) in all three. French is plain `fr`, not `fr-MA`: ICU's `fr-MA` groups thousands
 * with a dot ("20.000", "1.250,00 MAD"), where a Moroccan shop writes "20 000" and "1 250,00", as
 * `fr` does (a narrow no-break space between groups, a no-break space before the currency).
 * Arabic is `ar-MA`, whose digits are the Western ones every other number of the page uses.
 */
const NUMBER_LOCALE: Record<Language, string> = { en: 'en-MA', fr: 'fr', ar: 'ar-MA' };

const FORMATS = new Map<string, Intl.NumberFormat>();
/** One formatter per language and options, made on first use (they hold no state). */
function numberFormat(lang: Language, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${lang}:${JSON.stringify(options)}`;
  let format = FORMATS.get(key);
  if (!format) {
    format = new Intl.NumberFormat(NUMBER_LOCALE[lang], { numberingSystem: 'latn', ...options });
    FORMATS.set(key, format);
  }
  return format;
}

/** A count or a plain figure: "20 000" (fr), "20,000" (en), "20.000" (ar); at most two decimals. */
export function formatNumber(n: number, lang: Language): string {
  return numberFormat(lang, { maximumFractionDigits: 2 }).format(n);
}

/** An amount with its currency (any ISO 4217 code, with that currency's decimals): "1 250,00 MAD" in French. */
export function formatAmount(n: number | string, lang: Language, currency = 'MAD'): string {
  return numberFormat(lang, { style: 'currency', currency }).format(Number(n));
}

/** A sum whose currency is said elsewhere (a heading): two decimals, "1 250,00". */
export function formatMoney(n: number | string, lang: Language): string {
  return numberFormat(lang, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(Number(n));
}

/** A rate as a percentage: "61 %" in French. */
export function formatPercent(rate: number, lang: Language): string {
  return numberFormat(lang, { style: 'percent', maximumFractionDigits: 0 }).format(rate);
}

/**
 * A stored decimal ("249.00", "89.350": as the API writes an amount, with its currency's decimals)
 * as a person types it in the page's language: "249,00", "1 250,00" in French. What an amount field
 * shows; the forms read it back (`parseAmount` takes every group separator these write). A form
 * reads three digits after a separator as thousands ("1,250"), so zeros past the second decimal
 * are left out: "89.350" shows "89,35". A value that is not a plain decimal is returned as it is.
 */
export function formatDecimal(value: string, lang: Language): string {
  const m = /^-?\d+(?:\.(\d+))?$/.exec(value.trim());
  if (!m) return value;
  const decimals = Math.max(Math.min(m[1]?.length ?? 0, 2), (m[1] ?? '').replace(/0+$/, '').length);
  return numberFormat(lang, { minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(Number(value));
}
