import type { SignedSender } from '../../../integrations/http';
import type { CarrierAnswer, CarrierRequest, CarrierSession } from './types';

/** What an answer may weigh unless the adapter says (a city list is ~100 kB; a label PDF sets its own). */
const DEFAULT_MAX_BYTES = 2 * 1024 * 1024;

/** A multipart body as a browser would send the same form (Node's own FormData and its encoder). */
async function multipart(fields: Record<string, string>): Promise<{ body: Buffer; type: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const encoded = new Request('http://form.invalid/', { method: 'POST', body: form });
  return { body: Buffer.from(await encoded.arrayBuffer()), type: encoded.headers.get('content-type') ?? 'multipart/form-data' };
}

/**
 * One account's session with its carrier: every call through the service's guarded client (private
 * addresses refused in production, DNS and answer time-outs, a bound on the answer's bytes), `path`
 * joined to the kind's origin. Credentials stay in `credentials`; nothing here logs.
 */
export function carrierSession(
  sender: SignedSender,
  origin: string,
  credentials: Readonly<Record<string, string>>,
  memo = new Map<string, string>(),
): CarrierSession {
  const base = origin.replace(/\/+$/, '');
  return {
    credentials,
    memo,
    async request(req: CarrierRequest): Promise<CarrierAnswer> {
      const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
      let body: Buffer | string | undefined;
      if (req.json !== undefined) {
        body = JSON.stringify(req.json);
        headers['content-type'] = 'application/json';
      } else if (req.form) {
        const encoded = await multipart(req.form);
        body = encoded.body;
        headers['content-type'] = encoded.type;
      }
      // A URL the carrier gave (a label's) is followed as given, through the same guard; a path joins the origin.
      const url = /^https?:\/\//i.test(req.path) ? req.path : `${base}${req.path.startsWith('/') ? req.path : `/${req.path}`}`;
      return sender.call({ method: req.method, url, headers, body, maxBytes: req.maxBytes ?? DEFAULT_MAX_BYTES });
    },
  };
}
