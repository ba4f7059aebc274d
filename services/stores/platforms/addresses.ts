import { z } from 'zod';
import { msg, ValidationError } from '../../../services/shared';

/** A site's address (a WooCommerce shop, a custom sender's site), as the platforms that take one check it. */

/** A site's address as a manual connection's `shop` (the kinds that name no address of their own take this one). */
export const siteUrl = z
  .string({ error: msg('notText', { label: 'shop' }) })
  .trim()
  .max(300, msg('tooLong', { label: 'shop', max: 300 }))
  .pipe(z.url({ protocol: /^https?$/, error: msg('siteAddress', { label: 'shop' }) }))
  // Every member sees the address: a user name or password in it would be shown to all.
  .refine(
    (url) => {
      const parsed = new URL(url);
      return parsed.username === '' && parsed.password === '';
    },
    msg('shopCredentials', { label: 'shop' }),
  )
  .transform((url) => url.replace(/\/+$/, ''));

/** A site's address as the one-click form gives it (https in production: the keys travel to it). */
export function siteOf(given: string | undefined, isProduction: boolean): string {
  let url: URL;
  try {
    url = new URL((given ?? '').trim());
  } catch {
    throw new ValidationError({ shop: msg('siteAddress', { label: 'shop' }) });
  }
  if (url.protocol !== 'https:' && (isProduction || url.protocol !== 'http:')) throw new ValidationError({ shop: msg('siteHttps', { label: 'shop' }) });
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
