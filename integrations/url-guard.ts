import ipaddr from 'ipaddr.js';
import { HostResolver } from './dns';

export interface UrlPolicy {
  /** Loopback and private addresses allowed (development and tests, or ALLOW_PRIVATE_URLS=true). */
  allowPrivateUrls: boolean;
  /** Only https is accepted in production. */
  httpsOnly: boolean;
  /** How hosts are resolved (DNS_SERVERS); the system's nameservers when not given. */
  resolver?: HostResolver;
}

/** Why the policy refuses an address: services turn it into a message with its code, on the field it came from. */
export type UrlRefusal = 'required' | 'tooLong' | 'notHttp' | 'httpsOnly' | 'credentials' | 'unresolved' | 'private';

/** An endpoint URL the policy refuses; `reason` says why (`max` for `tooLong`), the message in English. */
export class UrlRefusedError extends Error {
  constructor(
    readonly reason: UrlRefusal,
    message: string,
    readonly max?: number,
  ) {
    super(message);
    this.name = 'UrlRefusedError';
  }
}

const systemResolver = new HostResolver();

const MAX_URL_LENGTH = 2000;

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach it: IPv4-compatible (::a.b.c.d),
 * IPv4-mapped (::ffff:a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96 and the
 * local-use 64:ff9b:1::/48), 6to4 (2002:AABB:CCDD::/48). Null for any other IPv6 address.
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const ipv4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  if (zeros(0, 5) && (p[5] === 0 || p[5] === 0xffff)) return ipv4(p[6], p[7]);
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return ipv4(p[6], p[7]);
  if (p[0] === 0x64 && p[1] === 0xff9b) return ipv4(p[6], p[7]);
  if (p[0] === 0x2002) return ipv4(p[1], p[2]);
  return null;
}

/**
 * Only ordinary public unicast addresses; loopback, private, link-local, unique-local, multicast,
 * metadata… are not, and neither is an IPv6 address that embeds an IPv4 address that is not public.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
  return embedded ? embedded.range() === 'unicast' : parsed.range() === 'unicast';
}

/**
 * Checks an endpoint URL given by a user; throws a UrlRefusedError saying why not. Refuses hosts that
 * are or resolve to non-public addresses unless the policy allows them. The same rule is applied
 * again at connect time by the delivery agent, so a later DNS change cannot aim us inside the network.
 */
export async function checkEndpointUrl(value: unknown, policy: UrlPolicy): Promise<string> {
  const refuse = (reason: UrlRefusal, message: string): never => {
    throw new UrlRefusedError(reason, message, reason === 'tooLong' ? MAX_URL_LENGTH : undefined);
  };
  if (typeof value !== 'string' || value.trim() === '') return refuse('required', 'Endpoint URL is required');
  const text = value.trim();
  if (text.length > MAX_URL_LENGTH) refuse('tooLong', `Endpoint URL must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('notHttp', 'Endpoint URL must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') refuse('notHttp', 'Endpoint URL must be an absolute http or https URL');
  if (policy.httpsOnly && url.protocol !== 'https:') refuse('httpsOnly', 'Endpoint URL must use https');
  if (url.username || url.password) refuse('credentials', 'Endpoint URL must not contain a user name or password');
  if (!policy.allowPrivateUrls) {
    let addresses: string[];
    try {
      addresses = (await (policy.resolver ?? systemResolver).resolve(url.hostname)).map((a) => a.address);
    } catch {
      return refuse('unresolved', 'Endpoint URL host could not be resolved');
    }
    if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
      refuse('private', 'Endpoint URL must point to a public address (not loopback, private, link-local or metadata)');
    }
  }
  return url.toString();
}
