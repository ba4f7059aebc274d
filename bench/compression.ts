import http from 'node:http';
import type { Account } from './seed';

export interface CompressionFigures {
  requests: number;
  plain: { bytes: number; meanMs: number };
  gzip: { bytes: number; meanMs: number };
}

function fetchRaw(url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - t0 }));
      })
      .on('error', reject);
  });
}

/**
 * The `/orders` page (50 orders) asked for with and without `Accept-Encoding: gzip`, one request at
 * a time, alternating: bytes on the wire and time to the last byte on loopback. The load scenarios
 * send no Accept-Encoding, so their ratios stay comparable with earlier runs.
 */
export async function compressionFigures(serviceUrl: string, account: Account, requests = 100): Promise<CompressionFigures> {
  const headers = { cookie: account.cookie, 'x-forwarded-proto': 'https' };
  const plain = { bytes: 0, ms: 0 };
  const gzip = { bytes: 0, ms: 0 };
  for (let i = 0; i < requests; i += 1) {
    for (const [side, extra] of [
      [plain, {}],
      [gzip, { 'accept-encoding': 'gzip' }],
    ] as const) {
      const res = await fetchRaw(`${serviceUrl}/orders`, { ...headers, ...extra });
      if (res.status !== 200) throw new Error(`/orders answered ${res.status}`);
      side.bytes = res.bytes;
      side.ms += res.ms;
    }
  }
  return {
    requests,
    plain: { bytes: plain.bytes, meanMs: plain.ms / requests },
    gzip: { bytes: gzip.bytes, meanMs: gzip.ms / requests },
  };
}
