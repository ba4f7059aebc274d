import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { loadConfig } from '../../config';
import type { Order } from '../../services/orders';
import type { RunningWorker } from '../../worker';
import { startWorker } from '../../worker';
import type { SignedIn } from './app';
import { signUp, silentLogger, TEST_ENV } from './app';
import { testDatabaseUrl, testKnex } from './db';

export const ORDER = { clientName: 'Amina Benali', phone: '0612345678', storeName: 'Atlas Shop', productsName: 'Argan oil x2' };

/** Waits until `check` returns something truthy (polling), or fails with `what` after `ms`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Calls are placed at any hour in these tests. */
export async function openAllDay(shop: SignedIn): Promise<void> {
  await shop.agent
    .put('/api/settings/calls')
    .send({ callingHours: { start: '00:00', end: '24:00' } })
    .expect(200);
}

export async function humanShop(): Promise<SignedIn & { handlerId: string }> {
  const shop = await signUp();
  const handler = await shop.agent.post('/api/agents').send({ name: 'Salma', orderHandler: true }).expect(201);
  await openAllDay(shop);
  return { ...shop, handlerId: handler.body.id };
}

export async function voiceShop(endpointUrl: string, credits = 100): Promise<SignedIn & { handlerId: string; secret: string }> {
  const shop = await signUp();
  const handler = await shop.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl, orderHandler: true }).expect(201);
  await openAllDay(shop);
  if (credits > 0) await grant(shop, credits);
  return { ...shop, handlerId: handler.body.id, secret: handler.body.secret };
}

export async function grant(shop: SignedIn, amount: number): Promise<void> {
  const owner = await testKnex()('workspaces').where({ id: shop.workspaceId }).first('owner_id');
  await testKnex()('credit_ledger').insert({ user_id: owner.owner_id, kind: 'grant', amount });
}

export async function createOrder(shop: SignedIn, body: object = ORDER): Promise<Order> {
  const res = await shop.agent.post('/api/orders').send(body).expect(201);
  return res.body;
}

export const orderRow = (id: string) => testKnex()('orders').where({ id }).first();
export const operationRow = (id: string) => testKnex()('operations').where({ id }).first();
export const callsOf = (operationId: string) => testKnex()('calls').where({ operation_id: operationId }).orderBy('started_at');
export const spendsOf = async (callId: string) => testKnex()('credit_ledger').where({ call_id: callId, kind: 'spend' });

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { type: string; data: { call_id: string; callback_url: string; order: { id: string; phone: string }; attempt: number } };
}

/** A voice agent double: a real HTTP server on 127.0.0.1 that records requests and answers as told. */
export async function agentDouble(answer: (req: Received, n: number) => number | 'hang' | 'reset' = () => 202, delayMs = 0) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const entry: Received = { headers: req.headers, body, json: safeJson(body) };
      received.push(entry);
      const action = answer(entry, received.length);
      if (action === 'hang') return;
      if (action === 'reset') {
        req.socket.destroy();
        return;
      }
      if (action >= 300 && action < 400) res.setHeader('Location', 'http://127.0.0.1:1/elsewhere');
      res.statusCode = action;
      setTimeout(() => res.end('{}'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/calls`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function safeJson(text: string) {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/** A worker in this process, on the test database, as `npm start` runs it in development. */
export async function testWorker(env: Record<string, string> = {}): Promise<RunningWorker> {
  const config = loadConfig({ ...TEST_ENV, ...env });
  return startWorker(config, testDatabaseUrl(), silentLogger);
}

export function expectIso(value: unknown): void {
  expect(value).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
}
