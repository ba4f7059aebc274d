import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import type { Knex } from 'knex';
import request from 'supertest';
import { createKnex } from '../../db/knex';
import type { SignedIn } from '../helpers/app';
import { signUp, TEST_ENV } from '../helpers/app';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { connectionRefused, startServer } from '../helpers/process';
import { startThrowawayRedis } from '../helpers/redis-server';
import type { ThrowawayPostgres } from '../helpers/throwaway-postgres';
import { startThrowawayPostgres } from '../helpers/throwaway-postgres';

const ORDER = { clientName: 'Said', phone: '0612345678', storeName: 'Atlas', productsName: 'Tajine' };
const serverEnv = (databaseUrl: string, extra: Record<string, string> = {}) => ({
  ...TEST_ENV,
  NODE_ENV: 'development',
  DATABASE_URL: databaseUrl,
  REDIS_URL: undefined,
  ...extra,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A shop with an order handler, signed up through the server at `url`. */
async function shop(url: string, knex: Knex): Promise<SignedIn> {
  const owner = await signUp({ target: url, knex });
  await owner.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  return owner;
}

/** Every order of the workspace has exactly one operation. */
async function ordersWithoutExactlyOneOperation(knex: Knex, workspaceId: string): Promise<number> {
  const rows = await knex('orders as o')
    .leftJoin('operations as op', 'op.order_id', 'o.id')
    .where('o.workspace_id', workspaceId)
    .groupBy('o.id')
    .havingRaw('count(op.id) <> 1')
    .select('o.id');
  return rows.length;
}

function expectCleanError(res: request.Response): void {
  expect(res.status).to.be.within(500, 599);
  expect(res.body).to.have.property('error').that.is.a('string');
  expect(res.text).not.to.match(/\bat .+\.js:\d+|SELECT|INSERT|ECONNREFUSED/);
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not recovered within ${timeoutMs} ms`);
    await sleep(200);
  }
}

describe('faults survived', function () {
  this.timeout(120_000);

  describe('with a Postgres of our own', () => {
    let pg: ThrowawayPostgres;
    let knex: Knex;
    let server: RunningServer | undefined;

    before(async () => {
      pg = await startThrowawayPostgres();
      knex = createKnex(pg.url);
    });
    afterEach(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      server = undefined;
    });
    after(async () => {
      await knex?.destroy();
      await pg?.destroy();
    });

    it('Postgres restarted under load: clean 5xx during the outage, full recovery after, nothing half-written', async () => {
      server = await startServer(serverEnv(pg.url));
      const owner = await shop(server.url, knex);
      const acknowledged: string[] = [];
      const failures: request.Response[] = [];
      let running = true;
      const worker = async () => {
        while (running) {
          const res = await owner.agent.post('/api/orders').send(ORDER);
          if (res.status === 201) acknowledged.push(res.body.id);
          else failures.push(res);
          await sleep(10);
        }
      };
      const workers = Array.from({ length: 4 }, worker);
      await sleep(300);
      await pg.stop();
      await sleep(1500);
      const duringOutage = await Promise.all([
        owner.agent.get('/api/orders'),
        owner.agent.get('/api/credits'),
        request(server.url).get('/healthz'),
        owner.agent.get('/orders'),
      ]);
      await pg.start();
      const recovered = Date.now();
      await until(async () => ((await owner.agent.get('/api/orders')).status === 200 ? true : undefined), 15_000);
      const recoveryMs = Date.now() - recovered;
      running = false;
      await Promise.all(workers);

      expect(server.child.exitCode, 'the server did not crash').to.equal(null);
      expect(failures.length, 'some requests met the outage').to.be.greaterThan(0);
      failures.forEach(expectCleanError);
      expectCleanError(duringOutage[0]);
      expectCleanError(duringOutage[1]);
      expect(duringOutage[2].status).to.equal(503);
      expect(duringOutage[3].status, 'a page gets the error page').to.equal(500);
      expect(duringOutage[3].text)
        .to.contain('Something went wrong')
        .and.not.match(/\bat .+\.js:\d+|SELECT|ECONNREFUSED/);
      expect(recoveryMs).to.be.lessThan(15_000);

      // Every route works again without restarting the server.
      await owner.agent.post('/api/orders').send(ORDER).expect(201);
      await owner.agent.get('/api/credits').expect(200);
      await request(server.url).get('/healthz').expect(200);
      await owner.agent.get('/workspace').expect(200);
      await owner.agent.get('/orders').expect(200);
      const ids = (await owner.agent.get('/api/orders').expect(200)).body.orders.map((o: { id: string }) => o.id);
      expect(ids).to.include.members(acknowledged);
      expect(await ordersWithoutExactlyOneOperation(knex, owner.workspaceId!)).to.equal(0);
    });

    it('kill -9 in the middle of a burst of order creations: acknowledged orders exist, each with one operation', async () => {
      server = await startServer(serverEnv(pg.url));
      const owner = await shop(server.url, knex);
      const cookie = owner.cookie;
      const acknowledged: string[] = [];
      const burst = Array.from({ length: 60 }, async (_, i) => {
        await sleep(i * 3);
        const res = await owner.agent
          .post('/api/orders')
          .send(ORDER)
          .catch(() => undefined);
        if (res?.status === 201) acknowledged.push(res.body.id);
      });
      await sleep(60);
      server.child.kill('SIGKILL');
      await Promise.all(burst);
      expect(await server.exited).to.equal(null);

      server = await startServer(serverEnv(pg.url));
      const stored = await knex('orders').where({ workspace_id: owner.workspaceId }).pluck('id');
      expect(stored).to.include.members(acknowledged);
      expect(await ordersWithoutExactlyOneOperation(knex, owner.workspaceId!)).to.equal(0);
      // And the restarted server serves the same session.
      const res = await request(server.url).get('/api/orders').set('Cookie', cookie).expect(200);
      expect(res.body.orders).to.have.length(stored.length);
    });
  });

  it('SIGTERM under load: every accepted request completes, new connections are refused, exit 0', async () => {
    const server = await startServer(serverEnv(testDatabaseUrl()));
    const owner = await shop(server.url, testKnex());
    const cookie = owner.cookie;
    // Ten requests held in flight by slow bodies, plus a stream of fast ones on keep-alive.
    const body = JSON.stringify(ORDER);
    const slow = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const socket = net.connect(server.port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        let response = '';
        socket.on('data', (c) => (response += c));
        const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(response)));
        socket.write(
          `POST /api/orders HTTP/1.1\r\nHost: localhost\r\nCookie: ${cookie}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
        );
        return { socket, closed };
      }),
    );
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 8 });
    let stop = false;
    const fast: number[] = [];
    const fastErrors: string[] = [];
    const loops = Array.from({ length: 8 }, async () => {
      while (!stop) {
        try {
          fast.push(await status(`${server.url}/api/orders`, cookie, keepAlive));
        } catch (err) {
          fastErrors.push((err as NodeJS.ErrnoException).code ?? String(err));
        }
      }
    });
    await sleep(300);
    server.child.kill('SIGTERM');
    await sleep(300);
    stop = true;
    await Promise.all(loops);
    keepAlive.destroy();

    const refused = await connectionRefused(server.port);
    expect(refused).to.equal(true);
    for (const { socket } of slow) socket.write(body.slice(5));
    const responses = await Promise.all(slow.map((s) => s.closed));
    for (const response of responses) expect(response).to.match(/^HTTP\/1\.1 201 Created/);
    expect(fast.length).to.be.greaterThan(0);
    expect(fast.every((s) => s === 200)).to.equal(true);
    // After the drain began, new requests can only be refused, never cut half-way.
    expect(fastErrors.every((code) => code === 'ECONNREFUSED' || code === 'ECONNRESET')).to.equal(true);
    expect(await server.exited).to.equal(0);
  });

  it('Redis stopped: token exchange fails open within 3 s, sessions and orders unaffected, limits back with Redis', async function () {
    const redis = await startThrowawayRedis(this);
    const server = await startServer(serverEnv(testDatabaseUrl(), { REDIS_URL: redis.url, TOKEN_LIMIT_PER_KEY: '3' }));
    try {
      const owner = await shop(server.url, testKnex());
      const { key } = (await owner.agent.post('/api/keys').send({}).expect(201)).body;
      const exchange = () => request(server.url).post('/api/v1/token').set('Authorization', `Bearer ${key}`);
      await exchange().expect(200);
      await redis.stop();
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        await exchange().expect(200);
        expect(Date.now() - started).to.be.lessThan(3000);
      }
      await owner.agent.post('/api/orders').send(ORDER).expect(201);
      await owner.agent.get('/api/orders').expect(200);
      const relogin = await signUp({ target: server.url });
      await relogin.agent.get('/api/credits').expect(200);
      expect(server.output()).to.contain('rate limit store unavailable');

      await redis.start();
      await until(async () => ((await exchange()).status === 429 ? true : undefined), 15_000);
      expect((await exchange()).body).to.deep.equal({ error: 'rate_limited' });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await redis.stop();
    }
  });
});

function status(url: string, cookie: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers: { cookie } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}
