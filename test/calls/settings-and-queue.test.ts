import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { isOpen, nextOpening } from '../../services/calls';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import { appUrl, memberOf, signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { callsOf, createOrder, expectIso, humanShop, operationRow, orderRow, ORDER } from '../helpers/loop';

const ABSENT = '00000000-0000-4000-8000-000000000000';

describe('GET/PUT /api/settings/calls', () => {
  it('200: the defaults, then each field changed alone; the others are kept', async () => {
    const shop = await signUp();
    const res = await shop.agent.get('/api/settings/calls').expect(200);
    expect(res.body).to.deep.equal({
      max_attempts: 3,
      retry_interval_minutes: 120,
      calling_hours: { start: '09:00', end: '21:00' },
      timezone: 'Africa/Casablanca',
    });
    const put = await shop.agent.put('/api/settings/calls').send({ maxAttempts: 5 }).expect(200);
    expect(put.body).to.deep.equal({ ...res.body, max_attempts: 5 });
    const snake = await shop.agent
      .put('/api/settings/calls')
      .send({ retry_interval_minutes: 30, calling_hours: { start: '08:30', end: '24:00' } })
      .expect(200);
    expect(snake.body).to.deep.equal({
      max_attempts: 5,
      retry_interval_minutes: 30,
      calling_hours: { start: '08:30', end: '24:00' },
      timezone: 'Africa/Casablanca',
    });
    expect(await testKnex()('call_settings').where({ workspace_id: shop.workspaceId }).first()).to.include({
      max_attempts: 5,
      retry_interval_minutes: 30,
      hours_start: '08:30',
      hours_end: '24:00',
    });
  });

  it('400 VALIDATION_ERROR naming each bad field; nothing changes', async () => {
    const shop = await signUp();
    for (const body of [
      { maxAttempts: 0, retryIntervalMinutes: 1441, callingHours: { start: '9', end: '25:00' } },
      { maxAttempts: 1.5, retryIntervalMinutes: '60', callingHours: { start: '21:00', end: '09:00' } },
      { maxAttempts: 11, callingHours: 'all day' },
    ]) {
      const res = await shop.agent.put('/api/settings/calls').send(body).expect(400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
      expect(Object.keys(res.body.fields)).to.have.members(Object.keys(body));
    }
    expect(await testKnex()('call_settings').where({ workspace_id: shop.workspaceId }).first()).to.equal(undefined);
  });

  it('401 signed out, 403 without a workspace', async () => {
    await request(appUrl()).get('/api/settings/calls').expect(401);
    const lonely = await signUp({ workspace: null });
    await lonely.agent.put('/api/settings/calls').send({ maxAttempts: 2 }).expect(403);
  });
});

describe('calling hours (Africa/Casablanca)', () => {
  const hours = { max_attempts: 3, retry_interval_minutes: 120, calling_hours: { start: '09:00', end: '21:00' }, timezone: 'Africa/Casablanca' as const };
  it('is open from start (inclusive) to end (exclusive), Morocco time; closed hours wait for the next opening', () => {
    // 2026-11-22: Morocco is at UTC+1 outside Ramadan.
    expect(isOpen(hours, new Date('2026-11-22T08:00:00Z'))).to.equal(true); // 09:00 local
    expect(isOpen(hours, new Date('2026-11-22T07:59:00Z'))).to.equal(false);
    expect(isOpen(hours, new Date('2026-11-22T20:00:00Z'))).to.equal(false); // 21:00 local
    expect(nextOpening(hours, new Date('2026-11-22T06:00:00Z')).toISOString()).to.equal('2026-11-22T08:00:00.000Z');
    expect(nextOpening(hours, new Date('2026-11-22T21:30:00Z')).toISOString()).to.equal('2026-11-23T08:00:00.000Z');
    expect(nextOpening(hours, new Date('2026-11-22T10:00:00Z')).toISOString()).to.equal('2026-11-22T10:00:00.000Z');
  });
});

describe('GET /api/orders/:id/operations and POST …/operations (call again)', () => {
  it('200: the order’s operations oldest first, each with its calls; the Data API twin answers the same', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    const res = await shop.agent.get(`/api/orders/${order.id}/operations`).expect(200);
    expect(res.body.operations).to.have.length(1);
    const [op] = res.body.operations;
    expect(op).to.have.all.keys('id', 'order_id', 'agent_id', 'status', 'attempts', 'next_attempt_at', 'created_at', 'calls');
    expect(op).to.include({ id: order.operation_id, order_id: order.id, agent_id: shop.handlerId, status: 'pending', attempts: 0 });
    expectIso(op.next_attempt_at);
    expect(op.calls).to.deep.equal([]);
  });

  it('201: a new pending operation due now once the first is closed; the order is pending again; 409 while one is open', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    const open = await shop.agent.post(`/api/orders/${order.id}/operations`).expect(409);
    expect(open.body.code).to.equal('OPERATION_OPEN');
    await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'unconfirmed' }).expect(200);
    expect((await operationRow(order.operation_id!)).status).to.equal('cancelled');
    const again = await shop.agent.post(`/api/orders/${order.id}/operations`).expect(201);
    expect(again.body).to.include({ status: 'pending', order_id: order.id, agent_id: shop.handlerId, attempts: 0 });
    expect(new Date(again.body.next_attempt_at).getTime()).to.be.at.most(Date.now() + 1000);
    expect((await orderRow(order.id)).status).to.equal('pending');
    expect((await shop.agent.get(`/api/orders/${order.id}`).expect(200)).body.operation_id).to.equal(again.body.id);
    const list = await shop.agent.get(`/api/orders/${order.id}/operations`).expect(200);
    expect(list.body.operations.map((o: { status: string }) => o.status)).to.deep.equal(['cancelled', 'pending']);
  });

  it('an order’s operation_id is its latest operation (newest created_at, then greatest id), however operations are written', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    const knex = testKnex();
    const latest = async () =>
      (
        await knex('operations')
          .where({ order_id: order.id })
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .first('id')
      ).id;
    const shown = async () => {
      const one = (await shop.agent.get(`/api/orders/${order.id}`).expect(200)).body.operation_id;
      const listed = (await shop.agent.get('/api/orders').expect(200)).body.orders.find((o: { id: string }) => o.id === order.id);
      const searched = (await shop.agent.get('/api/orders').query({ q: ORDER.clientName }).expect(200)).body.orders.find(
        (o: { id: string }) => o.id === order.id,
      );
      expect(listed.operation_id).to.equal(one);
      expect(searched.operation_id).to.equal(one);
      expect((await orderRow(order.id)).operation_id).to.equal(one);
      return one;
    };
    expect(await shown())
      .to.equal(order.operation_id)
      .and.equal(await latest());
    const op = (id: string, createdAt: string) => ({
      id,
      workspace_id: shop.workspaceId!,
      order_id: order.id,
      agent_id: shop.handlerId,
      direction: 'outbound',
      status: 'completed',
      created_at: createdAt,
    });
    // Older than the order's first operation: the first stays the current one.
    await knex('operations').insert(op(crypto.randomUUID(), '2020-01-01T00:00:00Z'));
    expect(await shown())
      .to.equal(order.operation_id)
      .and.equal(await latest());
    // Two in one statement at the same instant, after it: the greater id is the latest (uuids compare as their hex text).
    const at = new Date(Date.now() + 60_000).toISOString();
    const [low, high] = [crypto.randomUUID(), crypto.randomUUID()].sort();
    await knex('operations').insert([op(high, at), op(low, at)]);
    expect(await shown())
      .to.equal(high)
      .and.equal(await latest());
    // Every order written so far in this database, by every test before this one: the column is what the lookup gives.
    const { rows } = await knex.raw(
      'SELECT count(*)::int AS n FROM orders o WHERE o.operation_id IS DISTINCT FROM (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1)',
    );
    expect(rows[0].n).to.equal(0);
  });

  it('422 NO_ORDER_HANDLER without a handler; 404 for unknown, malformed and foreign ids', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed' }).expect(200);
    await testKnex()('agents').where({ id: shop.handlerId }).update({ is_order_handler: false });
    const res = await shop.agent.post(`/api/orders/${order.id}/operations`).expect(422);
    expect(res.body).to.deep.include({ code: 'NO_ORDER_HANDLER', redirectTo: '/agents' });
    const other = await humanShop();
    for (const id of [ABSENT, 'not-a-uuid', order.id]) {
      await other.agent.get(`/api/orders/${id}/operations`).expect(404);
      await other.agent.post(`/api/orders/${id}/operations`).expect(404);
    }
    expect(await testKnex()('operations').where({ order_id: order.id })).to.have.length(1);
  });
});

