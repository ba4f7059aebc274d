import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { HostResolver, LookupError } from './dns';
import { signedHeaders } from './signing';
import { isPublicAddress } from './url-guard';

const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of an answer we read: enough to log, never a large body. */
const MAX_RESPONSE_BYTES = 4096;

export interface DeliveryResult {
  delivered: boolean;
  status: number | null;
  /** Why it was not delivered (status, time-out, refused connection, blocked address…), never naming an address. */
  error: string | null;
  /** The same reason as a kind and its value (a status, a TLS error's code), for a page to say in its language. */
  failure: Failure | null;
  body: string;
  durationMs: number;
}

/** Why a request was not delivered, in fixed English words (`{{value}}` put in): the service's words, never the far end's. */
const FAILURE_WORDS = {
  invalidUrl: 'invalid URL',
  timedOut: 'timed out',
  connectionRefused: 'connection refused',
  connectionClosed: 'connection closed',
  connectionFailed: 'connection failed',
  hostUnreachable: 'host unreachable',
  addressNotAllowed: 'address not allowed',
  dnsTimedOut: 'DNS lookup timed out',
  hostNotFound: 'host not found',
  dnsFailed: 'DNS lookup failed',
  tlsError: 'TLS error ({{value}})',
  redirect: 'redirect {{value}} not followed',
  httpStatus: 'HTTP {{value}}',
} as const;
export type FailureKind = keyof typeof FAILURE_WORDS;
interface Failure {
  kind: FailureKind;
  value?: string;
}

/** A failure's English words, as `last_error` and the logs keep them. */
function failureWords({ kind, value }: Failure): string {
  return FAILURE_WORDS[kind].replace('{{value}}', value ?? '');
}

/** A request to someone else's API; `headers` may carry credentials, which never reach a result or a log. */
export interface OutboundRequest {
  method: 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A call of someone's API that reads its answer whole (a carrier's city list, a label PDF), up to `maxBytes`. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  maxBytes: number;
}

/** Its answer: `status` null when none came (`failure` says why, in the service's words). */
export interface ApiAnswer {
  status: number | null;
  headers: Record<string, string>;
  body: Buffer;
  failure: string | null;
}

export interface SignedMessage {
  url: string;
  secret: string;
  messageId: string;
  body: string;
}

/** A lookup that fails, as request-filtering-agent's refusal reads, when a name resolves to an address that is not public. */
function publicOnly(lookup: net.LookupFunction): net.LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err, '');
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const refused = addresses.find((a) => !isPublicAddress(a));
      if (refused !== undefined) return callback(new Error(`DNS lookup ${refused} is not allowed`), '');
      callback(null, address as string, family);
    });
  };
}

/**
 * The one place that sends signed HTTP to the outside (voice agents, webhook endpoints): Standard
 * Webhooks headers, a 10 s time-out, no redirects (a 3xx is a failure), at most a few kB of the
 * answer read, names resolved by `resolver` (a time-out, off libuv's thread pool), and — unless
 * private addresses are allowed — an agent that checks each resolved address at connect time.
 * 2xx is delivered; anything else is for the caller to retry. Stores' APIs (write-back) go through
 * the same door with their own headers.
 */
