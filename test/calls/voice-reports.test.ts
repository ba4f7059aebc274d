import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { SignedSender } from '../../integrations/http';
import { signedHeaders, verifySignature, newMessageId } from '../../integrations/signing';
import { callRequestHandler } from '../../jobs/call-request';
import type { RunningWorker } from '../../worker';
import { createServices } from '../../services';
import { appUrl, silentLogger, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { agentDouble, callsOf, createOrder, grant, operationRow, orderRow, ORDER, spendsOf, testWorker, voiceShop, waitFor } from '../helpers/loop';

/** Every report names its call: `data.call_id` is filled in unless the payload's data is not an object. */
function named(callId: string, payload: { data?: unknown }): object {
  if (payload.data !== undefined && (typeof payload.data !== 'object' || payload.data === null)) return payload;
  return { ...payload, data: { call_id: callId, ...(payload.data as object | undefined) } };
}

function report(callId: string, secret: string, payload: object, options: { id?: string; at?: Date } = {}) {
  const body = JSON.stringify(named(callId, payload));
  const headers = signedHeaders(secret, options.id ?? newMessageId(), body, options.at ?? new Date());
  return request(appUrl()).post(`/hooks/calls/${callId}`).set(headers).set('Content-Type', 'application/json').send(body);
}

const ended = (outcome: string, extra: object = {}) => ({
  type: 'call.ended',
  data: { outcome, duration_seconds: 41, summary: 'Spoke to the customer', changes: null, ...extra },
});

describe('voice agents: dispatch and reports', function () {
  this.timeout(90_000);
  let worker: RunningWorker;
  before(async () => {
    worker = await testWorker();
  });
  after(async () => {
    await worker.stop();
  });

  async function dispatched(agentAnswer?: Parameters<typeof agentDouble>[0], credits = 100) {
    const agent = await agentDouble(agentAnswer);
    const shop = await voiceShop(agent.url, credits);
    const order = await createOrder(shop, { ...ORDER, externalRef: '#1001', totalAmount: '349.00', city: 'Fès', note: 'Livrer après 18h' });
    const first = await waitFor('call.requested received', async () => agent.received[0]);
    const callId = first.json.data.call_id;
    return { agent, shop, order, first, callId };
  }

  it('a due order is sent a signed call.requested; the call is open, the order processing', async () => {
    const { agent, shop, order, first, callId } = await dispatched();
    try {
      expect(verifySignature(shop.secret, Buffer.from(first.body), first.headers)).to.equal(true);
      expect(first.headers['webhook-id']).to.match(/^msg_/);
      expect(first.headers['content-type']).to.equal('application/json');
      expect(first.json).to.deep.include({ type: 'call.requested' });
      expect(first.json.data).to.include({
        call_id: callId,
        operation_id: order.operation_id,
        attempt: 1,
        callback_url: `${TEST_ENV.PUBLIC_BASE_URL}/hooks/calls/${callId}`,
      });
      expect(first.json.data.order).to.include({ id: order.id, phone: '+212612345678', status: 'processing' });
      // The amount to collect, which the agent tells the client to have ready.
      expect(first.json.data.order).to.deep.include({ external_ref: '#1001', total_amount: '349.00', currency: 'MAD' });
      // The customer's note (a store's `note`/`customer_note`/`notes` lands in the same field) and the city.
      expect(first.json.data.order).to.deep.include({ note: 'Livrer après 18h', city: 'Fès', placed_at: null });
      expect((await orderRow(order.id)).status).to.equal('processing');
      expect((await operationRow(order.operation_id!)).status).to.equal('in_progress');
      const call = await waitFor('acceptance recorded', async () => (await callsOf(order.operation_id!)).find((c) => c.accepted_at));
      expect(call).to.include({ kind: 'voice', attempt: 1, ended_at: null });
      expect(call.result_due_at.getTime() - call.accepted_at.getTime()).to.equal(30 * 60_000);
    } finally {
      await agent.close();
    }
  });

  it('call.started → calling; call.ended → section 6 applies and one spend row is written; a retried report changes nothing more', async () => {
    const { agent, shop, order, callId } = await dispatched();
    try {
      expect((await report(callId, shop.secret, { type: 'call.started' }).expect(200)).body).to.deep.equal({ ok: true });
      expect((await orderRow(order.id)).status).to.equal('calling');
      const id = newMessageId();
      expect((await report(callId, shop.secret, ended('confirmed'), { id }).expect(200)).body).to.deep.equal({ ok: true });
      expect((await orderRow(order.id)).status).to.equal('confirmed');
      expect((await operationRow(order.operation_id!)).status).to.equal('completed');
      const [call] = await callsOf(order.operation_id!);
      expect(call).to.include({ outcome: 'confirmed', duration_seconds: 41, summary: 'Spoke to the customer', ended_by: 'agent' });
      expect(Number(call.cost)).to.equal(1);
      expect(await spendsOf(callId)).to.have.length(1);
      // The same webhook-id again: 200, nothing more.
      await report(callId, shop.secret, ended('confirmed'), { id }).expect(200);
      expect(await spendsOf(callId)).to.have.length(1);
      // A different result for an ended call: 409.
      expect((await report(callId, shop.secret, ended('unconfirmed')).expect(409)).body).to.deep.equal({ error: 'call_closed' });
      expect((await orderRow(order.id)).status).to.equal('confirmed');
      const credits = await shop.agent.get('/api/credits').expect(200);
      expect(credits.body).to.deep.equal({ credits: 99, totalCredits: 100, totalSpent: 1 });
    } finally {
      await agent.close();
    }
  });

  it('401 invalid_signature for missing, wrong or stale signatures (5-minute window) and a rotated secret; 404 for no such call; nothing changes', async () => {
    const { agent, shop, order, callId } = await dispatched();
    try {
      const body = JSON.stringify(ended('confirmed'));
      const missing = await request(appUrl()).post(`/hooks/calls/${callId}`).set('Content-Type', 'application/json').send(body).expect(401);
      expect(missing.body).to.deep.equal({ error: 'invalid_signature' });
      const wrong = signedHeaders(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, newMessageId(), body);
      await request(appUrl()).post(`/hooks/calls/${callId}`).set(wrong).send(body).expect(401);
      await report(callId, shop.secret, ended('confirmed'), { at: new Date(Date.now() - 6 * 60_000) }).expect(401);
      await report(callId, shop.secret, ended('confirmed'), { at: new Date(Date.now() + 6 * 60_000) }).expect(401);
      // Tampered body, valid headers for another body.
      const headers = signedHeaders(shop.secret, newMessageId(), body);
      await request(appUrl())
        .post(`/hooks/calls/${callId}`)
        .set(headers)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(ended('unconfirmed')))
        .expect(401);
      const rotated = await shop.agent.post(`/api/agents/${shop.handlerId}/rotate-secret`).expect(200);
      expect(rotated.body.secret)
        .to.match(/^whsec_/)
        .and.not.equal(shop.secret);
      await report(callId, shop.secret, ended('confirmed')).expect(401);
      expect((await report('00000000-0000-4000-8000-000000000000', shop.secret, ended('confirmed')).expect(404)).body).to.deep.equal({ error: 'not_found' });
      await report('not-a-uuid', shop.secret, ended('confirmed')).expect(404);
      expect((await orderRow(order.id)).status).to.equal('processing');
      await report(callId, rotated.body.secret, ended('unrecognized')).expect(200);
      expect((await orderRow(order.id)).status).to.equal('unrecognized');
    } finally {
      await agent.close();
    }
  });

  it('400 VALIDATION_ERROR for a bad payload, 413 over 100 kB; nothing changes', async () => {
    const { agent, shop, order, callId } = await dispatched();
    try {
      for (const payload of [
        { type: 'call.finished' },
        ended('maybe'),
        ended('postponed'),
        ended('confirmed', { duration_seconds: -1 }),
        ended('confirmed', { summary: 'x'.repeat(2001) }),
        { type: 'call.ended', data: 'confirmed' },
      ]) {
        const res = await report(callId, shop.secret, payload).expect(400);
        expect(res.body.code).to.equal('VALIDATION_ERROR');
      }
      await report(callId, shop.secret, { type: 'call.ended', pad: 'x'.repeat(101 * 1024) }).expect(413);
      expect((await orderRow(order.id)).status).to.equal('processing');
      expect((await callsOf(order.operation_id!))[0].ended_at).to.equal(null);
    } finally {
      await agent.close();
    }
  });

  it('postponed and no-answer reports move the operation as section 6 says; failed is not charged', async () => {
    const { agent, shop, order, callId } = await dispatched();
    try {
      const callbackAt = new Date(Date.now() + 2 * 3600_000).toISOString();
      await report(callId, shop.secret, ended('postponed', { callback_at: callbackAt })).expect(200);
      const op = await operationRow(order.operation_id!);
      expect(op).to.include({ status: 'pending', attempts: 0 });
      expect(op.next_attempt_at.toISOString()).to.equal(callbackAt);
      expect((await orderRow(order.id)).status).to.equal('postponed');
      expect(await spendsOf(callId)).to.have.length(1);

      const second = await dispatched();
      await report(second.callId, second.shop.secret, ended('failed')).expect(200);
      expect(await operationRow(second.order.operation_id!)).to.include({ status: 'pending', attempts: 1 });
      expect(await spendsOf(second.callId)).to.have.length(0);
      await second.agent.close();
    } finally {
      await agent.close();
    }
  });

  it('a result for a call whose operation a person cancelled is recorded and charged, but the order keeps the person’s status', async () => {
    const { agent, shop, order, callId } = await dispatched();
    try {
      await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'unconfirmed' }).expect(200);
      await report(callId, shop.secret, ended('confirmed')).expect(200);
      expect((await orderRow(order.id)).status).to.equal('unconfirmed');
      expect((await callsOf(order.operation_id!))[0].outcome).to.equal('confirmed');
      expect(await spendsOf(callId)).to.have.length(1);
    } finally {
      await agent.close();
    }
  });

  it('no call is requested that the balance cannot pay for, counting open calls; a grant lets the waiting calls go out', async () => {
    const agent = await agentDouble();
    try {
      const shop = await voiceShop(agent.url, 1);
      const first = await createOrder(shop);
      const second = await createOrder(shop, { ...ORDER, clientName: 'Second' });
      await waitFor('a first call.requested', async () => agent.received.length >= 1);
      // Let the worker see both operations: one credit pays for one open call, so the other waits.
      await waitFor('both operations examined', async () => {
        const done = await testKnex()('pgboss.job')
          .where({ name: 'operation-due', state: 'completed' })
          .whereIn('singleton_key', [first.operation_id, second.operation_id]);
        return new Set(done.map((j) => j.singleton_key)).size === 2;
      });
      expect(agent.received).to.have.length(1);
      const sentId = agent.received[0].json.data.order.id;
      const waiting = sentId === first.id ? second : first;
      expect((await orderRow(sentId)).status).to.equal('processing');
      expect((await orderRow(waiting.id)).status).to.equal('pending');
      expect((await operationRow(waiting.operation_id!)).status).to.equal('pending');
      await grant(shop, 5);
      await waitFor('the waiting call goes out after the grant', async () => agent.received.length >= 2, 60_000);
      expect(agent.received[1].json.data.order).to.include({ id: waiting.id });
    } finally {
      await agent.close();
    }
  });

  it('an agent that answers 500, resets, or redirects is retried with the same webhook-id; another agent is not held up', async () => {
    const flaky = await dispatched((_req, n) => (n === 1 ? 500 : 202));
    const healthy = await dispatched();
    try {
      expect(healthy.agent.received, 'the healthy agent got its call at once').to.have.length(1);
      const retry = await waitFor('the retry', async () => flaky.agent.received[1], 60_000);
      expect(retry.headers['webhook-id']).to.equal(flaky.first.headers['webhook-id']);
      expect(retry.json.data.call_id).to.equal(flaky.callId);
      await waitFor('accepted after the retry', async () => (await callsOf(flaky.order.operation_id!))[0].accepted_at);
    } finally {
      await flaky.agent.close();
      await healthy.agent.close();
    }
  });

  describe('the call-request handler, one try at a time', () => {
    /**
     * The running worker's own first try failed when the agent closed; once it has queued its retry,
     * that retry is removed, so the tries below are this test's alone.
     */
    async function leaveToThisTest(callId: string): Promise<void> {
      const retries = () => testKnex()('pgboss.job').where({ name: 'call-request' }).whereRaw("data->>'callId' = ? AND (data->>'try')::int = 2", [callId]);
      await waitFor('the worker’s own retry queued', async () => (await retries()).length > 0);
      await retries().delete();
    }

    const config = loadConfig({ ...TEST_ENV });
    let services: ReturnType<typeof createServices>;
    const sender = new SignedSender(true);
    before(() => {
      services = createServices(testKnex(), config, new Jobs(testKnex()));
    });
    after(() => sender.close());

    for (const answer of [500, 301, 'reset', 'hang'] as const) {
      it(`${answer === 'hang' ? 'no answer within 10 s' : answer}: not accepted; the next try is queued in about 10 s with the same message`, async function () {
        this.timeout(60_000);
        const { agent, callId } = await dispatched(() => 'hang');
        await agent.close();
        await leaveToThisTest(callId);
        const refusing = await agentDouble(() => answer);
        try {
          await testKnex()('agents').where({ endpoint_url: agent.url }).update({ endpoint_url: refusing.url });
          const before = Date.now();
          await callRequestHandler(services, sender, silentLogger, config.publicBaseUrl)([{ callId, attempt: 1 }]);
          expect(refusing.received).to.have.length(1);
          const job = await testKnex()('pgboss.job')
            .where({ name: 'call-request' })
            .whereRaw("data->>'callId' = ? AND (data->>'try')::int = 2", [callId])
            .first();
          expect(job, 'retry queued').to.not.equal(undefined);
          expect(new Date(job.start_after).getTime()).to.be.within(before + 9_000, Date.now() + 11_000);
          const [call] = await testKnex()('calls').where({ id: callId });
          expect(call).to.include({ ended_at: null, accepted_at: null });
        } finally {
          await refusing.close();
        }
      });
    }

    it('when the last try fails the call ends failed, "agent unreachable", nothing charged, section 6 applies', async () => {
      const { agent, order, callId } = await dispatched(() => 'hang');
      await agent.close();
      await leaveToThisTest(callId);
      const refusing = await agentDouble(() => 503);
      try {
        await testKnex()('agents').where({ endpoint_url: agent.url }).update({ endpoint_url: refusing.url });
        await callRequestHandler(services, sender, silentLogger, config.publicBaseUrl)([{ callId, attempt: 5 }]);
        const [call] = await testKnex()('calls').where({ id: callId });
        expect(call).to.include({ outcome: 'failed', summary: 'agent unreachable' });
        expect(Number(call.cost)).to.equal(0);
        expect(await spendsOf(callId)).to.have.length(0);
        expect((await orderRow(order.id)).status).to.equal('failed');
        expect(await operationRow(order.operation_id!)).to.include({ status: 'pending', attempts: 1 });
      } finally {
        await refusing.close();
      }
    });

    it('no result within CALL_RESULT_TIMEOUT_MINUTES: the call ends failed, "no result from agent", nothing charged', async () => {
      const { agent, order, callId } = await dispatched();
      try {
        await waitFor('accepted', async () => (await testKnex()('calls').where({ id: callId }).first()).accepted_at);
        await testKnex()('calls')
          .where({ id: callId })
          .update({ result_due_at: new Date(Date.now() - 1000) });
        await services.sweep.run();
        const [call] = await testKnex()('calls').where({ id: callId });
        expect(call).to.include({ outcome: 'failed', summary: 'no result from agent' });
        expect(await spendsOf(callId)).to.have.length(0);
        expect((await orderRow(order.id)).status).to.equal('failed');
      } finally {
        await agent.close();
      }
    });
  });
});
