import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';
import { msg, plain } from './messages';

/** Longer input is no phone number; refusing it early keeps the parser's work bounded. */
const MAX_PHONE_INPUT = 40;
/** Mobile numbers start with 6 or 7, fixed lines with 5; 8 (toll-free, premium) is not a customer. */
const MOROCCAN_NATIONAL = /^[5-7][0-9]{8}$/;

/** Why a phone number is refused, with its code; `PHONE_HINT` is its English, as the API writes it. */
const PHONE_INVALID = msg('phoneInvalid');
export const PHONE_HINT = plain(PHONE_INVALID);

/**
 * A Moroccan number in any usual form (0612345678, 06 12 34 56 78, +212…, 00212…, 212…,
 * +212 (0)6…) as `+212` and nine digits; null when it is not a valid Moroccan mobile or fixed line.
 * The "max" metadata knows the allocated ranges; the default "min" one checks lengths only.
 */
export function normalizeMoroccanPhone(input: string): string | null {
  if (input.length > MAX_PHONE_INPUT) return null;
  const parsed = parsePhoneNumberFromString(input, { defaultCountry: 'MA', extract: false });
  if (!parsed || parsed.ext || parsed.country !== 'MA' || !parsed.isValid()) return null;
  if (!MOROCCAN_NATIONAL.test(parsed.nationalNumber)) return null;
  return parsed.number;
}

/** The `phone` field of a form or JSON body: required text that normalizes to `+212XXXXXXXXX`. */
export const moroccanPhone = z
  .string({ error: (issue) => (issue.input === undefined ? msg('required', { label: 'Phone' }) : msg('notText', { label: 'Phone' })) })
  .trim()
  .min(1, msg('required', { label: 'Phone' }))
  .transform((value, ctx) => {
    const phone = normalizeMoroccanPhone(value);
    if (phone) return phone;
    ctx.issues.push({ code: 'custom', message: PHONE_INVALID, input: value });
    return z.NEVER;
  });
