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

/** The five scenarios of the issue; the baseline gets the workspace in a header instead of a session. */
export function scenarios(inputs: ScenarioInputs): Scenario[] {
  const list = (account: Account): Target => ({
    method: 'GET',
    path: '/api/orders',
    headers: { cookie: account.cookie, 'x-bench-workspace': account.workspaceId },
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
    headers: { cookie: inputs.writer.cookie, 'content-type': 'application/json', 'x-bench-workspace': inputs.writer.workspaceId },
    perRequest: orderBody,
  };
  const data: Target = {
    method: 'GET',
    path: '/data/v1/orders',
    headers: {
      apikey: inputs.access.publishableKey,
      authorization: `Bearer ${inputs.access.token}`,
      'x-bench-workspace': inputs.small.workspaceId,
    },
  };
  // The token names a user; which workspace it reads (if any: a removed member's token reads
  // nothing) is looked up on every request, as a session's row is read. The baseline does that
  // lookup too, by the service's own statement; e0 shows the same route against the list alone.
  const dataWithContext: Target = { ...data, headers: { ...data.headers, 'x-bench-context': '1' } };
  return [
    { id: 'a', title: 'GET /api/orders, 50 orders (session)', target: 0.8, service: list(inputs.small), baseline: list(inputs.small) },
    { id: 'c', title: 'POST /api/orders (fresh phones)', target: 0.85, cpuTarget: 1.25, service: create, baseline: create },
    { id: 'd', title: `POST /api/v1/token (${inputs.keys.length} keys)`, target: 0.8, service: exchange, baseline: exchange },
    { id: 'e', title: 'GET /data/v1/orders, 50 orders (token)', target: 0.8, service: data, baseline: dataWithContext },
    { id: 'e0', title: 'GET /data/v1/orders, 50 orders (token), against the list query alone', service: data, baseline: data },
    // Last: a process that has answered 32 lists of 2,000 orders at once keeps the memory it took
    // (up to 240 MB), and the memory target is for the load of a, c, d and e.
    { id: 'b', title: 'GET /api/orders, 2,000 orders (session)', service: list(inputs.large), baseline: list(inputs.large) },
  ];
}
