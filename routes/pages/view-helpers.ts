import type { OrderStatus, OrderFlag } from '../../services/orders';
import type { Outcome } from '../../services/calls';
import type { TFunction } from 'i18next';
import {
  LANGUAGES,
  decode,
  messageKey,
  fromShopWallClock,
  SHOP_TIME_ZONE,
  shopWallClock,
  formatAmount,
  formatDecimal,
  formatMoney,
  formatNumber,
  formatPercent,
} from '../../services/shared';
import type { Coded, Language } from '../../services/shared';
import { elide } from '../middleware/i18n';

/**
 * The `Intl` locale of each language's dates: Moroccan French and Arabic, whose `ar-MA` writes Western
 * digits (0–9) as Morocco does. English dates use `en-GB`'s day-month order: `en-MA` in ICU writes
 * "Nov 22, 2026", an order nobody in Morocco writes. Numbers have their own (services/shared/numbers.ts).
 */
const DATE_LOCALE: Record<Language, string> = { en: 'en-GB', fr: 'fr-MA', ar: 'ar-MA' };

/** The formatters of one language, built once (they hold no request state). */
function formattersOf(lang: Language) {
  const locale = { date: DATE_LOCALE[lang] };
  return {
    /** Shop staff are in Morocco: dates are shown in Morocco's time, e.g. "22 Nov 2026, 01:22". */
    date: new Intl.DateTimeFormat(locale.date, {
      timeZone: SHOP_TIME_ZONE,
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }),
    /** A calendar day ("2026-11-22", no time zone of its own) in the same form as `date`, without the time. */
    day: new Intl.DateTimeFormat(locale.date, { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric' }),
  };
}
const FORMATTERS = Object.fromEntries(LANGUAGES.map((lang) => [lang, formattersOf(lang)])) as Record<Language, ReturnType<typeof formattersOf>>;

/** "22 Nov 2026, 01:22" in English: for messages built outside a template (dates in Morocco time). */
export function formatDate(iso: string | null | undefined, lang: Language = 'en'): string {
  return iso ? FORMATTERS[lang].date.format(new Date(iso)) : '';
}

/** A calendar day ("2026-11-22") as pages write dates, without the time: "22 Nov 2026". */
function formatDay(day: string, lang: Language = 'en'): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(day) ? FORMATTERS[lang].day.format(new Date(`${day}T00:00:00Z`)) : day;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/**
 * A phone number as people read it: a Moroccan one (`+212612345678`) in its national form grouped
 * in pairs, `06 12 34 56 78`; any other as stored. Shown left to right in every language.
 */
export function groupedPhone(phone: string): string {
  const national = /^\+212(\d{9})$/.exec(phone)?.[1];
  return national ? `0${national}`.replace(/(\d{2})(?=\d)/g, '$1 ') : phone;
}

/** Placeholders of a message that hold what a person typed (a file's column names) or a far end wrote (a webhook endpoint's answer): isolated on a page. */
const TYPED_VALUES = ['names', 'first', 'second', 'answer'];

/**
 * A message in the page's language, by the code it carries (services/shared/messages): a service's words
 * never reach a page by their English text, so rewording one cannot drop its French or Arabic. A
 * text without a code is one the page made itself (already in its language) and is shown as it is.
 */
export function translateMessage(t: TFunction, message: string, isolate: (text: string) => string = (text) => text): string {
  const coded = decode(message);
  return coded ? codedText(t, coded, isolate) : message;
}

/**
 * A message by its code (services/shared/messages), in the page's language: a `label` is a field's name
 * and is translated too, and so is an order's `status`; typed values go through `isolate`.
 */
function codedText(t: TFunction, { code, params }: Coded, isolate: (text: string) => string): string {
  const values: Record<string, string | number> = { ...params };
  // A value that is a message itself (a write-back's reason) is written in the page's language too.
  for (const [name, value] of Object.entries(values)) {
    const inner = typeof value === 'string' ? decode(value) : null;
    if (inner) values[name] = codedText(t, inner, isolate);
  }
  // A plural field's name takes a plural verb ("Les produits sont obligatoires"): the message's `_pl` form where it has one.
  const key = messageKey({ code, params });
  if (typeof values.label === 'string') values.label = t(`fieldLabel.${values.label}`, { defaultValue: values.label });
  if (typeof values.status === 'string') values.status = t(`status.${values.status}`, { defaultValue: values.status });
  for (const name of TYPED_VALUES) if (typeof values[name] === 'string') values[name] = isolate(values[name]);
  return t(`messages.${key}`, values);
}

/**
 * The helpers of one page in its language: dates, numbers and amounts from `Intl`, durations,
 * statuses, flags and call outcomes from the catalogue. Built per request from the request's own `t`.
 */
export function localeHelpers(lang: Language, t: TFunction) {
  /** Typed text inside a plain-text sentence (an attribute, a title): a first-strong isolate, as `<bdi>` is in HTML. */
  const isolate = (text: string) => (lang === 'en' ? text : `\u2068${text}\u2069`);
  return {
    formatDate: (iso: string | null | undefined) => formatDate(iso, lang),
    /** A calendar day, "2026-11-22", as every page writes dates: "22 Nov 2026". */
    formatDay: (day: string) => formatDay(day, lang),
    /** Numbers as the staff write them (services/shared/numbers.ts): "20 000", "1 250,00 MAD" in French. */
    formatNumber: (n: number) => formatNumber(n, lang),
    /** An amount in its currency (MAD unless said otherwise). */
    formatAmount: (n: number | string, currency = 'MAD') => formatAmount(n, lang, currency),
    /** A sum whose currency the heading names (the statistics' confirmed amounts, in MAD). */
    formatMoney: (n: number | string) => formatMoney(n, lang),
    /** A rate as the statistics show it: a percentage, or a dash when there is nothing to divide (null). */
    formatRate: (rate: number | null) => (rate === null ? '—' : formatPercent(rate, lang)),
    /** A stored amount ("249.00") as an amount field shows it: "249,00" in French. */
    formatDecimal: (value: string) => formatDecimal(value, lang),
    formatDuration: (seconds: number | null) =>
      seconds === null ? '' : seconds < 60 ? t('common.seconds', { s: seconds }) : t('common.minutesSeconds', { m: Math.floor(seconds / 60), s: seconds % 60 }),
    statusLabel: (status: OrderStatus) => t(`status.${status}`),
    flagLabel: (flag: OrderFlag) => t(`flag.${flag}`),
    outcomeLabel: (outcome: Outcome) => t(`outcome.${outcome}`),
    message: (text: string) => translateMessage(t, text, isolate),
    groupedPhone,
    /** A phone number or an amount inside a sentence: a left-to-right isolate on right-to-left pages. */
    ltr: (text: string) => (lang === 'ar' ? `\u2066${text}\u2069` : text),
    isolate,
    /**
     * A translation with data in it, as HTML (print with `<%- %>`): the text escaped, each value in its
     * own `<bdi>`; given as `{ strong }`, a name to look for on another screen (a menu, a button), in
     * bold and isolated; given as `{ html }`, a piece the template already rendered (a badge); given
     * as `{ ltr }`, a phone number or an amount, isolated left to right whatever the page's direction.
     */
    tData: (key: string, values: Record<string, string | number | { html: string } | { strong: string } | { ltr: string }>) => {
      const names = Object.keys(values);
      const marks = Object.fromEntries(names.map((name, i) => [name, `\u27e6${i}\u27e7`]));
      const text = escapeHtml(t(key, { ...values, ...marks }));
      const html = text.replace(/\u27e6(\d+)\u27e7/g, (_, i) => {
        const value = values[names[Number(i)]];
        if (typeof value !== 'object') return `<bdi>${escapeHtml(String(value))}</bdi>`;
        if ('ltr' in value) return `<bdi dir="ltr">${escapeHtml(value.ltr)}</bdi>`;
        return 'html' in value ? value.html : `<strong><bdi>${escapeHtml(value.strong)}</bdi></strong>`;
      });
      return lang === 'fr' ? elide(html) : html;
    },
  };
}

/** An instant as a `datetime-local` value in Morocco time: "2026-11-22T19:30". */
export function moroccoLocal(at: Date): string {
  return new Date(shopWallClock(at)).toISOString().slice(0, 16);
}

/**
 * A `datetime-local` value typed in Morocco time ("2026-11-22T19:30") as a UTC ISO instant, or null
 * when it is not such a value. Casablanca's offset changes around Ramadan, so it is read at the instant itself.
 */
export function moroccoLocalToIso(value: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::\d{2})?$/.exec(value.trim());
  if (!m) return null;
  const asUtc = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]));
  if (Number.isNaN(asUtc) || new Date(asUtc).getUTCDate() !== Number(m[3])) return null;
  return new Date(fromShopWallClock(asUtc)).toISOString();
}

/** Helpers every template may use whatever its language; none of them reads the request. */
export const viewHelpers = { SHOP_TIME_ZONE };
