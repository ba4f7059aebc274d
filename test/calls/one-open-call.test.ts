import { expect } from 'chai';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, csrfOf, memberOf, signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, openAllDay, ORDER, operationRow, orderRow } from '../helpers/loop';

/**
 * Issue 53, defect 6 and "what must hold" 3: one open call per confirmer. "Start next call" with a
 * call still open goes back to it; a call left open past its claim returns its order to the queue
 * and the order's page says so.
 */

/** A signed-in owner whose workspace has a human order handler and calls all day. */
async function shop(): Promise<SignedIn & { workspaceId: string }> {
  const owner = await signUp({ name: 'Karima Bennani' });
  await owner.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  await openAllDay(owner);
  return { ...owner, workspaceId: owner.workspaceId! };
}

/** The member's calls that are open: claimed, not ended, not dropped. */
const openCallsOf = (userId: string) => testKnex()('calls').where({ made_by: userId, kind: 'human' }).whereNull('ended_at').whereNull('dropped_at');

/** "Start next call" as the browser posts it, with the CSRF token of the /calls page. */
async function startNext(member: SignedIn): Promise<string> {
  const page = await member.agent.get('/calls').expect(200);
  const res = await member.agent
    .post('/calls/next')
    .type('form')
    .send({ _csrf: csrfFrom(page.text) })
    .expect(303);
  return res.headers.location;
}

const callIdOf = (location: string) => {
  const m = /^\/calls\/([0-9a-f-]{36})$/.exec(location);
  expect(m, location).to.not.equal(null);
  return m![1];
};

