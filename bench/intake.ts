import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../config';
import type { LoadOptions, Measured, Target } from './load';
import { compare } from './load';
import type { CpuMeter } from './meters';
import type { Account } from './seed';
import { api } from './seed';

/** Shopify's documented `orders/create` body, as the intake tests use it. */
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-orders-create.json');
const SECRET = 'shpss_bench_intake_signing_key_0123456789';

export interface IntakeFigures {
  intake: Measured;
  create: Measured;
  /** Orders the intake messages created (warm-up included), against the measured 200s. */
  written: { orders: number; measured: number };
}

const INTAKE_RATE_TARGET = 300;
const INTAKE_P99_TARGET_MS = 250;
const RATIO_TARGET = 0.8;

/** A fresh Moroccan mobile per message, in Shopify's spaced local form (the intake normalises it). */
function counter(): () => number {
  let n = Math.floor(Math.random() * 9_000_000);
  return () => n++ % 10_000_000;
}

/**
 * Store intake (docs/stores.md): signed Shopify `orders/create` messages at `/hooks/stores/:id`, each a new
 * order, against `POST /api/orders` of the same service and workspace, in alternating segments.
 */
export async function intakeBench(options: {
  serviceUrl: string;
  account: Account;
  meter: CpuMeter;
  load: LoadOptions;
  /** Orders of the workspace from that source. */
  countOrders: (workspaceId: string, source: string) => Promise<number>;
}): Promise<IntakeFigures> {
  const { serviceUrl, account, meter, load } = options;
  const res = await api(serviceUrl, account.cookie, 'POST', '/api/stores', { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: SECRET });
  if (res.status !== 201) throw new Error(`POST /api/stores answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const store = (await res.json()) as { id: string };
  const fixture = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
  // The body made once with markers, then filled in per message: the load generator shares the
  // machine, and stringifying 4.6 kB of JSON per message would slow this side alone.
  const [head, afterId, afterName, tail] = JSON.stringify({
    ...fixture,
    id: 0.125,
    name: '\u0001',
    shipping_address: { ...fixture.shipping_address, phone: '\u0002' },
  }).split(/0\.125|"\\u0001"|"\\u0002"/);
  if (tail === undefined) throw new Error('bench: the Shopify fixture could not be templated');
  const next = counter();
  const intake: Target = {
    method: 'POST',
    path: `/hooks/stores/${store.id}`,
    headers: { 'content-type': 'application/json', 'x-shopify-topic': 'orders/create' },
    perRequest: () => {
      const n = next();
      const phone = `06 1${String(n)
        .padStart(7, '0')
        .replace(/(\d)(\d{2})(\d{2})(\d{2})$/, '$1 $2 $3 $4')}`;
      const body = `${head}${7_000_000_000 + n}${afterId}"#${n}"${afterName}"${phone}"${tail}`;
      return {
        body,
        headers: {
          'x-shopify-webhook-id': crypto.randomUUID(),
          'x-shopify-hmac-sha256': crypto.createHmac('sha256', SECRET).update(body).digest('base64'),
        },
      };
    },
  };
  const phoneOf = counter();
  const create: Target = {
    method: 'POST',
    path: '/api/orders',
    headers: { cookie: account.cookie, 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
    perRequest: () => ({
      body: JSON.stringify({
        clientName: 'Amina Benali',
        phone: `+2126${String(phoneOf()).padStart(8, '1')}`,
        storeName: 'Atlas',
        productsName: '2 × Babouches - 40, 1 × Tajine',
        address: 'Rue 12, Maarif, Appartement 4, Casablanca',
        totalAmount: '349.00',
      }),
    }),
  };
  const { service, baseline } = await compare({ url: serviceUrl, target: intake, meter }, { url: serviceUrl, target: create, meter }, load);
  const orders = await options.countOrders(account.workspaceId, 'shopify');
  return { intake: service, create: baseline, written: { orders, measured: service.requests } };
}

const mark = (ok: boolean) => (ok ? 'met' : '**missed**');

export function intakeSection(f: IntakeFigures): string[] {
  const ratio = f.intake.rps / f.create.rps;
  const ms = (m: Measured) => `${(m.cpuMs.node + m.cpuMs.db).toFixed(2)} (${m.cpuMs.node.toFixed(2)} + ${m.cpuMs.db.toFixed(2)})`;
  return [
    '## Store intake',
    '',
    "Signed Shopify `orders/create` messages (the documented body, 3.7 kB compact, a new order id, phone and `X-Shopify-Webhook-Id` each) at a connection's `/hooks/stores/:id`, against `POST /api/orders` of the same service and workspace, alternating as above. Each message creates its order, operation, dispatch job and event log row.",
    '',
    '| Measure | Result | Target | |',
    '|---|---:|---:|---|',
    `| intake messages answered per second | ${f.intake.rps.toFixed(0)}/s | ≥ ${INTAKE_RATE_TARGET}/s | ${mark(f.intake.rps >= INTAKE_RATE_TARGET && f.intake.failures === 0)} |`,
    `| intake p50 / p99 under that load | ${f.intake.p50} / ${f.intake.p99} ms (with first answers: ${f.intake.p99WithFirst} ms) | p99 ≤ ${INTAKE_P99_TARGET_MS} ms | ${mark(f.intake.p99 <= INTAKE_P99_TARGET_MS)} |`,
    `| intake ÷ \`POST /api/orders\` (${f.create.rps.toFixed(0)}/s, p99 ${f.create.p99} ms) | ${ratio.toFixed(2)} | ≥ ${RATIO_TARGET} | ${mark(ratio >= RATIO_TARGET)} |`,
    `| CPU ms per request (Node + Postgres): intake / create | ${ms(f.intake)} / ${ms(f.create)} | | |`,
    `| orders the messages created (warm-up included) / measured answers; non-2xx on either side | ${f.written.orders.toLocaleString('en-US')} / ${f.written.measured.toLocaleString('en-US')}; ${f.intake.failures + f.create.failures} | an order per message, no failures | ${mark(f.written.orders >= f.written.measured && f.intake.failures + f.create.failures === 0)} |`,
    '',
  ];
}
