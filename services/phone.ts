import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';

/** Longer input is no phone number; refusing it early keeps the parser's work bounded. */
const MAX_PHONE_INPUT = 40;
/** Mobile numbers start with 6 or 7, fixed lines with 5; 8 (toll-free, premium) is not a customer. */
const MOROCCAN_NATIONAL = /^[5-7][0-9]{8}$/;

export const PHONE_HINT = 'Enter a valid Moroccan phone number, e.g. 06 12 34 56 78';

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
  .string({ error: (issue) => (issue.input === undefined ? 'Phone is required' : 'Phone must be text') })
  .trim()
  .min(1, 'Phone is required')
  .transform((value, ctx) => {
    const phone = normalizeMoroccanPhone(value);
    if (phone) return phone;
    ctx.issues.push({ code: 'custom', message: PHONE_HINT, input: value });
    return z.NEVER;
  });
