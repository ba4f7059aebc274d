import autocannon from 'autocannon';
import type { CpuMeter } from './meters';

export interface Target {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** Per-request changes (a fresh body, the next key of a pool), applied by autocannon's setupRequest. */
  perRequest?: () => { body?: string; headers?: Record<string, string> };
}

export interface Measured {
  rps: number;
  /**
   * Latency percentiles in ms (not autocannon's 1 ms buckets), from every measured response but each
   * connection's first of a segment (see Tally).
   */
  p50: number;
  p99: number;
  /** The p99 of every measured response, each connection's first of a segment included. */
  p99WithFirst: number;
  requests: number;
  /** Non-2xx responses and request errors, warm-up included; must be 0. */
  failures: number;
  failureDetail: string;
  /** CPU milliseconds per measured request: the Node process, and the Postgres backends serving it. */
  cpuMs: { node: number; db: number };
}

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  /** Measured seconds per side, split into `rounds` alternating segments. */
  seconds: number;
  rounds: number;
  /** A fixed total rate (req/s) instead of as fast as the side answers: CPU per request at equal load. */
  rate?: number;
}

function percentile(sorted: Float64Array, q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * Why each connection's first answer in a segment is left out of the latency percentiles: autocannon
 * opens its connections anew for every segment, and on this machine large answers crawl over fresh
 * loopback connections. With a bare Node server answering 547 kB of prepared JSON after 15 ms of work,
 * the first answers of 32 fresh connections arrived one after another over 2 to 4 s, against a p50 of
 * about 400 ms once the connections were warm (with autocannon and with Node's own http client alike).
 * In scenario b those first answers were the slowest 32 of about 500 per side, so they were its p99,
 * on both sides. They still count for throughput and CPU per request, and `p99WithFirst` keeps them.
 */
class Tally {
  /** Latencies of measured answers, each connection's first of a segment excepted. */
  readonly latencies: number[] = [];
  /** Latencies of each connection's first measured answer of a segment. */
  readonly firstLatencies: number[] = [];
  readonly failures = new Map<string, number>();
  readonly cpu = { node: 0, db: 0 };
  seconds = 0;

  fail(what: string): void {
    this.failures.set(what, (this.failures.get(what) ?? 0) + 1);
  }

  result(): Measured {
    const sorted = Float64Array.from(this.latencies).sort();
    const every = Float64Array.from([...this.latencies, ...this.firstLatencies]).sort();
    const round = (ms: number) => Math.round(ms * 10) / 10;
    let failures = 0;
    for (const n of this.failures.values()) failures += n;
    const answers = every.length;
    return {
      rps: answers / this.seconds,
      p50: round(percentile(sorted, 0.5)),
      p99: round(percentile(sorted, 0.99)),
      p99WithFirst: round(percentile(every, 0.99)),
      requests: answers,
      failures,
      failureDetail: [...this.failures].map(([what, n]) => `${n}× ${what}`).join(', '),
      cpuMs: { node: (1000 * this.cpu.node) / answers, db: (1000 * this.cpu.db) / answers },
    };
  }
}

/** One autocannon run; with `tally`, its responses are measured, else only its failures count. */
async function fire(url: string, target: Target, connections: number, seconds: number, tally: Tally, measured: boolean, rate?: number): Promise<void> {
  const { perRequest } = target;
  const options: autocannon.Options = {
    url,
    connections,
    duration: seconds,
    ...(rate && { overallRate: rate }),
    requests: [
      {
        method: target.method,
        path: target.path,
        headers: target.headers,
        // autocannon calls setupRequest whenever the key is present, even when undefined.
        ...(perRequest && {
          setupRequest: (request: autocannon.Request) => {
            const change = perRequest();
            return { ...request, body: change.body ?? request.body, headers: { ...request.headers, ...change.headers } };
          },
        }),
      },
    ],
  };
  const phase = measured ? '' : 'warm-up ';
  const answered = new WeakSet<object>();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (err, done) => (err ? reject(err) : resolve(done)));
    instance.on('response', (client, status, _bytes, ms) => {
      if (status < 200 || status > 299) tally.fail(`${phase}HTTP ${status}`);
      if (!measured) return;
      if (answered.has(client)) return void tally.latencies.push(ms);
      answered.add(client);
      tally.firstLatencies.push(ms);
    });
    instance.on('reqError', (err) => tally.fail(`${phase}${err.message}`));
  });
  if (measured) tally.seconds += result.duration;
}

/** One request outside the measurement, to check that a side answers what it should. */
export async function probe(url: string, target: Target): Promise<{ status: number; body: unknown }> {
  const change = target.perRequest?.() ?? {};
  const res = await fetch(`${url}${target.path}`, { method: target.method, headers: { ...target.headers, ...change.headers }, body: change.body });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text for the error message.
  }
  return { status: res.status, body };
}

export interface Side {
  url: string;
  target: Target;
  meter: CpuMeter;
}

/**
 * Service and baseline under the same load: a warm-up each, then alternating measured segments
 * (service, baseline, baseline, service, service, baseline…), so drift on a shared machine hits
 * both alike, and neither side is always the one that goes first.
 */
export async function compare(service: Side, baseline: Side, options: LoadOptions): Promise<{ service: Measured; baseline: Measured }> {
  const tallies = { service: new Tally(), baseline: new Tally() };
  const sides = [
    { ...service, tally: tallies.service },
    { ...baseline, tally: tallies.baseline },
  ];
  for (const side of sides) await fire(side.url, side.target, options.connections, options.warmupSeconds, side.tally, false, options.rate);
  for (let round = 0; round < options.rounds; round++) {
    // Service first in even rounds, baseline first in odd ones (ABBA): a side that always went
    // first measured 2-4% slower than the same build in the second place (two identical builds
    // side by side, 24 s in 6 segments: throughput 0.96 and 0.99).
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const before = await side.meter.snapshot();
      await fire(side.url, side.target, options.connections, options.seconds / options.rounds, side.tally, true, options.rate);
      const used = await side.meter.since(before);
      side.tally.cpu.node += used.node;
      side.tally.cpu.db += used.db;
    }
  }
  return { service: tallies.service.result(), baseline: tallies.baseline.result() };
}
