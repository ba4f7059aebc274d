import path from 'node:path';
import type { Knex } from 'knex';
import { PDFDocument } from 'pdf-lib';
import { senditDouble, SENDIT_KEYS } from '../test/helpers/carrier-doubles';
import type { Cleanup } from './infra';
import { startWorker, WORKER_SECRETS_KEY } from './loop';
import { MemorySampler } from './meters';
import { api, insertOrders, signUp } from './seed';
import { startService } from './sides';

const ORDERS = 500;
/** The carrier double answers every call after this long (carriers.md 7: "a double answering in 50 ms"). */
const LATENCY_MS = 50;
const SAMPLES = 40;

export interface ShippingReport {
  kind: string;
  orders: number;
  sent: number;
  seconds: number;
  /** The most create calls the carrier received in any one second, and at once; the adapter's limits beside them. */
  maxPerSecond: number;
  maxAtOnce: number;
  limitPerSecond: number;
  limitAtOnce: number;
  serviceRssBeforeMb: number;
  serviceRssPeakMb: number;
  ordersP50IdleMs: number;
  ordersP50DuringMs: number;
  /** "Print the labels" of the 500: the merged PDF's pages, its size, the time, the web process's RSS peak while it was made. */
  labels: { pages: number; megabytes: number; seconds: number; rssPeakMb: number };
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
 * 500 confirmed orders shipped in one tap to a Sendit double answering in 50 ms, with the
 * service (production settings) and one worker process on the bench's database: the time until
 * every parcel is made, the carrier's pace as the double saw it (against the adapter's limits),
 * the web process's memory, and `/orders` p50 before and while the parcels go.
 */
export async function shippingBench(options: {
  knex: Knex;
  where: { databaseUrl: string; redisUrl: string; cleanup: Cleanup };
  tmp: string;
  env: NodeJS.ProcessEnv;
  log: (m: string) => void;
}): Promise<ShippingReport> {
  const { knex, where, log } = options;
  const double = await senditDouble({ latencyMs: LATENCY_MS });
  where.cleanup.add('Sendit double', () => double.close());
  const carrierEnv = { SENDIT_API_ORIGIN: double.url, ALLOW_PRIVATE_URLS: 'true' };
  const service = await startService(
    { ...where, logFile: path.join(options.tmp, 'service-shipping.log'), secretsKey: WORKER_SECRETS_KEY },
    { ...options.env, ...carrierEnv },
  );
  await startWorker({ databaseUrl: where.databaseUrl, tmp: options.tmp, cleanup: where.cleanup, env: carrierEnv }, 'worker-shipping');
  const memory = new MemorySampler(service.child.pid!);
  const account = await signUp(service.url, knex, `shipping-${Date.now()}@bench.invalid`, 'Shipping shop');
  const created = await api(service.url, account.cookie, 'POST', '/api/carrier-accounts', {
    kind: 'sendit',
    name: 'Sendit',
    credentials: SENDIT_KEYS,
    pickup_city_id: 'Casablanca',
  });
  if (created.status !== 201) throw new Error(`POST /api/carrier-accounts answered ${created.status}: ${await created.text()}`);
  const accountId = ((await created.json()) as { id: string }).id;
  await insertOrders(knex, [account.workspaceId], ORDERS);
  await knex('orders').where({ workspace_id: account.workspaceId }).update({ status: 'confirmed', city: 'Casa', total_amount: 249, phone: '+212612345678' });
  const ids: string[] = await knex('orders').where({ workspace_id: account.workspaceId }).pluck('id');

  const idle = await ordersPage(service.url, account.cookie, SAMPLES);
  const rssBefore = memory.now();
  const requestsBefore = double.requests.length;
  log(`shipping: ${ORDERS} orders to a Sendit double answering in ${LATENCY_MS} ms`);
  const t0 = performance.now();
  const shipped = await api(service.url, account.cookie, 'POST', '/api/shipments', { accountId, orderIds: ids });
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
  const shipmentId = ((await shipped.json()) as { shipment_id: string }).shipment_id;
  const rssBeforeShipping = memory.mark();
  const l0 = performance.now();
  const pdf = await fetch(`${service.url}/api/shipments/${shipmentId}/labels.pdf`, { headers: { cookie: account.cookie, 'x-forwarded-proto': 'https' } });
  if (pdf.status !== 200) throw new Error(`labels.pdf answered ${pdf.status}`);
  const bytes = Buffer.from(await pdf.arrayBuffer());
  const labels = {
    pages: (await PDFDocument.load(bytes)).getPageCount(),
    megabytes: bytes.length / 2 ** 20,
    seconds: (performance.now() - l0) / 1000,
    rssPeakMb: memory.mark(),
  };
  const sent = Number(((await knex('parcels').where({ workspace_id: account.workspaceId, state: 'sent' }).count('* as n').first()) as { n: string }).n);
  const creates = double.requests.slice(requestsBefore).filter((r) => r.method === 'POST' && r.path === '/deliveries');
  const report: ShippingReport = {
    kind: 'sendit',
    orders: ids.length,
    sent,
    seconds,
    maxPerSecond: busiest(
      creates.map((r) => r.at),
      1000,
    ),
    maxAtOnce: double.maxInFlight,
    limitPerSecond: 50,
    limitAtOnce: 4,
    serviceRssBeforeMb: rssBefore,
    serviceRssPeakMb: rssBeforeShipping,
    labels,
    ordersP50IdleMs: median(idle),
    ordersP50DuringMs: median(during),
  };
  memory.stop();
  log(
    `  ${sent}/${ids.length} sent in ${seconds.toFixed(1)} s; at most ${report.maxPerSecond}/s and ${report.maxAtOnce} at once; /orders p50 ${report.ordersP50IdleMs.toFixed(0)} → ${report.ordersP50DuringMs.toFixed(0)} ms`,
  );
  return report;
}

export function shippingSection(s: ShippingReport): string[] {
  return [
    '## Shipping 500 orders to a carrier',
    '',
    `${s.orders} confirmed orders shipped in one tap (\`POST /api/shipments\`) to a Sendit double answering every call in ${LATENCY_MS} ms, the service (production settings) and one worker process (the Procfile's \`worker:\`) on the bench database.`,
    '',
    '| Figure | Value |',
    '|---|---:|',
    `| Parcels made | ${s.sent} of ${s.orders} |`,
    `| Time until the last one | ${s.seconds.toFixed(1)} s |`,
    `| Create calls in the busiest second (limit) | ${s.maxPerSecond} (${s.limitPerSecond}) |`,
    `| Calls at once at the carrier (limit) | ${s.maxAtOnce} (${s.limitAtOnce}) |`,
    `| Web process RSS before → peak | ${s.serviceRssBeforeMb.toFixed(0)} → ${s.serviceRssPeakMb.toFixed(0)} MB |`,
    `| \`/orders\` p50 idle → while shipping | ${s.ordersP50IdleMs.toFixed(0)} → ${s.ordersP50DuringMs.toFixed(0)} ms (×${(s.ordersP50DuringMs / s.ordersP50IdleMs).toFixed(2)}) |`,
    `| "Print the labels": one PDF of the ${s.sent} | ${s.labels.pages} pages, ${s.labels.megabytes.toFixed(1)} MB, ${s.labels.seconds.toFixed(1)} s; web process RSS peak ${s.labels.rssPeakMb.toFixed(0)} MB |`,
    '',
  ];
}