describe('the dispatch job is part of the change that needs it', () => {
  const jobsOf = (operationId: string) => testKnex()('pgboss.job').where({ name: 'operation-due' }).whereRaw("data->>'operationId' = ?", [operationId]);

  it('a created order has its operation-due job; a rolled-back change leaves neither operation nor job', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    expect(await jobsOf(order.operation_id!)).to.have.length(1);
    await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'unconfirmed' }).expect(200);

    const services = createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
    let operationId = '';
    const failed = await testKnex()
      .transaction(async (trx) => {
        operationId = await services.operations.open(trx, shop.workspaceId!, order.id, shop.handlerId);
        expect(await trx('pgboss.job').whereRaw("data->>'operationId' = ?", [operationId])).to.have.length(1);
        throw new Error('the change fails after its job was written');
      })
      .catch((err: Error) => err.message);
    expect(failed).to.equal('the change fails after its job was written');
    expect(await testKnex()('operations').where({ id: operationId })).to.have.length(0);
    expect(await jobsOf(operationId)).to.have.length(0);
  });
});

describe('POST /api/calls/next (the human queue)', () => {
  it('200: claims the oldest due call: a new call, the operation in progress, the order calling', async () => {
    const shop = await humanShop();
    const first = await createOrder(shop);
    await createOrder(shop, { ...ORDER, clientName: 'Second' });
    const res = await shop.agent.post('/api/calls/next').expect(200);
    expect(res.body.order).to.include({ id: first.id, status: 'calling' });
    expect(res.body.operation).to.include({ id: first.operation_id, status: 'in_progress', next_attempt_at: null });
    expect(res.body.call).to.include({ attempt: 1, made_by: shop.userId, outcome: null, ended_at: null, cost: 0 });
    expect(res.body.call).to.have.all.keys(
      'id',
      'kind',
      'attempt',
      'started_at',
      'ended_at',
      'outcome',
      'duration_seconds',
      'summary',
      'changes',
      'callback_at',
      'made_by',
      'cost',
      'reply',
    );
    expect((await orderRow(first.id)).status).to.equal('calling');
    expect(await callsOf(first.operation_id!)).to.have.length(1);
  });

  it('two members asking at the same moment never get the same order', async () => {
    const shop = await humanShop();
    for (let i = 0; i < 6; i += 1) await createOrder(shop, { ...ORDER, clientName: `C${i}` });
    // Eight members: a member holds one open call at a time (issue 53, defect 6).
    const members = [shop];
    for (let i = 0; i < 7; i += 1) members.push(await memberOf(shop));
    const answers = await Promise.all(members.map((m) => m.agent.post('/api/calls/next')));
    const claimed = answers.filter((r) => r.status === 200).map((r) => r.body.order.id);
    expect(claimed).to.have.length(6);
    expect(new Set(claimed).size).to.equal(6);
    expect(answers.filter((r) => r.status === 204)).to.have.length(2);
  });

  it('204 with no body when nothing is due, or when the calling hours are closed', async () => {
    const shop = await humanShop();
    const empty = await shop.agent.post('/api/calls/next').expect(204);
    expect(empty.text).to.equal('');
    await createOrder(shop);
    const now = new Date();
    const minutes = now.getUTCHours() * 60 + now.getUTCMinutes();
    // A one-hour window twelve hours away from now (Morocco is UTC+0/+1): surely closed.
    const start = (minutes + 12 * 60) % (23 * 60);
    const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
    await shop.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: hhmm(start), end: hhmm(start + 60) } })
      .expect(200);
    await shop.agent.post('/api/calls/next').expect(204);
  });

  it('an order set to a final status before its turn is never offered; its operation is cancelled', async () => {
    const shop = await humanShop();
    const created = await createOrder(shop, { ...ORDER, status: 'confirmed' });
    expect((await operationRow(created.operation_id!)).status).to.equal('pending');
    await shop.agent.post('/api/calls/next').expect(204);
    expect((await operationRow(created.operation_id!)).status).to.equal('cancelled');
  });
});

