import crypto from 'node:crypto';

/**
 * Whether a secret someone gave (a verify token, a nonce, a signature) is ours, in constant time:
 * the one comparison of secrets in the service. `crypto.timingSafeEqual` throws on buffers of other
 * byte lengths, and a string's length in characters is not its length in bytes (`é` is two): the
 * byte lengths are compared first.
 */
export function sameSecret(given: string | Buffer | null | undefined, expected: string | Buffer): boolean {
  if (given === null || given === undefined) return false;
  const a = typeof given === 'string' ? Buffer.from(given, 'utf8') : given;
  const b = typeof expected === 'string' ? Buffer.from(expected, 'utf8') : expected;
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