describe('one open call per confirmer (issue 53, defect 6)', () => {
  it('API: "Start next call" twice in a row answers the same call, in the same shape; the database holds one open call', async () => {
    const owner = await shop();
    const first = await createOrder(owner, { ...ORDER, clientName: 'Imane Alaoui' });
    const second = await createOrder(owner, { ...ORDER, clientName: 'Youssef Tazi', phone: '0661234567' });
    const claimed = await owner.agent.post('/api/calls/next').expect(200);
    const again = await owner.agent.post('/api/calls/next').expect(200);
    expect(Object.keys(again.body)).to.deep.equal(['call', 'operation', 'order']);
    expect(again.body).to.deep.equal(claimed.body);
    expect(claimed.body.order.id).to.equal(first.id);
    // Pressed twice at the same moment: still the one call.
    const both = await Promise.all([owner.agent.post('/api/calls/next'), owner.agent.post('/api/calls/next')]);
    expect(both.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(both.map((r) => r.body.call.id)).to.deep.equal([claimed.body.call.id, claimed.body.call.id]);
    const open = await openCallsOf(owner.userId);
    expect(open.map((c) => c.id)).to.deep.equal([claimed.body.call.id]);
    expect((await orderRow(second.id)).status, 'the other order stays in the queue').to.equal('pending');
    // Another member still gets the other order.
    const colleague = await memberOf(owner);
    const theirs = await colleague.agent.post('/api/calls/next').expect(200);
    expect(theirs.body.order.id).to.equal(second.id);
    // Once the outcome is recorded, the next press opens a new call.
    await owner.agent.post(`/api/calls/${claimed.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    await owner.agent.post('/api/calls/next').expect(204);
    expect(await openCallsOf(owner.userId)).to.deep.equal([]);
  });

  it('page: a second "Start next call" goes back to the open call, saying so; the database holds one open call', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    await createOrder(owner, { ...ORDER, clientName: 'Youssef Tazi', phone: '0661234567' });
    const first = callIdOf(await startNext(owner));
    const calls = await owner.agent.get('/calls').expect(200);
    expect(calls.text).to.contain('You have a call in progress.').and.contain(`href="/calls/${first}"`);
    const again = await startNext(owner);
    expect(again).to.equal(`/calls/${first}`);
    const page = await owner.agent.get(again).expect(200);
    expect(page.text).to.contain('You already have a call in progress: here it is.');
    expect((await openCallsOf(owner.userId)).map((c) => c.id)).to.deep.equal([first]);
    expect((await orderRow(order.id)).status).to.equal('calling');
    expect(await testKnex()('orders').where({ workspace_id: owner.workspaceId, status: 'calling' })).to.have.length(1);
  });

  it('30 calls, "Start next call" pressed twice before each outcome: no order is left "calling", no call left open or dropped', async function () {
    this.timeout(120_000);
    const owner = await shop();
    const orders = [];
    for (let i = 0; i < 30; i += 1) orders.push(await createOrder(owner, { ...ORDER, clientName: `Client ${i}`, phone: `06${String(10_000_000 + i)}` }));
    // Outcomes that plan no call within the test (no answer and "could not call" retry two hours later).
    const outcomes = ['confirmed', 'unconfirmed', 'no-answer', 'unrecognized', 'failed'];
    for (let i = 0; i < 30; i += 1) {
      const location = await startNext(owner);
      expect(await startNext(owner), `round ${i}`).to.equal(location);
      const page = await owner.agent.get(location).expect(200);
      await owner.agent
        .post(`${location}/outcome`)
        .type('form')
        .send({ _csrf: csrfFrom(page.text), outcome: outcomes[i % outcomes.length], callback_at: '', notes: '' })
        .expect(303);
    }
    expect(await startNext(owner)).to.equal('/calls');
    const statuses = await testKnex()('orders').where({ workspace_id: owner.workspaceId }).pluck('status');
    expect(statuses).to.have.length(30);
    expect(statuses.filter((s) => s === 'calling')).to.deep.equal([]);
    const calls = await testKnex()('calls').where({ workspace_id: owner.workspaceId });
    expect(calls).to.have.length(30);
    expect(calls.filter((c) => c.dropped_at !== null || c.ended_at === null)).to.deep.equal([]);
    expect(new Set(calls.map((c) => c.operation_id)).size, 'each order called once').to.equal(30);
  });

  it('a call left open past its claim: the order is due again, and its page says whose call was left open, in en, fr and ar', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const callId = callIdOf(await startNext(owner));
    expect((await orderRow(order.id)).status).to.equal('calling');
    // Its 15 minutes pass (the claim's deadline moved into the past), and the worker's sweep runs.
    await testKnex()('calls')
      .where({ id: callId })
      .update({ claim_expires_at: new Date(Date.now() - 1000) });
    const services = createServices(testKnex(), loadConfig({ ...TEST_ENV }), new Jobs(testKnex()));
    expect((await services.sweep.run()).claimsExpired).to.be.at.least(1);

    const call = await testKnex()('calls').where({ id: callId }).first();
    expect(call.dropped_at).to.be.an.instanceOf(Date);
    expect(call.ended_at).to.equal(null);
    expect((await orderRow(order.id)).status).to.equal('pending');
    const op = await operationRow(order.operation_id!);
    expect(op.status).to.equal('pending');
    expect(op.next_attempt_at.getTime()).to.be.at.most(Date.now());

    const en = await owner.agent.get(`/orders/${order.id}`).expect(200);
    expect(en.text).to.match(
      /<p class="card left-open" role="note">The call <bdi>Karima Bennani<\/bdi> started on <time datetime="[^"]+">[^<]+<\/time> was left open: the order went back to the queue on <time datetime="[^"]+">[^<]+<\/time>\.<\/p>/,
    );
    expect(en.text).to.contain(`datetime="${call.started_at.toISOString()}"`).and.contain(`datetime="${call.dropped_at.toISOString()}"`);
    await owner.agent.put('/api/account').send({ language: 'fr' }).expect(200);
    expect((await owner.agent.get(`/orders/${order.id}`).expect(200)).text).to.contain('L’appel commencé par <bdi>Karima Bennani</bdi> le');
    await owner.agent.put('/api/account').send({ language: 'ar' }).expect(200);
    expect((await owner.agent.get(`/orders/${order.id}`).expect(200)).text).to.contain('المكالمة التي بدأها <bdi>Karima Bennani</bdi> في');

    // Due again: the next "Start next call" offers it, as a new first attempt; the old claim is refused.
    const colleague = await memberOf(owner);
    const next = await colleague.agent.post('/api/calls/next').expect(200);
    expect(next.body.order.id).to.equal(order.id);
    expect(next.body.call.attempt).to.equal(1);
    const late = await owner.agent
      .post(`/calls/${callId}/outcome`)
      .type('form')
      .send({ _csrf: await csrfOf(owner.agent), outcome: 'confirmed' })
      .expect(303);
    expect(late.headers.location).to.equal('/calls');
    expect((await orderRow(order.id)).status).to.equal('calling');
  });
});