describe('POST /api/calls/:callId/outcome', () => {
  async function claimed() {
    const shop = await humanShop();
    const order = await createOrder(shop);
    const res = await shop.agent.post('/api/calls/next').expect(200);
    return { shop, order, callId: res.body.call.id as string };
  }

  for (const outcome of ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized'] as const) {
    it(`200 ${outcome}: the order becomes ${outcome}, the operation completed`, async () => {
      const { shop, order, callId } = await claimed();
      const res = await shop.agent
        .post(`/api/calls/${callId}/outcome`)
        .send({ outcome, notes: 'Spoke to her', changes: outcome === 'order-changed' ? '3 bottles' : undefined })
        .expect(200);
      expect(res.body.order.status).to.equal(outcome);
      expect(res.body.operation).to.include({ status: 'completed', attempts: 0, next_attempt_at: null });
      expect(res.body.call).to.include({ outcome, summary: 'Spoke to her', cost: 0 });
      expectIso(res.body.call.ended_at);
      expect((await orderRow(order.id)).status).to.equal(outcome);
      expect((await operationRow(order.operation_id!)).status).to.equal('completed');
      expect(await testKnex()('credit_ledger').where({ call_id: callId })).to.have.length(0);
    });
  }

  it('postponed: pending again at callback_at (moved into the hours), not counted as an attempt', async () => {
    const { shop, order, callId } = await claimed();
    const callbackAt = new Date(Date.now() + 3 * 3600_000).toISOString();
    const res = await shop.agent.post(`/api/calls/${callId}/outcome`).send({ outcome: 'postponed', callbackAt }).expect(200);
    expect(res.body.order.status).to.equal('postponed');
    expect(res.body.operation).to.include({ status: 'pending', attempts: 0, next_attempt_at: callbackAt });
    expect(res.body.call.callback_at).to.equal(callbackAt);
    expect((await orderRow(order.id)).status).to.equal('postponed');
  });

  it('no-answer and failed: attempts + 1, due again after the retry interval, completed at max_attempts', async () => {
    const { shop, order, callId } = await claimed();
    await shop.agent.put('/api/settings/calls').send({ maxAttempts: 2, retryIntervalMinutes: 60 }).expect(200);
    const before = Date.now();
    const first = await shop.agent.post(`/api/calls/${callId}/outcome`).send({ outcome: 'no-answer' }).expect(200);
    expect(first.body.operation).to.include({ status: 'pending', attempts: 1 });
    const due = new Date(first.body.operation.next_attempt_at).getTime();
    expect(due).to.be.within(before + 3600_000 - 1000, Date.now() + 3600_000 + 1000);
    // Due now, for the test: the next claim is attempt 2.
    await testKnex()('operations')
      .where({ id: order.operation_id })
      .update({ next_attempt_at: new Date(Date.now() - 1000) });
    const second = await shop.agent.post('/api/calls/next').expect(200);
    expect(second.body.call.attempt).to.equal(2);
    const last = await shop.agent.post(`/api/calls/${second.body.call.id}/outcome`).send({ outcome: 'failed' }).expect(200);
    expect(last.body.operation).to.include({ status: 'completed', attempts: 2, next_attempt_at: null });
    expect(last.body.order.status).to.equal('failed');
  });

  it('an operation ends after 10 calls in all, whatever their outcomes', async () => {
    const { shop, order, callId } = await claimed();
    let current = callId;
    for (let n = 1; n <= 10; n += 1) {
      const soon = new Date(Date.now() + 60_000).toISOString();
      const res = await shop.agent.post(`/api/calls/${current}/outcome`).send({ outcome: 'postponed', callbackAt: soon }).expect(200);
      if (n === 10) {
        expect(res.body.operation).to.include({ status: 'completed' });
        expect(res.body.order.status).to.equal('postponed');
        break;
      }
      await testKnex()('operations')
        .where({ id: order.operation_id })
        .update({ next_attempt_at: new Date(Date.now() - 1000) });
      current = (await shop.agent.post('/api/calls/next').expect(200)).body.call.id;
    }
    expect(await callsOf(order.operation_id!)).to.have.length(10);
  });

  it('400 VALIDATION_ERROR for an unknown outcome, a missing or bad callbackAt, text too long; nothing changes', async () => {
    const { shop, order, callId } = await claimed();
    for (const [body, fields] of [
      [{ outcome: 'maybe' }, ['outcome']],
      [{ outcome: 'postponed' }, ['callbackAt']],
      [{ outcome: 'postponed', callbackAt: 'tomorrow' }, ['callbackAt']],
      [{ outcome: 'postponed', callbackAt: new Date(Date.now() - 60_000).toISOString() }, ['callbackAt']],
      [{ outcome: 'postponed', callbackAt: new Date(Date.now() + 31 * 86_400_000).toISOString() }, ['callbackAt']],
      [{ outcome: 'order-changed', changes: 'x'.repeat(2001), notes: 'y'.repeat(2001) }, ['changes', 'notes']],
    ] as const) {
      const res = await shop.agent.post(`/api/calls/${callId}/outcome`).send(body).expect(400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
      expect(Object.keys(res.body.fields)).to.have.members([...fields]);
    }
    expect((await orderRow(order.id)).status).to.equal('calling');
    expect((await callsOf(order.operation_id!))[0].ended_at).to.equal(null);
  });

  it('404 for an unknown call or another workspace’s call; 409 CALL_NOT_OPEN when ended, expired, or claimed by another member', async () => {
    const { shop, order, callId } = await claimed();
    const other = await humanShop();
    await other.agent.post(`/api/calls/${callId}/outcome`).send({ outcome: 'confirmed' }).expect(404);
    await shop.agent.post(`/api/calls/${ABSENT}/outcome`).send({ outcome: 'confirmed' }).expect(404);
    await shop.agent.post('/api/calls/not-a-uuid/outcome').send({ outcome: 'confirmed' }).expect(404);

    // Claimed by another member: that member's claim, not ours.
    const colleague = await signUp({ workspace: null });
    await testKnex()('calls').where({ id: callId }).update({ made_by: colleague.userId });
    const theirs = await shop.agent.post(`/api/calls/${callId}/outcome`).send({ outcome: 'confirmed' }).expect(409);
    expect(theirs.body.code).to.equal('CALL_NOT_OPEN');
    await testKnex()('calls').where({ id: callId }).update({ made_by: shop.userId });
    await shop.agent.post(`/api/calls/${callId}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    const ended = await shop.agent.post(`/api/calls/${callId}/outcome`).send({ outcome: 'unconfirmed' }).expect(409);
    expect(ended.body.code).to.equal('CALL_NOT_OPEN');
    expect((await orderRow(order.id)).status).to.equal('confirmed');
  });

  it('a claim expires after CALL_CLAIM_MINUTES: the call is dropped, the operation due at once, the order as before; its outcome is refused', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop, { ...ORDER, status: 'postponed' });
    const res = await shop.agent.post('/api/calls/next').expect(200);
    expect(res.body.call.attempt).to.equal(1);
    await testKnex()('calls')
      .where({ id: res.body.call.id })
      .update({ claim_expires_at: new Date(Date.now() - 1000) });
    const late = await shop.agent.post(`/api/calls/${res.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(409);
    expect(late.body.code).to.equal('CALL_NOT_OPEN');
    expect((await orderRow(order.id)).status).to.equal('postponed');
    expect((await operationRow(order.operation_id!)).status).to.equal('pending');
    const history = await shop.agent.get(`/api/orders/${order.id}/operations`).expect(200);
    expect(history.body.operations[0].calls, 'a dropped claim does not count').to.deep.equal([]);
    const again = await shop.agent.post('/api/calls/next').expect(200);
    expect(again.body.call.attempt).to.equal(1);
  });
});

describe('a person changes the order’s status', () => {
  for (const status of ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized', 'failed']) {
    it(`${status} cancels the open operation; no call is offered for it`, async () => {
      const shop = await humanShop();
      const order = await createOrder(shop);
      await shop.agent.put(`/api/orders/${order.id}`).send({ status }).expect(200);
      expect(await operationRow(order.operation_id!)).to.include({ status: 'cancelled', next_attempt_at: null });
      await shop.agent.post('/api/calls/next').expect(204);
    });
  }

  it('a non-final status (postponed) keeps the operation open', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'postponed' }).expect(200);
    expect((await operationRow(order.operation_id!)).status).to.equal('pending');
  });

  it('an outcome recorded after a person closed the order is kept on the call but does not change the order', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    const claim = await shop.agent.post('/api/calls/next').expect(200);
    await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'unrecognized' }).expect(200);
    const res = await shop.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    expect(res.body.call.outcome).to.equal('confirmed');
    expect(res.body.operation.status).to.equal('cancelled');
    expect((await orderRow(order.id)).status).to.equal('unrecognized');
  });

  it('deleting an order deletes its operations and calls', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    const claim = await shop.agent.post('/api/calls/next').expect(200);
    await shop.agent.delete(`/api/orders/${order.id}`).expect(204);
    expect(await testKnex()('operations').where({ order_id: order.id })).to.have.length(0);
    expect(await testKnex()('calls').where({ id: claim.body.call.id })).to.have.length(0);
  });
});
