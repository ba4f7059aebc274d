import { expect } from 'chai';
import type { Knex } from 'knex';
import request from 'supertest';
import { createKnex } from '../../db/knex';
import { migrateLatest } from '../../db/migrate';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import { signUp, TEST_ENV } from '../helpers/app';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import { agentDouble, ORDER, waitFor } from '../helpers/loop';
import { startServer, startWorkerProcess } from '../helpers/process';
import type { WorkerProcess } from '../helpers/process';
import { startThrowawayPostgres } from '../helpers/throwaway-postgres';

async function voiceWorkspace(target: string | undefined, knex: Knex, endpointUrl: string, credits: number) {
  const shop = await signUp(target ? { target, knex } : {});
  const agent = await shop.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl, orderHandler: true }).expect(201);
  await shop.agent
    .put('/api/settings/calls')
    .send({ callingHours: { start: '00:00', end: '24:00' } })
    .expect(200);
  const owner = await knex('workspaces').where({ id: shop.workspaceId }).first('owner_id');
  await knex('credit_ledger').insert({ user_id: owner.owner_id, kind: 'grant', amount: credits });
  return { shop, secret: agent.body.secret as string };
}

describe('the worker as its own process', function () {
  this.timeout(240_000);

  it('SIGTERM: finishes what it holds and exits 0; npm start runs a worker in development unless WORKER=off', async () => {
    const worker = await startWorkerProcess(testDatabaseUrl());
    worker.child.kill('SIGTERM');
    expect(await worker.exited).to.equal(0);
    expect(worker.output()).to.contain('"msg":"worker stopped"');

    const dev = await startServer({ ...TEST_ENV, NODE_ENV: 'development', DATABASE_URL: testDatabaseUrl(), REDIS_URL: undefined });
    expect(dev.output()).to.contain('"msg":"worker started"');
    dev.child.kill('SIGTERM');
    expect(await dev.exited).to.equal(0);
    const off = await startServer({ ...TEST_ENV, NODE_ENV: 'development', WORKER: 'off', DATABASE_URL: testDatabaseUrl(), REDIS_URL: undefined });
    expect(off.output()).not.to.contain('worker started');
    off.child.kill('SIGTERM');
    expect(await off.exited).to.equal(0);
  });

  it('SIGTERM with a delivery in flight: the worker finishes it (the call is accepted), then exits 0', async () => {
    const agent = await agentDouble(() => 202, 3000);
    const worker = await startWorkerProcess(testDatabaseUrl());
    try {
      const { shop } = await voiceWorkspace(undefined, testKnex(), agent.url, 10);
      const order = await shop.agent.post('/api/orders').send(ORDER).expect(201);
      await waitFor('the call.requested in flight', async () => agent.received.some((r) => r.json.data.order.id === order.body.id));
      worker.child.kill('SIGTERM');
      expect(await worker.exited).to.equal(0);
      const [call] = await testKnex()('calls').where({ operation_id: order.body.operation_id });
      expect(call.accepted_at, 'the delivery in hand was finished and recorded').to.not.equal(null);
    } finally {
      worker.child.kill('SIGKILL');
      await agent.close();
    }
  });

  it('kill -9 in the middle of a burst: every due call is dispatched, none twice, once another worker runs', async () => {
    // A slow agent: deliveries are in flight when the worker dies.
    const agent = await agentDouble(() => 202, 1500);
    const first = await startWorkerProcess(testDatabaseUrl());
    let second: WorkerProcess | undefined;
    try {
      const { shop } = await voiceWorkspace(undefined, testKnex(), agent.url, 1000);
      const orders = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          shop.agent
            .post('/api/orders')
            .send({ ...ORDER, clientName: `Burst ${i}` })
            .expect(201),
        ),
      );
      await waitFor('some calls requested', async () => agent.received.length >= 3);
      first.child.kill('SIGKILL');
      await first.exited;
      // The agent holds each answer 1.5 s: deliveries were in flight, unacknowledged, when the worker died.
      const acceptedBeforeKill = await testKnex()('calls').where({ workspace_id: shop.workspaceId }).whereNotNull('accepted_at');
      expect(acceptedBeforeKill.length, 'killed in the middle of the burst').to.be.below(40);
      second = await startWorkerProcess(testDatabaseUrl());
      const ids = new Set(orders.map((o) => o.body.id));
      await waitFor(
        'every order’s call requested',
        async () => new Set(agent.received.map((r) => r.json.data.order.id).filter((id) => ids.has(id))).size === 40,
        120_000,
      );
      // Deliveries the dead worker had in flight come back once their jobs expire, and are accepted.
      await waitFor(
        'every call accepted',
        async () => {
          const open = await testKnex()('calls').where({ workspace_id: shop.workspaceId }).whereNull('accepted_at');
          return open.length === 0;
        },
        120_000,
      );
      const calls = await testKnex()('calls').where({ workspace_id: shop.workspaceId });
      expect(calls, 'one call per order').to.have.length(40);
      const byCall = new Map<string, Set<string>>();
      for (const r of agent.received) {
        if (!byCall.has(r.json.data.call_id)) byCall.set(r.json.data.call_id, new Set());
        byCall.get(r.json.data.call_id)!.add(String(r.headers['webhook-id']));
      }
      for (const call of calls) expect(byCall.get(call.id)?.size, 'one message per call, whatever was re-sent').to.equal(1);
    } finally {
      first.child.kill('SIGKILL');
      second?.child.kill('SIGTERM');
      await second?.exited;
      await agent.close();
    }
  });

  it('two worker processes and a web process with its own worker: no call dispatched twice, no credit charged twice', async () => {
    const agent = await agentDouble();
    const web = await startServer({ ...TEST_ENV, NODE_ENV: 'development', DATABASE_URL: testDatabaseUrl(), REDIS_URL: undefined });
    const workers = await Promise.all([startWorkerProcess(testDatabaseUrl()), startWorkerProcess(testDatabaseUrl())]);
    try {
      const { shop, secret } = await voiceWorkspace(web.url, testKnex(), agent.url, 1000);
      const orders = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          shop.agent
            .post('/api/orders')
            .send({ ...ORDER, clientName: `Race ${i}` })
            .expect(201),
        ),
      );
      const ids = new Set(orders.map((o) => o.body.id));
      await waitFor(
        'every call requested',
        async () => new Set(agent.received.map((r) => r.json.data.order.id).filter((id) => ids.has(id))).size === 30,
        60_000,
      );
      // Each call's result, reported twice (an agent retrying), to the web process.
      const mine = agent.received.filter((r) => ids.has(r.json.data.order.id));
      for (const r of mine) {
        const body = JSON.stringify({ type: 'call.ended', data: { call_id: r.json.data.call_id, outcome: 'confirmed', duration_seconds: 20 } });
        const headers = signedHeaders(secret, newMessageId(), body);
        for (let i = 0; i < 2; i += 1)
          await request(web.url).post(`/hooks/calls/${r.json.data.call_id}`).set(headers).set('Content-Type', 'application/json').send(body).expect(200);
      }
      const calls = await testKnex()('calls').where({ workspace_id: shop.workspaceId });
      expect(calls).to.have.length(30);
      expect(new Set(mine.map((r) => r.json.data.call_id)).size, 'no call requested twice').to.equal(mine.length);
      const spends = await testKnex()('credit_ledger').whereIn(
        'call_id',
        calls.map((c) => c.id),
      );
      expect(spends, 'one charge per call').to.have.length(30);
      const statuses = await testKnex()('orders')
        .whereIn('id', [...ids])
        .pluck('status');
      expect(new Set(statuses)).to.deep.equal(new Set(['confirmed']));
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      web.child.kill('SIGTERM');
      await Promise.all([...workers.map((w) => w.exited), web.exited]);
      await agent.close();
    }
  });

  it('Postgres restarted under the worker: it recovers without a restart and dispatches again', async () => {
    const pg = await startThrowawayPostgres();
    const knex = createKnex(pg.url);
    const agent = await agentDouble();
    let worker: WorkerProcess | undefined;
    try {
      await migrateLatest(knex, { secretsKey: TEST_ENV.SECRETS_KEY });
      const web = await startServer({ ...TEST_ENV, NODE_ENV: 'development', WORKER: 'off', DATABASE_URL: pg.url, REDIS_URL: undefined });
      worker = await startWorkerProcess(pg.url);
      const { shop } = await voiceWorkspace(web.url, knex, agent.url, 100);
      await shop.agent.post('/api/orders').send(ORDER).expect(201);
      await waitFor('first call requested', async () => agent.received.length >= 1);
      await pg.stop();
      await pg.start();
      const after = await waitFor(
        'web back',
        async () => {
          const res = await shop.agent
            .post('/api/orders')
            .send({ ...ORDER, clientName: 'After restart' })
            .catch(() => undefined);
          return res?.status === 201 ? res : undefined;
        },
        60_000,
      );
      await waitFor('the worker dispatches after the restart', async () => agent.received.some((r) => r.json.data.order.id === after.body.id), 90_000).catch(
        (err) => {
          const lines = worker!
            .output()
            .split('\n')
            .map((l) => l.slice(0, 400));
          throw new Error(`${err.message}\nworker output (lines cut at 400 characters):\n${lines.slice(-60).join('\n')}`);
        },
      );
      expect(worker.child.exitCode, 'the worker was never restarted').to.equal(null);
      web.child.kill('SIGTERM');
      await web.exited;
    } finally {
      worker?.child.kill('SIGTERM');
      await worker?.exited;
      await agent.close();
      await knex.destroy();
      await pg.destroy();
    }
  });
});
