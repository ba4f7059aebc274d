import { expect } from 'chai';
import request from 'supertest';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import type { RunningWorker } from '../../worker';
import { appUrl, csrfOf, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { agentDouble, createOrder, humanShop, ORDER, orderRow, testWorker, voiceShop, waitFor } from '../helpers/loop';

const operationsOf = (orderId: string) => testKnex()('operations').where({ order_id: orderId }).orderBy('created_at');

function report(callId: string, secret: string, outcome: string) {
  const body = JSON.stringify({ type: 'call.ended', data: { call_id: callId, outcome, duration_seconds: 0, summary: 'Nobody picked up' } });
  return request(appUrl())
    .post(`/hooks/calls/${callId}`)
    .set(signedHeaders(secret, newMessageId(), body))
    .set('Content-Type', 'application/json')
    .send(body);
}

describe('the ladder: fallback agents', function () {
  this.timeout(90_000);

  describe('rules (PUT and POST /api/agents)', () => {
    it('an agent may name another agent of its workspace; JSON carries fallback_agent_id', async () => {
      const shop = await signUp();
      const human = await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201);
      expect(human.body.fallback_agent_id).to.equal(null);
      const second = await shop.agent.post('/api/agents').send({ name: 'Youssef', fallbackAgentId: human.body.id }).expect(201);
      expect(second.body.fallback_agent_id).to.equal(human.body.id);
      const cleared = await shop.agent.put(`/api/agents/${second.body.id}`).send({ fallback_agent_id: null }).expect(200);
      expect(cleared.body.fallback_agent_id).to.equal(null);
    });

    it('itself, a loop, a fourth agent, another workspace’s or an unknown agent → 400 naming fallbackAgentId, nothing changed', async () => {
      const shop = await signUp();
      const other = await signUp();
      const foreign = await other.agent.post('/api/agents').send({ name: 'Elsewhere' }).expect(201);
      const ids: string[] = [];
      for (const name of ['A', 'B', 'C', 'D']) ids.push((await shop.agent.post('/api/agents').send({ name }).expect(201)).body.id);
      const [a, b, c, d] = ids;
      await shop.agent.put(`/api/agents/${a}`).send({ fallbackAgentId: b }).expect(200);
      await shop.agent.put(`/api/agents/${b}`).send({ fallbackAgentId: c }).expect(200);
      const refused = async (id: string, fallbackAgentId: unknown) => {
        const res = await shop.agent.put(`/api/agents/${id}`).send({ fallbackAgentId }).expect(400);
        expect(res.body.fields).to.have.property('fallbackAgentId');
      };
      await refused(a, a);
      await refused(c, a); // a → b → c → a
      await refused(c, d); // a → b → c → d: four agents
      await refused(d, a); // d → a → b → c: four agents
      await refused(d, foreign.body.id);
      await refused(d, '00000000-0000-4000-8000-000000000000');
      await refused(d, 42);
      const created = await shop.agent.post('/api/agents').send({ name: 'E', fallbackAgentId: foreign.body.id }).expect(400);
      expect(created.body.fields).to.have.property('fallbackAgentId');
      // Every new workspace also has its team's own agent; only these four are looked at.
      const rows = await testKnex()('agents')
        .where({ workspace_id: shop.workspaceId })
        .whereIn('id', ids)
        .orderBy('created_at')
        .select('name', 'fallback_agent_id');
      expect(rows.map((r) => [r.name, r.fallback_agent_id])).to.deep.equal([
        ['A', b],
        ['B', c],
        ['C', null],
        ['D', null],
      ]);
    });
  });

  describe('the agent page’s fallback form (POST /agents/:id/fallback)', () => {
    it('saves a fallback (303 with a notice), and re-renders a loop with the message by the field, in the page’s language', async () => {
      const shop = await signUp();
      const a = (await shop.agent.post('/api/agents').send({ name: 'Amal' }).expect(201)).body;
      const b = (await shop.agent.post('/api/agents').send({ name: 'Badr' }).expect(201)).body;
      const csrf = await csrfOf(shop.agent, `/agents/${a.id}`);
      await shop.agent.post(`/agents/${a.id}/fallback`).type('form').send({ _csrf: csrf, fallback_agent_id: b.id }).expect(303);
      const page = await shop.agent.get(`/agents/${a.id}`).expect(200);
      expect(page.text)
        .to.contain('Amal: the fallback is saved.')
        .and.to.match(new RegExp(`<option value="${b.id}" dir="auto" selected>Badr</option>`));
      await shop.agent.put('/api/account').send({ language: 'fr' }).expect(200);
      const loop = await shop.agent.post(`/agents/${b.id}/fallback`).type('form').send({ _csrf: csrf, fallback_agent_id: a.id }).expect(400);
      expect(loop.text).to.contain('Ce relais ferait une boucle').and.to.contain('aria-invalid="true"');
      expect((await testKnex()('agents').where({ id: b.id }).first()).fallback_agent_id).to.equal(null);
      await shop.agent.post(`/agents/${a.id}/fallback`).type('form').send({ _csrf: csrf, fallback_agent_id: '' }).expect(303);
      expect((await testKnex()('agents').where({ id: a.id }).first()).fallback_agent_id).to.equal(null);
    });
  });

  describe('at work', () => {
    let worker: RunningWorker;
    before(async () => {
      worker = await testWorker();
    });
    after(async () => {
      await worker.stop();
    });

    /** A voice agent (one attempt per operation) handing over to a human queue. */
    async function voiceThenHuman() {
      const double = await agentDouble();
      const shop = await voiceShop(double.url);
      await shop.agent.put('/api/settings/calls').send({ maxAttempts: 1 }).expect(200);
      const human = await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201);
      await shop.agent.put(`/api/agents/${shop.handlerId}`).send({ fallbackAgentId: human.body.id }).expect(200);
      const order = await createOrder(shop, { ...ORDER, phone: '0612345605' });
      const sent = await waitFor('call.requested', async () => double.received.find((r) => r.json.data.order.id === order.id));
      return { double, shop, human, order, callId: sent.json.data.call_id };
    }

    it('a voice agent’s exhausted no-answers go to the human queue, in the transaction of the outcome', async () => {
      const { double, shop, human, order, callId } = await voiceThenHuman();
      try {
        await report(callId, shop.secret, 'no-answer').expect(200);
        const [first, second] = await operationsOf(order.id);
        expect(first).to.include({ status: 'completed', agent_id: shop.handlerId, ladder_step: 1 });
        expect(second).to.include({ status: 'pending', agent_id: human.body.id, ladder_step: 2 });
        expect((await orderRow(order.id)).status).to.equal('pending');
        const claimed = await shop.agent.post('/api/calls/next').expect(200);
        expect(claimed.body.order.id).to.equal(order.id);
        expect(claimed.body.call).to.include({ kind: 'human', attempt: 1 });
        expect(claimed.body.operation.id).to.equal(second.id);
        // The order's page shows both steps of the ladder.
        const page = await shop.agent.get(`/orders/${order.id}`).expect(200);
        expect(page.text).to.contain('Robot').and.to.contain('Nobody picked up');
        const operations = await shop.agent.get(`/api/orders/${order.id}/operations`).expect(200);
        expect(operations.body.operations.map((op: { agent_id: string }) => op.agent_id)).to.deep.equal([shop.handlerId, human.body.id]);
        expect(operations.body.operations[0].calls[0]).to.include({ kind: 'voice', outcome: 'no-answer', reply: null });
      } finally {
        await double.close();
      }
    });

    it('a human queue’s exhausted no-answers go to its fallback, in the transaction of the outcome', async () => {
      const shop = await humanShop();
      await shop.agent.put('/api/settings/calls').send({ maxAttempts: 1 }).expect(200);
      const evening = await shop.agent.post('/api/agents').send({ name: 'Evening team' }).expect(201);
      await shop.agent.put(`/api/agents/${shop.handlerId}`).send({ fallbackAgentId: evening.body.id }).expect(200);
      const order = await createOrder(shop, { ...ORDER, phone: '0612345606' });
      const claimed = await shop.agent.post('/api/calls/next').expect(200);
      expect(claimed.body.order.id).to.equal(order.id);
      await shop.agent.post(`/api/calls/${claimed.body.call.id}/outcome`).send({ outcome: 'no-answer' }).expect(200);
      const [first, second] = await operationsOf(order.id);
      expect(first).to.include({ status: 'completed', agent_id: shop.handlerId, ladder_step: 1 });
      expect(second).to.include({ status: 'pending', agent_id: evening.body.id, ladder_step: 2 });
      expect((await orderRow(order.id)).status).to.equal('pending');
      const next = await shop.agent.post('/api/calls/next').expect(200);
      expect(next.body.order.id).to.equal(order.id);
      expect(next.body.operation.id).to.equal(second.id);
      // The last step's no-answer ends the ladder: the order is no-answer, no third step.
      await shop.agent.post(`/api/calls/${next.body.call.id}/outcome`).send({ outcome: 'no-answer' }).expect(200);
      expect((await operationsOf(order.id)).map((op) => op.status)).to.deep.equal(['completed', 'completed']);
      expect((await orderRow(order.id)).status).to.equal('no-answer');
    });

    it('a person’s status change cancels the next step, and no step is added after it', async () => {
      const { double, shop, order, callId } = await voiceThenHuman();
      try {
        await report(callId, shop.secret, 'no-answer').expect(200);
        await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed' }).expect(200);
        const ops = await operationsOf(order.id);
        expect(ops.map((op) => op.status)).to.deep.equal(['completed', 'cancelled']);
        await shop.agent.post('/api/calls/next').expect(204);
        expect((await orderRow(order.id)).status).to.equal('confirmed');
      } finally {
        await double.close();
      }
    });

    it('a status change while the first step is open: its late no-answer hands nothing on', async () => {
      const { double, shop, order, callId } = await voiceThenHuman();
      try {
        await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'unconfirmed' }).expect(200);
        await report(callId, shop.secret, 'no-answer').expect(200);
        const ops = await operationsOf(order.id);
        expect(ops.map((op) => op.status)).to.deep.equal(['cancelled']);
        expect((await orderRow(order.id)).status).to.equal('unconfirmed');
      } finally {
        await double.close();
      }
    });
  });
});
