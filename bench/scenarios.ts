import { normalizeMoroccanPhone } from '../services/shared';
import type { Target } from './load';
import type { Account } from './seed';

export interface Scenario {
  id: string;
  title: string;
  target?: number;
  cpuTarget?: number;
  service: Target;
  baseline: Target;
}

export interface ScenarioInputs {
  small: Account;
  large: Account;
  writer: Account;
  keys: string[];
  access: { token: string; publishableKey: string };
}

/** The router in front of the service sets the client address; one of the documentation range. */
const BENCH_CLIENT_IP = '198.51.100.23';

/** Fresh valid Moroccan mobiles (+212 61x xx xx xx), a different one for every request. */
function phoneSequence(): () => string {
  let n = Math.floor(Math.random() * 9_000_000);
  const next = () => `+21261${String(n++ % 10_000_000).padStart(7, '0')}`;
  for (let i = 0; i < 1000; i++) {
    const phone = `+21261${String((n + i) % 10_000_000).padStart(7, '0')}`;
    if (normalizeMoroccanPhone(phone) !== phone) throw new Error(`bench phone ${phone} is not valid for the service`);
  }
  return next;
}

function roundRobin(values: string[]): () => string {
  let i = 0;
  return () => values[i++ % values.length];
}

/** The hot routes, each against the bare baseline's least work for the same answer (bench/baseline.ts). */
export function scenarios(inputs: ScenarioInputs): Scenario[] {
  const list = (account: Account): Target => ({
    method: 'GET',
    path: '/api/orders',
    headers: { cookie: account.cookie },
  });
  const phone = phoneSequence();
  const orderBody = () => ({
    body: JSON.stringify({
      clientName: 'Amina Benali',
      phone: phone(),
      storeName: 'Atlas Store',
      productsName: 'Argan oil 250 ml',
      address: '12 Rue Mohammed V, Casablanca',
    }),
  });
  const nextKey = roundRobin(inputs.keys);
  const exchange: Target = {
    method: 'POST',
    path: '/api/v1/token',
    headers: { 'x-forwarded-for': BENCH_CLIENT_IP },
    perRequest: () => ({ headers: { authorization: `Bearer ${nextKey()}` } }),
  };
  const create: Target = {
    method: 'POST',
    path: '/api/orders',
    headers: { cookie: inputs.writer.cookie, 'content-type': 'application/json' },
    perRequest: orderBody,
  };
  const data: Target = {
    method: 'GET',
    path: '/data/v1/orders',
    headers: { apikey: inputs.access.publishableKey, authorization: `Bearer ${inputs.access.token}` },
  };
  // c0's baseline writes the same three rows into copies of the tables without triggers.
  const bareCreate: Target = { ...create, headers: { ...create.headers, 'x-bench-bare': '1' } };
  return [
    { id: 'a', title: 'GET /api/orders, 50 orders (session)', target: 0.9, cpuTarget: 1.2, service: list(inputs.small), baseline: list(inputs.small) },
    { id: 'c', title: 'POST /api/orders (fresh phones), baseline into the real tables', target: 0.95, service: create, baseline: create },
    // A record beside c, not a target: what the product promises per order (its triggers and foreign keys) is part of the least work.
    { id: 'c0', title: 'POST /api/orders (fresh phones), baseline into tables without triggers', service: create, baseline: bareCreate },
    { id: 'd', title: `POST /api/v1/token (${inputs.keys.length} keys)`, target: 0.9, cpuTarget: 1.2, service: exchange, baseline: exchange },
    { id: 'e', title: 'GET /data/v1/orders, 50 orders (token)', target: 0.9, cpuTarget: 1.2, service: data, baseline: data },
    // Last: a process that has answered 32 lists of 2,000 orders at once keeps the memory it took
    // (up to 240 MB), and the memory target is for the load of a, c, d and e.
    { id: 'b', title: 'GET /api/orders, 2,000 orders (session)', service: list(inputs.large), baseline: list(inputs.large) },
  ];
}
