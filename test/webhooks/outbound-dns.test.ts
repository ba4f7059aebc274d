import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import bcrypt from 'bcrypt';
import { expect } from 'chai';
import type { Express } from 'express';
import { ConfigError, loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { DNS_TIMEOUT_MS, HostResolver } from '../../integrations/dns';
import { SignedSender } from '../../integrations/http';
import { createServices } from '../../services';
import { WORKSPACE_IN_FLIGHT } from '../../services/shared';
import type { SignedIn } from '../helpers/app';
import { signUp, TEST_ENV, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { dnsServer } from '../helpers/dns-server';
import { agentDouble, ORDER, testWorker, voiceShop, waitFor } from '../helpers/loop';

/** A receiver on 127.0.0.1: records each request's path; answers 200, or holds it until released. */
async function receiver(hang = false) {
  const paths: string[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      paths.push(req.url ?? '');
      if (hang) held.push(res);
      else res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    paths,
    release: () => {
      for (const res of held.splice(0)) res.end('ok');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Shop = SignedIn & { workspaceId: string };

async function shop(target?: Express): Promise<Shop> {
  const s = await signUp({ target });
  await s.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId! };
}

async function endpoint(s: Shop, url: string): Promise<string> {
  return (
    await s.agent
      .post('/api/webhooks')
      .send({ url, events: ['order.created'] })
      .expect(201)
  ).body.id;
}

async function importOrders(s: SignedIn, count: number): Promise<void> {
  const lines = Array.from({ length: count }, (_, i) => `Client ${i},0612345678,Atlas,Argan oil`);
  await s.agent
    .post('/api/orders/import')
    .type('text/csv')
    .send(['name,phone,store,products', ...lines].join('\n'))
    .expect(200);
}

const deliveriesOf = (endpointId: string) => testKnex()('webhook_deliveries').where({ endpoint_id: endpointId });

/** Services and a sender that resolve through `nameserver`, as the worker does with DNS_SERVERS. */
function outbound(nameserver: string, allowPrivateUrls: boolean) {
  const config = loadConfig({ ...TEST_ENV, DNS_SERVERS: nameserver, ALLOW_PRIVATE_URLS: String(allowPrivateUrls) });
  const sender = new SignedSender(allowPrivateUrls, 10_000, new HostResolver(config.calls.dnsServers));
  return { services: createServices(testKnex(), config, new Jobs(testKnex())), send: sender.send.bind(sender), close: () => sender.close() };
}

describe('outbound lookups that cannot stall (issue 28, items 6 and 10)', () => {
  it('HostResolver asks its own nameserver for A and AAAA, answers IP literals and localhost without a query, and serves the all/family forms net uses', async () => {
    const ns = await dnsServer({ 'alive.example': { A: ['127.0.0.1'], AAAA: ['::1'] }, 'v4only.example': { A: ['127.0.0.2'] } });
    const resolver = new HostResolver([ns.address]);
    const lookup = (host: string, options: dns.LookupOptions) =>
      new Promise<unknown>((resolve, reject) => {
        resolver.lookup(host, options, (err, address, family) => (err ? reject(err) : resolve(options.all ? address : { address, family })));
      });
    try {
      expect(await lookup('alive.example', { all: true })).to.deep.equal([
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]);
      expect(await lookup('alive.example', {})).to.deep.equal({ address: '127.0.0.1', family: 4 });
      expect(await lookup('alive.example', { family: 6 })).to.deep.equal({ address: '::1', family: 6 });
      expect(await lookup('v4only.example', { all: true })).to.deep.equal([{ address: '127.0.0.2', family: 4 }]);
      expect(((await lookup('v4only.example', { family: 6 }).catch((e) => e)) as Error).message).to.equal('host not found');
      expect(((await lookup('nowhere.example', {}).catch((e) => e)) as Error).message).to.equal('host not found');
      const asked = ns.queries.length;
      expect(await lookup('10.1.2.3', { all: true })).to.deep.equal([{ address: '10.1.2.3', family: 4 }]);
      expect(await lookup('::1', {})).to.deep.equal({ address: '::1', family: 6 });
      expect(await lookup('localhost', {})).to.deep.equal({ address: '127.0.0.1', family: 4 });
      expect(await lookup('localhost', { all: true, family: 6 })).to.deep.equal([{ address: '::1', family: 6 }]);
      expect(ns.queries.length, 'no query for a literal or localhost').to.equal(asked);
    } finally {
      await ns.close();
    }
  });

  it('DNS_SERVERS: ip or ip:port entries, separated by commas (the system’s nameservers when unset); anything else is a named configuration error', () => {
    expect(loadConfig({ ...TEST_ENV, DNS_SERVERS: '127.0.0.1:5353, [::1]:53,10.0.0.2' }).calls.dnsServers).to.deep.equal([
      '127.0.0.1:5353',
      '[::1]:53',
      '10.0.0.2',
    ]);
    expect(loadConfig(TEST_ENV).calls.dnsServers).to.equal(undefined);
    for (const bad of ['dns.example', '127.0.0.1:port', ' , ']) {
      const err = (() => {
        try {
          return loadConfig({ ...TEST_ENV, DNS_SERVERS: bad });
        } catch (e) {
          return e;
        }
      })();
      expect(err, bad).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).problems, bad).to.deep.equal(['DNS_SERVERS: must be a comma-separated list of IP addresses, each with an optional :port']);
    }
  });

  it('a nameserver that never answers: another workspace’s delivery arrives while the lookups wait, libuv’s threads stay free, and the deliveries fail "DNS lookup timed out" (3 s at most)', async () => {
    const ns = await dnsServer({ 'dead.example': 'silent', 'alive.example': { A: ['127.0.0.1'] } });
    const r = await receiver();
    const { services, send, close } = outbound(ns.address, true);
    try {
      const a = await shop();
      const deadEndpoint = await endpoint(a, `http://dead.example:${r.port}/a`);
      const b = await shop();
      const aliveEndpoint = await endpoint(b, `http://alive.example:${r.port}/b`);
      await importOrders(a, 8);
      await b.agent.post('/api/orders').send(ORDER).expect(201);

      let aSettled = false;
      const aDrain = services.webhooks.drain(deadEndpoint, send).finally(() => (aSettled = true));
      // Eight lookups wait on the silent nameserver: twice what libuv's thread pool holds.
      await waitFor('A’s eight lookups to reach the nameserver', async () => ns.queries.filter((q) => q.name === 'dead.example' && q.type === 'A').length >= 8);
      // The thread pool is free: getaddrinfo and bcrypt run while A's lookups still wait.
      await Promise.all([dns.promises.lookup('localhost'), bcrypt.hash('a password', 4)]);
      expect(aSettled, 'the thread pool answered before A’s lookups ended').to.equal(false);
      expect(await services.webhooks.drain(aliveEndpoint, send)).to.deep.equal({ sent: 1, failed: 0 });
      expect(r.paths).to.deep.equal(['/b']);
      expect(aSettled, 'B was delivered while A’s lookups were still waiting').to.equal(false);

      expect(await aDrain).to.deep.equal({ sent: 0, failed: 8 });
      const rows = await deliveriesOf(deadEndpoint);
      expect(rows.map((d) => [d.status, d.attempts, d.last_error])).to.deep.equal(Array(8).fill(['pending', 1, 'DNS lookup timed out']));
      expect(DNS_TIMEOUT_MS, 'the configured deadline of a lookup').to.be.at.most(3000);
      const api = await a.agent.get(`/api/webhooks/${deadEndpoint}/deliveries`).expect(200);
      expect(api.body.deliveries.map((d: { last_error: string }) => d.last_error)).to.deep.equal(Array(8).fill('DNS lookup timed out'));
      expect(r.paths, 'nothing reached the receiver for A').to.deep.equal(['/b']);
    } finally {
      close();
      await r.close();
      await ns.close();
    }
  });

  it(`a workspace has at most ${WORKSPACE_IN_FLIGHT} endpoints in hand per worker: ten that never answer hold ${WORKSPACE_IN_FLIGHT} pollers, and another workspace’s delivery arrives`, async () => {
    const stuck = await receiver(true);
    const r = await receiver();
    const worker = await testWorker({ DELIVERY_TIMEOUT_SECONDS: '120' });
    try {
      const a = await shop();
      for (let i = 0; i < 10; i += 1) await endpoint(a, `http://127.0.0.1:${stuck.port}/e${i}`);
      const b = await shop();
      await endpoint(b, `http://127.0.0.1:${r.port}/b`);
      await a.agent.post('/api/orders').send(ORDER).expect(201);
      await waitFor(`${WORKSPACE_IN_FLIGHT} of A’s deliveries in flight`, async () => stuck.paths.length >= WORKSPACE_IN_FLIGHT);
      await b.agent.post('/api/orders').send(ORDER).expect(201);
      await waitFor('B’s delivery', async () => r.paths.includes('/b'));
      expect(stuck.paths, 'A never had more in flight').to.have.length(WORKSPACE_IN_FLIGHT);
    } finally {
      stuck.release();
      await worker.stop();
      await stuck.close();
      await r.close();
    }
  });

  it(`a workspace has at most ${WORKSPACE_IN_FLIGHT} call.requested in flight per worker: an agent that never answers holds ${WORKSPACE_IN_FLIGHT}, and another workspace’s call goes out`, async () => {
    const stuck = await agentDouble(() => 'hang');
    const fine = await agentDouble();
    const worker = await testWorker({ DELIVERY_TIMEOUT_SECONDS: '120' });
    try {
      const a = await voiceShop(stuck.url);
      // Enough calls to fill every poller's batch, were the workspace not held to its share.
      await importOrders(a, 90);
      await waitFor(`${WORKSPACE_IN_FLIGHT} of A’s calls in flight`, async () => stuck.received.length >= WORKSPACE_IN_FLIGHT, 60_000);
      const b = await voiceShop(fine.url);
      const order = (await b.agent.post('/api/orders').send(ORDER).expect(201)).body;
      await waitFor('B’s call.requested', async () => fine.received.some((req) => req.json?.data?.order?.id === order.id), 60_000);
      expect(stuck.received, 'A never had more in flight').to.have.length(WORKSPACE_IN_FLIGHT);
      const [open] = await testKnex()('calls').where({ workspace_id: a.workspaceId }).whereNull('ended_at').count({ n: '*' });
      expect(Number(open.n), 'A’s other calls wait their turn, still open').to.be.greaterThan(WORKSPACE_IN_FLIGHT);
    } finally {
      await stuck.close();
      await worker.stop();
      await fine.close();
    }
  });

  it('a host that resolves to a blocked address when we deliver (DNS rebinding): last_error says "address not allowed", never the address, in the database, the API and the page', async () => {
    const ns = await dnsServer({ 'rebind.example': { A: ['93.184.216.34'] } });
    const { services, send, close } = outbound(ns.address, false);
    try {
      // Saved while the name pointed at a public address (checked through the same nameserver)...
      const s = await shop(testApp({ ALLOW_PRIVATE_URLS: 'false', DNS_SERVERS: ns.address }));
      const id = await endpoint(s, 'http://rebind.example:8080/hooks');
      // ...then the name is moved inside the network.
      ns.zone['rebind.example'] = { A: ['10.20.30.40'] };
      await s.agent.post('/api/orders').send(ORDER).expect(201);
      expect(await services.webhooks.drain(id, send)).to.deep.equal({ sent: 0, failed: 1 });
      const [row] = await deliveriesOf(id);
      expect(row.last_error).to.equal('address not allowed');
      const api = await s.agent.get(`/api/webhooks/${id}/deliveries`).expect(200);
      expect(api.body.deliveries[0].last_error).to.equal('address not allowed');
      const page = await s.agent.get(`/webhooks/${id}`).expect(200);
      expect(page.text).to.contain('address not allowed');
      for (const text of [row.last_error, JSON.stringify(api.body), page.text]) expect(text).not.to.contain('10.20.30.40');
    } finally {
      close();
      await ns.close();
    }
  });
});
