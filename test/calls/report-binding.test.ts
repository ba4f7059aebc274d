import { expect } from 'chai';
import fc from 'fast-check';
import type { Knex } from 'knex';
import request from 'supertest';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { TRANSACTION_RETRIES } from '../../db/transaction';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import { createServices } from '../../services';
import { ACCEPT_WITHIN_MINUTES } from '../../services/calls';
import { msg } from '../../services/shared';
import type { SignedIn } from '../helpers/app';
import { appUrl, memberOf, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { agentDouble, callsOf, createOrder, humanShop, operationRow, orderRow, spendsOf, voiceShop, waitFor } from '../helpers/loop';

type Services = ReturnType<typeof createServices>;
const services = (() => {
  let made: Services | undefined;
  return () => (made ??= createServices(testKnex(), loadConfig({ ...TEST_ENV }), new Jobs(testKnex())));
})();

/** A voice shop with two open calls of its one agent (dispatched by the service, no worker running). */
async function twoVoiceCalls(credits = 10) {
  const agent = await agentDouble();
  const shop = await voiceShop(agent.url, credits);
  const orders = [
    await createOrder(shop, { clientName: 'A', phone: '0612345678', storeName: 'S', productsName: 'P' }),
    await createOrder(shop, { clientName: 'B', phone: '0612345679', storeName: 'S', productsName: 'P' }),
  ];
  for (const order of orders) expect(await services().calls.dispatch(order.operation_id!)).to.equal('dispatched');
  const [a, b] = await Promise.all(orders.map(async (order) => (await callsOf(order.operation_id!))[0].id as string));
  return { agent, shop, orders, a, b };
}

function post(callId: string, body: string, headers: Record<string, string>) {
  return request(appUrl()).post(`/hooks/calls/${callId}`).set(headers).set('Content-Type', 'application/json').send(body);
}

function signed(secret: string, payload: object, id = newMessageId()) {
  const body = JSON.stringify(payload);
  return { body, headers: signedHeaders(secret, id, body) };
}

const confirmed = (callId: string) => ({
  type: 'call.ended',
  data: { call_id: callId, outcome: 'confirmed', duration_seconds: 12, summary: null, changes: null },
});
const reportsOf = (callId: string) => testKnex()('call_reports').where({ call_id: callId });

describe('voice reports are bound to their call', function () {
  this.timeout(60_000);

  it('400 naming call_id when data.call_id is missing or names another call; nothing changes', async () => {
    const { agent, shop, orders, a, b } = await twoVoiceCalls();
    try {
      for (const payload of [
        { type: 'call.ended', data: { outcome: 'confirmed', duration_seconds: 3 } },
        { type: 'call.started' },
        confirmed(b),
        { type: 'call.started', data: { call_id: b } },
        { type: 'call.ended', data: { call_id: a.toUpperCase(), outcome: 'confirmed', duration_seconds: 3 } },
      ]) {
        const { body, headers } = signed(shop.secret, payload);
        const res = await post(a, body, headers).expect(400);
        expect(res.body.code).to.equal('VALIDATION_ERROR');
        expect(Object.keys(res.body.fields)).to.deep.equal(['call_id']);
      }
      expect((await callsOf(orders[0].operation_id!))[0]).to.include({ ended_at: null });
      expect((await orderRow(orders[0].id)).status).to.equal('processing');
      expect(await reportsOf(a)).to.have.length(0);
      expect(await spendsOf(a)).to.have.length(0);
    } finally {
      await agent.close();
    }
  });

  it('the signed bytes of a report for call A, posted to call B of the same agent, move nothing and charge nothing', async () => {
    const { agent, shop, orders, a, b } = await twoVoiceCalls();
    try {
      const captured = signed(shop.secret, confirmed(a));
      await post(a, captured.body, captured.headers).expect(200);
      expect((await post(b, captured.body, captured.headers).expect(400)).body.fields).to.have.property('call_id');
      const [callB] = await callsOf(orders[1].operation_id!);
      expect(callB).to.include({ ended_at: null, outcome: null });
      expect((await orderRow(orders[1].id)).status).to.equal('processing');
      expect(await spendsOf(b)).to.have.length(0);
      expect(await spendsOf(a)).to.have.length(1);
    } finally {
      await agent.close();
    }
  });

  it('409 replayed: a webhook-id already used for another call of the agent; the same id again for its own call is 200 and changes nothing more', async () => {
    const { agent, shop, orders, a, b } = await twoVoiceCalls();
    try {
      const id = newMessageId();
      const first = signed(shop.secret, confirmed(a), id);
      await post(a, first.body, first.headers).expect(200);
      const reused = signed(shop.secret, confirmed(b), id);
      expect((await post(b, reused.body, reused.headers).expect(409)).body).to.deep.equal({ error: 'replayed' });
      expect((await callsOf(orders[1].operation_id!))[0]).to.include({ ended_at: null });
      expect(await spendsOf(b)).to.have.length(0);
      expect(await reportsOf(b)).to.have.length(0);
      expect((await post(a, first.body, first.headers).expect(200)).body).to.deep.equal({ ok: true });
      expect(await spendsOf(a)).to.have.length(1);
      expect(await reportsOf(a)).to.have.length(1);
      // Another agent may use the same id for its own call.
      const other = await twoVoiceCalls();
      try {
        const theirs = signed(other.shop.secret, confirmed(other.a), id);
        await post(other.a, theirs.body, theirs.headers).expect(200);
      } finally {
        await other.agent.close();
      }
    } finally {
      await agent.close();
    }
  });

  it('webhook-id: 256 characters are taken; 257 and 3,000 are a 400 (never a 500); nothing is written', async () => {
    const { agent, shop, orders, a, b } = await twoVoiceCalls();
    try {
      for (const length of [257, 3000]) {
        const report = signed(shop.secret, confirmed(b), 'x'.repeat(length));
        const res = await post(b, report.body, report.headers).expect(400);
        expect(res.body).to.include({ code: 'VALIDATION_ERROR' });
        expect(res.body.fields).to.have.property('webhook-id');
      }
      expect(await reportsOf(b)).to.have.length(0);
      expect((await callsOf(orders[1].operation_id!))[0]).to.include({ ended_at: null });
      const longest = signed(shop.secret, confirmed(a), 'y'.repeat(256));
      await post(a, longest.body, longest.headers).expect(200);
      expect(await reportsOf(a)).to.have.length(1);
    } finally {
      await agent.close();
    }
  });

  it('a report whose signature does not hold writes nothing, and its webhook-id stays free', async () => {
    const { agent, shop, orders, a } = await twoVoiceCalls();
    try {
      const id = newMessageId();
      const forged = signed(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, confirmed(a), id);
      expect((await post(a, forged.body, forged.headers).expect(401)).body).to.deep.equal({ error: 'invalid_signature' });
      expect(await reportsOf(a)).to.have.length(0);
      expect((await orderRow(orders[0].id)).status).to.equal('processing');
      const real = signed(shop.secret, confirmed(a), id);
      await post(a, real.body, real.headers).expect(200);
      expect((await orderRow(orders[0].id)).status).to.equal('confirmed');
    } finally {
      await agent.close();
    }
  });

  it('fuzz: webhook-ids of random length and content, signed or not → never 5xx; only a signed report for this call with a short id is applied', async () => {
    const { agent, shop, a, b } = await twoVoiceCalls(1000);
    try {
      const webhookId = fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.string({ minLength: 200, maxLength: 3200 }),
        fc.integer({ min: 0, max: 4000 }).map((n) => 'i'.repeat(n)),
        fc.constantFrom('', ' ', `msg_${'é'.repeat(300)}`, '\u0000', '💥'.repeat(130)),
      );
      const forbidden = /[^\t\x20-\x7e]/g;
      await fc.assert(
        fc.asyncProperty(webhookId, fc.boolean(), fc.constantFrom(a, b), async (rawId, signIt, target) => {
          const id = rawId.replace(forbidden, '').trim();
          const body = JSON.stringify({ type: 'call.started', data: { call_id: target } });
          const headers = signIt
            ? signedHeaders(shop.secret, id, body)
            : { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' };
          const res = await post(target, body, headers);
          expect(res.status, `${signIt ? 'signed' : 'unsigned'} id of ${id.length}`).to.be.below(500);
          if (id.length > 256) expect(res.status).to.equal(400);
          else if (!signIt || id === '') expect(res.status).to.equal(401);
          else expect(res.status).to.be.oneOf([200, 409]);
        }),
        { seed: 28, numRuns: 120 },
      );
      const ids = await testKnex()('call_reports').whereIn('call_id', [a, b]).pluck('webhook_id');
      expect(ids.every((id: string) => id.length > 0 && id.length <= 256)).to.equal(true);
    } finally {
      await agent.close();
    }
  });
});

/** Backends of this database waiting on a row lock. */
async function lockWaiters(): Promise<number> {
  const { rows } = await testKnex().raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
  return rows[0].n;
}

/** A human shop with `n` orders, each with a call claimed by the owner. */
async function claimedOrders(n: number) {
  const shop = await humanShop();
  const claims: Array<{ orderId: string; callId: string; operationId: string; member: SignedIn }> = [];
  for (let i = 0; i < n; i += 1) await createOrder(shop, { clientName: `Race ${i}`, phone: '0612345678', storeName: 'S', productsName: `P${i}` });
  for (let i = 0; i < n; i += 1) {
    // One member per call: a member holds one open call at a time (issue 53, defect 6).
    const member = await memberOf(shop);
    const res = await member.agent.post('/api/calls/next').expect(200);
    claims.push({ orderId: res.body.order.id, callId: res.body.call.id, operationId: res.body.operation.id, member });
  }
  return { shop, claims };
}

/** The order, its operation and its call after a person set `unconfirmed` and the member recorded `confirmed`, in either order. */
async function expectOneOfTheTwoOrders(claim: { orderId: string; callId: string; operationId: string }) {
  const order = await orderRow(claim.orderId);
  const op = await operationRow(claim.operationId);
  const [call] = await testKnex()('calls').where({ id: claim.callId });
  expect(call).to.include({ outcome: 'confirmed' });
  expect(call.ended_at).to.not.equal(null);
  // Outcome first: the operation completed, then the person's status. Status first: the operation cancelled, the order as the person left it.
  expect(order.status).to.equal('unconfirmed');
  expect(op.status).to.be.oneOf(['completed', 'cancelled']);
}

describe('one lock order: order, operation, call', function () {
  this.timeout(120_000);

  it('an outcome waiting on the operation and a status change on the order both finish (no deadlock, no 500)', async () => {
    const { shop, claims } = await claimedOrders(1);
    const [claim] = claims;
    const gate = await testKnex().transaction();
    try {
      await gate.raw('SELECT id FROM operations WHERE id = ? FOR UPDATE', [claim.operationId]);
      const outcome = claim.member.agent
        .post(`/api/calls/${claim.callId}/outcome`)
        .send({ outcome: 'confirmed' })
        .then((r) => r);
      await waitFor('the outcome waits on a lock', async () => (await lockWaiters()) >= 1);
      const status = shop.agent
        .put(`/api/orders/${claim.orderId}`)
        .send({ status: 'unconfirmed' })
        .then((r) => r);
      await waitFor('the status change waits on a lock', async () => (await lockWaiters()) >= 2);
      await gate.commit();
      const [o, s] = await Promise.all([outcome, status]);
      expect([o.status, s.status], JSON.stringify([o.body, s.body])).to.deep.equal([200, 200]);
    } finally {
      if (!gate.isCompleted()) await gate.rollback();
    }
    await expectOneOfTheTwoOrders(claim);
  });

  it('50 simultaneous pairs (a member records an outcome, the owner sets a status): every request answered 200, each order in one of the two orders of events', async () => {
    const { shop, claims } = await claimedOrders(50);
    const answers = await Promise.all(
      claims.map(async (claim) => {
        const outcome = claim.member.agent
          .post(`/api/calls/${claim.callId}/outcome`)
          .send({ outcome: 'confirmed' })
          .then((r) => r);
        await new Promise((resolve) => setImmediate(resolve));
        const status = shop.agent
          .put(`/api/orders/${claim.orderId}`)
          .send({ status: 'unconfirmed' })
          .then((r) => r);
        return Promise.all([outcome, status]);
      }),
    );
    const statuses = answers.flat().map((r) => r.status);
    expect(
      statuses.filter((s) => s !== 200),
      JSON.stringify(
        answers
          .flat()
          .filter((r) => r.status !== 200)
          .map((r) => r.body),
      ),
    ).to.deep.equal([]);
    for (const claim of claims) await expectOneOfTheTwoOrders(claim);
  });

  it('the transaction helper runs a deadlock victim again: two transactions locking two rows in opposite orders both commit', async () => {
    const knex = testKnex();
    await knex.raw('CREATE TABLE IF NOT EXISTS test_lock_rows (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)');
    const ids = [Date.now() % 1_000_000_000, (Date.now() % 1_000_000_000) + 1];
    await knex('test_lock_rows').insert(ids.map((id) => ({ id })));
    let runs = 0;
    let holding = 0;
    const bothHolding = () => waitFor('both hold their first row', async () => holding >= 2, 10_000);
    const transfer = (first: number, second: number) =>
      knex.transaction(async (trx: Knex.Transaction) => {
        runs += 1;
        await trx('test_lock_rows').where({ id: first }).increment('n', 1);
        holding += 1;
        await bothHolding();
        await trx('test_lock_rows').where({ id: second }).increment('n', 1);
      });
    await Promise.all([transfer(ids[0], ids[1]), transfer(ids[1], ids[0])]);
    // Usually Postgres picks one victim; when both backends' deadlock checks run before either has let
    // go of its row (a loaded machine), both are victims and both run again: either way, each ran again
    // at most the helper's retries and both committed.
    expect(runs, 'a victim ran again').to.be.within(3, 2 * (1 + TRANSACTION_RETRIES));
    expect(await knex('test_lock_rows').whereIn('id', ids).orderBy('id').pluck('n')).to.deep.equal([2, 2]);
    await knex('test_lock_rows').whereIn('id', ids).delete();
  });

  it(`gives up after ${TRANSACTION_RETRIES} more runs, and never runs again for other errors`, async () => {
    let runs = 0;
    const conflict = Object.assign(new Error('could not serialize access'), { code: '40001' });
    const failing = testKnex().transaction(async () => {
      runs += 1;
      throw conflict;
    });
    await failing.then(
      () => expect.fail('resolved'),
      (err: unknown) => expect(err).to.equal(conflict),
    );
    expect(runs).to.equal(TRANSACTION_RETRIES + 1);
    runs = 0;
    await testKnex()
      .transaction(async () => {
        runs += 1;
        throw new Error('not a conflict');
      })
      .catch(() => undefined);
    expect(runs).to.equal(1);
  });
});

describe('no call stays open forever', function () {
  this.timeout(60_000);

  it(`a voice call not accepted within ${ACCEPT_WITHIN_MINUTES} minutes ends failed, "agent unreachable": nothing charged, its credit free again, section 6 applies`, async () => {
    const { agent, shop, orders, a, b } = await twoVoiceCalls(2);
    try {
      const capacity = async () =>
        services().calls.pausedForCredits(shop.workspaceId!, (await testKnex()('workspaces').where({ id: shop.workspaceId }).first('owner_id')).owner_id);
      expect(await capacity(), 'two open calls hold both credits').to.equal(true);
      const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
      await testKnex()('calls')
        .where({ id: a })
        .update({ started_at: minutesAgo(ACCEPT_WITHIN_MINUTES + 1) });
      // B was accepted long ago: its result time-out applies, not this rule.
      await testKnex()('calls')
        .where({ id: b })
        .update({
          started_at: minutesAgo(ACCEPT_WITHIN_MINUTES + 1),
          accepted_at: minutesAgo(ACCEPT_WITHIN_MINUTES),
          result_due_at: new Date(Date.now() + 5 * 60_000),
        });
      const result = await services().sweep.run();
      expect(result.unreachable).to.be.at.least(1);
      const [callA] = await testKnex()('calls').where({ id: a });
      expect(callA).to.include({ outcome: 'failed', summary: 'agent unreachable', ended_by: 'system' });
      expect(Number(callA.cost)).to.equal(0);
      expect(await spendsOf(a)).to.have.length(0);
      expect((await orderRow(orders[0].id)).status).to.equal('failed');
      expect(await operationRow(orders[0].operation_id!)).to.include({ status: 'pending', attempts: 1 });
      expect(await capacity(), 'the credit A held is free again').to.equal(false);
      expect((await testKnex()('calls').where({ id: b }).first()).ended_at).to.equal(null);
    } finally {
      await agent.close();
    }
  });

  it('a call requested less than 25 minutes ago stays open', async () => {
    const { agent, a } = await twoVoiceCalls();
    try {
      await testKnex()('calls')
        .where({ id: a })
        .update({ started_at: new Date(Date.now() - (ACCEPT_WITHIN_MINUTES - 1) * 60_000) });
      await services().sweep.run();
      expect((await testKnex()('calls').where({ id: a }).first()).ended_at).to.equal(null);
      expect(await services().calls.fail(a, msg('callAgentUnreachable'), 'acceptance')).to.equal(false);
    } finally {
      await agent.close();
    }
  });
});