export class SignedSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    allowPrivateUrls: boolean,
    private readonly timeoutMs = DELIVERY_TIMEOUT_MS,
    resolver = new HostResolver(),
  ) {
    // The filtering agents call this lookup in place of dns.lookup and still check what it returns.
    // Our own rule first (it also knows the IPv6 forms that embed an IPv4 address), then the agent's.
    const lookup = allowPrivateUrls ? resolver.lookup : publicOnly(resolver.lookup);
    const filter = { allowPrivateIPAddress: allowPrivateUrls, allowMetaIPAddress: false, keepAlive: true, maxSockets: 50, lookup };
    this.httpAgent = new RequestFilteringHttpAgent(filter);
    this.httpsAgent = new RequestFilteringHttpsAgent(filter);
  }

  send(message: SignedMessage): Promise<DeliveryResult> {
    return this.request({
      method: 'POST',
      url: message.url,
      headers: { 'content-type': 'application/json', ...signedHeaders(message.secret, message.messageId, message.body) },
      body: message.body,
    });
  }

  /** Any request (a store's API), with the same time-out, guard and reading of the answer; 2xx is delivered. */
  request(outbound: OutboundRequest): Promise<DeliveryResult> {
    const started = Date.now();
    const result = (delivered: boolean, status: number | null, failure: Failure | null, body = ''): DeliveryResult => ({
      delivered,
      status,
      error: failure && failureWords(failure),
      failure,
      body,
      durationMs: Date.now() - started,
    });
    return new Promise((resolve) => {
      let url: URL;
      try {
        url = new URL(outbound.url);
      } catch {
        resolve(result(false, null, { kind: 'invalidUrl' }));
        return;
      }
      const client = url.protocol === 'https:' ? https : http;
      const headers = {
        ...outbound.headers,
        'content-length': Buffer.byteLength(outbound.body),
        'user-agent': 'order-confirmation-service',
      };
      const req = client.request(url, {
        method: outbound.method,
        headers,
        agent: url.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        timeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => resolve(result(false, null, failureReason(err))));
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < MAX_RESPONSE_BYTES) body += chunk.slice(0, MAX_RESPONSE_BYTES - body.length);
          else res.destroy();
        });
        const done = () => {
          const ok = status >= 200 && status < 300;
          const value = String(status);
          resolve(result(ok, status, ok ? null : status >= 300 && status < 400 ? { kind: 'redirect', value } : { kind: 'httpStatus', value }, body));
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      });
      req.end(outbound.body);
    });
  }

  /**
   * A call through the same guard and time-out whose answer is read whole, bytes and headers, up to
   * `maxBytes` (past it: no answer, "answer over N bytes"). Any status is an answer: the caller reads it.
   */
  call(outbound: ApiRequest): Promise<ApiAnswer> {
    const none = (failure: Failure | string): ApiAnswer => ({
      status: null,
      headers: {},
      body: Buffer.alloc(0),
      failure: typeof failure === 'string' ? failure : failureWords(failure),
    });
    return new Promise((resolve) => {
      let url: URL;
      try {
        url = new URL(outbound.url);
      } catch {
        resolve(none({ kind: 'invalidUrl' }));
        return;
      }
      const client = url.protocol === 'https:' ? https : http;
      const body = outbound.body ?? '';
      const req = client.request(url, {
        method: outbound.method,
        headers: { ...outbound.headers, 'content-length': Buffer.byteLength(body), 'user-agent': 'order-confirmation-service' },
        agent: url.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        timeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => resolve(none(failureReason(err))));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let over = false;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > outbound.maxBytes) {
            over = true;
            res.destroy();
          } else chunks.push(chunk);
        });
        const done = () => {
          if (over) return resolve(none(`answer over ${outbound.maxBytes} bytes`));
          if (!res.complete) return resolve(none({ kind: 'connectionClosed' }));
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks), failure: null });
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', () => resolve(none({ kind: 'connectionClosed' })));
      });
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** request-filtering-agent's refusal, which names the address ("DNS lookup 10.0.0.7(family:4, …) is not allowed…"). */
const REFUSED_ADDRESS = /^DNS lookup .* is not allowed/;
const REASONS: Record<string, FailureKind> = {
  ECONNREFUSED: 'connectionRefused',
  ECONNRESET: 'connectionClosed',
  EPIPE: 'connectionClosed',
  ETIMEDOUT: 'timedOut',
  EHOSTUNREACH: 'hostUnreachable',
  ENETUNREACH: 'hostUnreachable',
};
const LOOKUP_FAILURES: Record<LookupError['code'], FailureKind> = { ETIMEOUT: 'dnsTimedOut', ENOTFOUND: 'hostNotFound', EDNSFAIL: 'dnsFailed' };

/**
 * What a member may read of a failed request (it ends up in `last_error`): Node's own messages
 * carry the address a name resolved to ("connect ECONNREFUSED 10.0.0.7:443"), which must not tell
 * a tenant what is inside our network, so only fixed words and error codes come out.
 */
function failureReason(err: NodeJS.ErrnoException): Failure {
  if (err instanceof LookupError) return { kind: LOOKUP_FAILURES[err.code] };
  if (err.name === 'AbortError' || err.message === 'timed out') return { kind: 'timedOut' };
  if (REFUSED_ADDRESS.test(err.message)) return { kind: 'addressNotAllowed' };
  if (err.code && REASONS[err.code]) return { kind: REASONS[err.code] };
  if (err.code && /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_|UNABLE_TO|SELF_SIGNED)/.test(err.code)) return { kind: 'tlsError', value: err.code };
  return { kind: 'connectionFailed' };
}
