import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { newSigningSecret } from '../integrations/signing';
import type { Cleanup } from './infra';
import { startWorker, until } from './loop';
import type { Account } from './seed';

const EVENTS = 1000;
const BEHIND_ROUTER = { 'x-forwarded-proto': 'https' };

export interface WebhookFigures {
  events: number;
  alone: number;
  withDeadEndpoint: number;
}

/** A receiver on loopback: answers 200 at once (or never), noting when each message came. */
async function receiver(cleanup: Cleanup, answers: boolean) {
  const arrivals: number[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(performance.now());
      if (answers) res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.add(
    'webhook receiver',
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, arrivals };
}

/** Deliveries per second to the receiver, first to last, for EVENTS order.created events made by one import. */
async function burst(options: { knex: Knex; serviceUrl: string; account: Account }, live: { arrivals: number[] }): Promise<number> {
  const start = live.arrivals.length;
  const rows = ['name,phone,store,products', ...Array.from({ length: EVENTS }, (_, i) => `Client ${i},0612345678,Atlas,Argan oil`)];
  const res = await fetch(`${options.serviceUrl}/api/orders/import`, {
    method: 'POST',
    headers: { ...BEHIND_ROUTER, cookie: options.account.cookie, 'content-type': 'text/csv' },
    body: rows.join('\n'),
  });
  if (res.status !== 200) throw new Error(`webhook bench: import answered ${res.status}`);
  await until('every delivery', () => live.arrivals.length >= start + EVENTS, 300_000);
  const times = live.arrivals.slice(start, start + EVENTS);
  return (EVENTS - 1) / ((times[EVENTS - 1] - times[0]) / 1000);
}

/**
 * Webhook deliveries per second from one worker process (the Procfile's `worker:`) to a local
 * receiver, for 1,000 queued events; then the same with a second endpoint that never answers.
 */
export async function webhookBench(options: {
  knex: Knex;
  databaseUrl: string;
  serviceUrl: string;
  account: Account;
  tmp: string;
  cleanup: Cleanup;
  log: (m: string) => void;
}): Promise<WebhookFigures> {
  const { knex, account, log } = options;
  const live = await receiver(options.cleanup, true);
  const dead = await receiver(options.cleanup, false);
  // Seeded directly: in production an endpoint URL must be public https, and the receivers are on loopback.
  const add = (url: string) =>
    knex('webhook_endpoints').insert({ workspace_id: account.workspaceId, url, events: ['order.created'], secret: newSigningSecret() });
  await add(live.url);
  const stopWorker = await startWorker(options, 'webhook-worker');
  const alone = await burst({ ...options, serviceUrl: options.serviceUrl }, live);
  log(`webhooks: ${EVENTS} deliveries at ${alone.toFixed(0)}/s`);
  await add(dead.url);
  const withDeadEndpoint = await burst(options, live);
  log(`webhooks: with an endpoint that never answers, ${withDeadEndpoint.toFixed(0)}/s (it was called ${dead.arrivals.length} times)`);
  await stopWorker();
  return { events: EVENTS, alone, withDeadEndpoint };
}

export function webhookSection(w: WebhookFigures): string[] {
  const ratio = w.withDeadEndpoint / w.alone;
  return [
    '## Webhooks',
    '',
    `One worker process (the Procfile's \`worker:\`), ${w.events.toLocaleString('en')} \`order.created\` events made by one import, to a receiver on loopback that answers 200 at once.`,
    '',
    '| Case | Deliveries per second (first to last) | Target |',
    '|---|---:|---|',
    `| One endpoint | ${w.alone.toFixed(0)} | ≥ 200/s: ${w.alone >= 200 ? 'met' : '**missed**'} |`,
    `| The same, with a second endpoint that never answers (10 s time-out) | ${w.withDeadEndpoint.toFixed(0)} (${(ratio * 100).toFixed(0)}% of the above) | within 20%: ${ratio >= 0.8 ? 'met' : '**missed**'} |`,
    '',
  ];
}
