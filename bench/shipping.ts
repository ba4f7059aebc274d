import path from 'node:path';
import type { Knex } from 'knex';
import { PDFDocument } from 'pdf-lib';
import type { RecordedRequest } from '../test/helpers/carrier-doubles';
import { senditDouble, SENDIT_KEYS, yalidineDouble, YALIDINE_KEYS } from '../test/helpers/carrier-doubles';
import type { Cleanup } from './infra';
import { startWorker, WORKER_SECRETS_KEY } from './loop';
import { MemorySampler } from './meters';
import { api, insertOrders, signUp } from './seed';
import { startService } from './sides';

const ORDERS = 500;
/** The carrier double answers every call after this long (carriers.md 7: "a double answering in 50 ms"). */
const LATENCY_MS = 50;
const SAMPLES = 40;

type BenchKind = 'sendit' | 'yalidine';

/** What each kind's account is made with, and the carrier's published limits the figures are read against. */
const KINDS: Record<
  BenchKind,
  {
    title: string;
    credentials: Record<string, string>;
    pickup: string;
    city: string;
    path: string;
    perSecond: number | null;
    perMinute: number | null;
    atOnce: number;
  }
> = {
  // Sendit publishes no rate: 4 calls at once (carriers.md 3) is its limit.
  sendit: { title: 'Sendit', credentials: SENDIT_KEYS, pickup: 'Casablanca', city: 'Casa', path: '/deliveries', perSecond: null, perMinute: null, atOnce: 4 },
  // Yalidine: 5 requests a second, 50 a minute, 1,000 an hour (its double keeps the same quotas and answers 429 past them).
  yalidine: { title: 'Yalidine', credentials: YALIDINE_KEYS, pickup: '1601|Alger', city: 'Oran', path: '/parcels', perSecond: 5, perMinute: 50, atOnce: 4 },
};

