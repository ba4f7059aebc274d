import dns from 'node:dns';
import net from 'node:net';

/**
 * The longest a name of an agent or endpoint may take to resolve, every try included. c-ares
 * doubles its time-out between tries, so the deadline is ours, not its.
 */
export const DNS_TIMEOUT_MS = 3000;
/** c-ares alone: the first try waits 1 s, the second 2 s (then our deadline has passed anyway). */
const RESOLVER_OPTIONS = { timeout: 1000, tries: 2 };

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A failed lookup, told in words a member may read: it never carries an address. */
export class LookupError extends Error {
  constructor(
    readonly code: 'ETIMEOUT' | 'ENOTFOUND' | 'EDNSFAIL',
    message: string,
  ) {
    super(message);
    this.name = 'LookupError';
  }
}

const LOOPBACK: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * Resolves the hostnames we send to with c-ares (`dns.promises.Resolver`), which waits on sockets,
 * not on one of libuv's four threads as `dns.lookup`'s getaddrinfo does: a nameserver that never
 * answers costs a timer, never another tenant's delivery or a bcrypt hash. `/etc/hosts` is not read;
 * `localhost` and IP literals are answered without a query.
 */
export class HostResolver {
  private readonly resolver = new dns.promises.Resolver(RESOLVER_OPTIONS);

  /** `servers`: `ip` or `ip:port` entries (DNS_SERVERS); the system's nameservers by default. */
  constructor(servers: readonly string[] = dns.getServers()) {
    this.resolver.setServers(servers);
  }

  /** IPv4 addresses first; throws a LookupError. `family` 0 asks for both. */
  async resolve(hostname: string, family: number = 0): Promise<ResolvedAddress[]> {
    const host = hostname.replace(/^\[|\]$/g, '');
    const literal = net.isIP(host);
    if (literal === 4 || literal === 6) return [{ address: host, family: literal }];
    const wanted = (f: 4 | 6) => family !== (f === 4 ? 6 : 4);
    if (/^(.+\.)?localhost\.?$/i.test(host)) return LOOPBACK.filter((a) => wanted(a.family));

    const found: ResolvedAddress[] = [];
    const failures: string[] = [];
    const query = (f: 4 | 6) =>
      (f === 4 ? this.resolver.resolve4(host) : this.resolver.resolve6(host)).then(
        (addresses) => void found.push(...addresses.map((address) => ({ address, family: f }))),
        (err: NodeJS.ErrnoException) => void failures.push(err.code ?? ''),
      );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, DNS_TIMEOUT_MS, 'late')));
    const outcome = await Promise.race([Promise.all(([4, 6] as const).filter(wanted).map(query)), deadline]);
    clearTimeout(timer);
    // At the deadline, what has come in is used (an AAAA query lost on the way does not hide the A answer).
    if (found.length > 0) return found.sort((a, b) => a.family - b.family);
    if (outcome === 'late' || failures.includes(dns.TIMEOUT)) throw new LookupError('ETIMEOUT', 'DNS lookup timed out');
    if (failures.every((code) => code === dns.NOTFOUND || code === dns.NODATA)) throw new LookupError('ENOTFOUND', 'host not found');
    throw new LookupError('EDNSFAIL', 'DNS lookup failed');
  }

  /**
   * The `lookup` of `net.connect` (and so of http agents): with `all` (Node 20 asks for every
   * address when it tries both families) the list, otherwise the first address.
   */
  readonly lookup: net.LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname, options.family === 'IPv6' ? 6 : options.family === 'IPv4' ? 4 : Number(options.family ?? 0)).then(
      (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family)),
      (err: LookupError) => callback(err, ''),
    );
  };
}