export interface ShippingReport {
  kind: string;
  orders: number;
  sent: number;
  seconds: number;
  /** When the last parcel was written sent (its \`sent_at\`), from the tap: the bench's polling aside. */
  lastSentSeconds: number;
  /** Create calls made, and the most parcels one carried. */
  calls: number;
  maxParcelsPerCall: number;
  /** The most create calls the carrier received in any one second, any one minute, and at once; the carrier's limits beside them (null: none published). */
  maxPerSecond: number;
  maxPerMinute: number;
  maxAtOnce: number;
  limitPerSecond: number | null;
  limitPerMinute: number | null;
  limitAtOnce: number;
  serviceRssBeforeMb: number;
  serviceRssPeakMb: number;
  ordersP50IdleMs: number;
  ordersP50DuringMs: number;
  /** "Print the labels" of the 500 (Sendit's run): the merged PDF's pages, its size, the time, the web process's RSS peak while it was made. */
  labels?: { pages: number; megabytes: number; seconds: number; rssPeakMb: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** The most timestamps (ms) inside any window of `windowMs`. */
function busiest(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i += 1) {
    while (sorted[i] - sorted[j] >= windowMs) j += 1;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/** `GET /orders` (the dashboard's page of 50) timed `n` times in a row: the page a shop waits on while parcels go. */
async function ordersPage(url: string, cookie: string, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const t0 = performance.now();
    const res = await fetch(`${url}/orders`, { headers: { cookie, 'x-forwarded-proto': 'https' } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET /orders answered ${res.status}`);
    times.push(performance.now() - t0);
  }
  return times;
}

/**
 * 500 confirmed orders shipped in one tap to a carrier double answering in 50 ms (Sendit, then
 * Yalidine with its quotas), with the service (production settings) and one worker process on the
 * bench's database: the time until every parcel is made, the carrier's pace as the double saw it
 * (against its limits), the web process's memory, and `/orders` p50 before and while the parcels go.
 * `BENCH_SHIPPING_KINDS` (`sendit,yalidine` by default) picks the carriers.
 */
export async function shippingBench(options: {
  knex: Knex;
  where: { databaseUrl: string; redisUrl: string; cleanup: Cleanup };
  tmp: string;
  env: NodeJS.ProcessEnv;
  log: (m: string) => void;
}): Promise<ShippingReport[]> {
  const { where } = options;
  const kinds = (options.env.BENCH_SHIPPING_KINDS ?? 'sendit,yalidine').split(',').map((k) => k.trim()) as BenchKind[];
  const sendit = await senditDouble({ latencyMs: LATENCY_MS });
  where.cleanup.add('Sendit double', () => sendit.close());
  const yalidine = await yalidineDouble({ latencyMs: LATENCY_MS });
  where.cleanup.add('Yalidine double', () => yalidine.close());
  const carrierEnv = { SENDIT_API_ORIGIN: sendit.url, YALIDINE_API_ORIGIN: yalidine.url, ALLOW_PRIVATE_URLS: 'true' };
  const service = await startService(
    { ...where, logFile: path.join(options.tmp, 'service-shipping.log'), secretsKey: WORKER_SECRETS_KEY },
    { ...options.env, ...carrierEnv },
  );
  await startWorker(
    { databaseUrl: where.databaseUrl, tmp: options.tmp, cleanup: where.cleanup, env: carrierEnv, profileDir: options.env.BENCH_CPU_PROF },
    'worker-shipping',
  );
  const reports: ShippingReport[] = [];
  for (const kind of kinds) {
    const double = kind === 'sendit' ? sendit : yalidine;
    reports.push(await shipOnce(options, service, double, kind));
  }
  return reports;
}

async function shipOnce(
  options: { knex: Knex; log: (m: string) => void },
  service: Awaited<ReturnType<typeof startService>>,
  double: { requests: RecordedRequest[]; maxInFlight: number },
  kind: BenchKind,
): Promise<ShippingReport> {
  const { knex, log } = options;
  const spec = KINDS[kind];
  const memory = new MemorySampler(service.child.pid!);
  const account = await signUp(service.url, knex, `shipping-${kind}-${Date.now()}@bench.invalid`, `Shipping shop ${spec.title}`);
  const created = await api(service.url, account.cookie, 'POST', '/api/carrier-accounts', {
    kind,
    name: spec.title,
    credentials: spec.credentials,
    pickup_city_id: spec.pickup,
  });
  if (created.status !== 201) throw new Error(`POST /api/carrier-accounts answered ${created.status}: ${await created.text()}`);
  const accountId = ((await created.json()) as { id: string }).id;
  await insertOrders(knex, [account.workspaceId], ORDERS);
  await knex('orders').where({ workspace_id: account.workspaceId }).update({ status: 'confirmed', city: spec.city, total_amount: 249, phone: '+212612345678' });
  const ids: string[] = await knex('orders').where({ workspace_id: account.workspaceId }).pluck('id');

  // The page warmed first (its first answers for a new workspace are slower), so idle and during compare like for like.
  await ordersPage(service.url, account.cookie, SAMPLES);
  const idle = await ordersPage(service.url, account.cookie, SAMPLES);
  const rssBefore = memory.now();
  const requestsBefore = double.requests.length;
  double.maxInFlight = 0;
  log(`shipping: ${ORDERS} orders to a ${spec.title} double answering in ${LATENCY_MS} ms`);
  const t0 = performance.now();
  const tapped = Date.now();
  const shipped = await api(service.url, account.cookie, 'POST', '/api/shipments', { accountId, orderIds: ids });
  const answeredMs = performance.now() - t0;
  if (shipped.status !== 202) throw new Error(`POST /api/shipments answered ${shipped.status}: ${await shipped.text()}`);
  const during: number[] = [];
  let done = 0;
  const deadline = Date.now() + 15 * 60_000;
  while (done < ids.length) {
    if (Date.now() > deadline) throw new Error(`shipping bench: ${done} of ${ids.length} parcels after 15 minutes`);
    during.push(...(await ordersPage(service.url, account.cookie, 2)));
    done = Number(
      (
        (await knex('parcels').where({ workspace_id: account.workspaceId }).whereIn('state', ['sent', 'failed', 'uncertain']).count('* as n').first()) as {
          n: string;
        }
      ).n,
    );
    await sleep(100);
  }
  const seconds = (performance.now() - t0) / 1000;
  const { last } = (await knex('parcels').where({ workspace_id: account.workspaceId }).first(knex.raw('extract(epoch FROM max(sent_at)) * 1000 AS last'))) as {
    last: string;
  };
  const lastSentSeconds = (Number(last) - tapped) / 1000;
  const idleAfter = await ordersPage(service.url, account.cookie, SAMPLES);
  const shipmentId = ((await shipped.json()) as { shipment_id: string }).shipment_id;
  const rssPeak = memory.mark();
  let labels: ShippingReport['labels'];
  if (kind === 'sendit') {
    const l0 = performance.now();
    const pdf = await fetch(`${service.url}/api/shipments/${shipmentId}/labels.pdf`, { headers: { cookie: account.cookie, 'x-forwarded-proto': 'https' } });
    if (pdf.status !== 200) throw new Error(`labels.pdf answered ${pdf.status}`);
    const bytes = Buffer.from(await pdf.arrayBuffer());
    labels = {
      pages: (await PDFDocument.load(bytes)).getPageCount(),
      megabytes: bytes.length / 2 ** 20,
      seconds: (performance.now() - l0) / 1000,
      rssPeakMb: memory.mark(),
    };
  }
  const sent = Number(((await knex('parcels').where({ workspace_id: account.workspaceId, state: 'sent' }).count('* as n').first()) as { n: string }).n);
  const calls = double.requests.slice(requestsBefore);
  const creates = calls.filter((r) => r.method === 'POST' && r.path === spec.path);
  const at = creates.map((r) => r.at);
  const report: ShippingReport = {
    kind,
    orders: ids.length,
    sent,
    seconds,
    lastSentSeconds,
    calls: creates.length,
    maxParcelsPerCall: Math.max(0, ...creates.map((r) => (Array.isArray(r.json) ? r.json.length : 1))),
    maxPerSecond: busiest(at, 1000),
    maxPerMinute: busiest(at, 60_000),
    maxAtOnce: double.maxInFlight,
    limitPerSecond: spec.perSecond,
    limitPerMinute: spec.perMinute,
    limitAtOnce: spec.atOnce,
    serviceRssBeforeMb: rssBefore,
    serviceRssPeakMb: rssPeak,
    labels,
    ordersP50IdleMs: median(idle),
    ordersP50DuringMs: median(during),
  };
  memory.stop();
  log(
    `  ${sent}/${ids.length} sent in ${seconds.toFixed(1)} s (the last written sent at ${lastSentSeconds.toFixed(2)} s; the tap answered in ${answeredMs.toFixed(0)} ms, the first create call at ${((at[0] ?? t0) - t0).toFixed(0)} ms, the last at ${((at.at(-1) ?? t0) - t0).toFixed(0)} ms), ${report.calls} create calls of at most ${report.maxParcelsPerCall}; at most ${report.maxPerSecond}/s, ${report.maxPerMinute}/min and ${report.maxAtOnce} at once; /orders p50 ${report.ordersP50IdleMs.toFixed(0)} → ${report.ordersP50DuringMs.toFixed(0)} ms, after ${median(idleAfter).toFixed(1)} ms`,
  );
  return report;
}

const limit = (n: number | null) => (n === null ? 'none published' : String(n));

export function shippingSection(reports: ShippingReport[]): string[] {
  const cell = (f: (s: ShippingReport) => string) => reports.map(f).join(' | ');
  return [
    '## Shipping 500 orders to a carrier',
    '',
    `${ORDERS} confirmed orders shipped in one tap (\`POST /api/shipments\`) to a carrier double answering every call in ${LATENCY_MS} ms, the service (production settings) and one worker process (the Procfile's \`worker:\`) on the bench database.`,
    '',
    `| Figure | ${cell((s) => KINDS[s.kind as BenchKind]?.title ?? s.kind)} |`,
    `|---|${cell(() => '---:')}|`,
    `| Parcels made | ${cell((s) => `${s.sent} of ${s.orders}`)} |`,
    `| Time until the last one | ${cell((s) => `${s.seconds.toFixed(1)} s`)} |`,
    `| The last one written sent (its \`sent_at\`) | ${cell((s) => `${s.lastSentSeconds.toFixed(2)} s`)} |`,
    `| Create calls (most parcels in one) | ${cell((s) => `${s.calls} (${s.maxParcelsPerCall})`)} |`,
    `| Create calls in the busiest second (limit) | ${cell((s) => `${s.maxPerSecond} (${limit(s.limitPerSecond)})`)} |`,
    `| Create calls in the busiest minute (limit) | ${cell((s) => `${s.maxPerMinute} (${limit(s.limitPerMinute)})`)} |`,
    `| Calls at once at the carrier (limit) | ${cell((s) => `${s.maxAtOnce} (${s.limitAtOnce})`)} |`,
    `| Web process RSS before → peak | ${cell((s) => `${s.serviceRssBeforeMb.toFixed(0)} → ${s.serviceRssPeakMb.toFixed(0)} MB`)} |`,
    `| \`/orders\` p50 idle → while shipping | ${cell((s) => `${s.ordersP50IdleMs.toFixed(0)} → ${s.ordersP50DuringMs.toFixed(0)} ms (×${(s.ordersP50DuringMs / s.ordersP50IdleMs).toFixed(2)})`)} |`,
    `| "Print the labels": one PDF of the ${ORDERS} | ${cell((s) =>
      s.labels
        ? `${s.labels.pages} pages, ${s.labels.megabytes.toFixed(1)} MB, ${s.labels.seconds.toFixed(1)} s; RSS peak ${s.labels.rssPeakMb.toFixed(0)} MB`
        : 'not measured',
    )} |`,
    '',
  ];
}
