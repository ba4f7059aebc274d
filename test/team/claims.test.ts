import { expect } from 'chai';
import { memberOf } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, humanShop, ORDER } from '../helpers/loop';

/** team.md §2: "Start next call" and the assignment's reserve. */
describe('team: "Start next call" with assignment (own orders first, the reserve, the pool)', function () {
  this.timeout(60_000);

  async function shop(reserveMinutes = 30) {
    const owner = await humanShop();
    const member = await memberOf(owner);
    await owner.agent.put('/api/settings/team').send({ assignment: 'round_robin', reserveMinutes }).expect(200);
    for (const who of [owner, member]) await who.agent.put('/api/me/shift').send({ on: true }).expect(200);
    return { owner, member };
  }

  const giveTo = (owner: Awaited<ReturnType<typeof shop>>['owner'], ids: string[], userId: string | null) =>
    owner.agent.post('/api/orders/assign').send({ orderIds: ids, userId }).expect(200);

  it('another’s reserved order is never offered: the owner gets 204, its assignee gets it', async () => {
    const { owner, member } = await shop();
    const order = await createOrder(owner);
    await giveTo(owner, [order.id], member.userId);
    await owner.agent.post('/api/calls/next').expect(204);
    // The queue page counts what each may take: nothing for the owner, the order for its assignee.
    const dueOn = (html: string) => /<dt>Due now<\/dt><dd>(\d+)<\/dd>/.exec(html)?.[1];
    expect(dueOn((await owner.agent.get('/calls').expect(200)).text)).to.equal('0');
    expect(dueOn((await member.agent.get('/calls').expect(200)).text)).to.equal('1');
    const res = await member.agent.post('/api/calls/next').expect(200);
    expect(res.body.order.id).to.equal(order.id);
    expect(res.body.call.made_by).to.equal(member.userId);
    // GET /api/team: the member's open call, then their call of today.
    const during = (await owner.agent.get('/api/team').expect(200)).body.members.find((m: { user_id: string }) => m.user_id === member.userId);
    expect(during.open_call).to.include({ id: res.body.call.id, order_id: order.id });
    await member.agent.post(`/api/calls/${res.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    const after = (await owner.agent.get('/api/team').expect(200)).body.members.find((m: { user_id: string }) => m.user_id === member.userId);
    expect(after).to.include({ open_call: null, calls_today: 1 });
  });

  it('the caller’s own orders come first, before older orders of the pool', async () => {
    const { owner, member } = await shop();
    const pool = await createOrder(owner, { ...ORDER, clientName: 'Pool' });
    const mine = await createOrder(owner, { ...ORDER, clientName: 'Mine' });
    await giveTo(owner, [pool.id], null);
    await giveTo(owner, [mine.id], member.userId);
    await testKnex()('operations')
      .where({ id: pool.operation_id })
      .update({ next_attempt_at: testKnex().raw("now() - interval '10 minutes'") });
    const first = await member.agent.post('/api/calls/next').expect(200);
    expect(first.body.order.id).to.equal(mine.id);
    // One open call per member: the first is settled before the next is asked for.
    await member.agent.post(`/api/calls/${first.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    const second = await member.agent.post('/api/calls/next').expect(200);
    expect(second.body.order.id).to.equal(pool.id);
  });

  it('the reserve (a short setting: 1 minute) hands the order on once it has been due that long', async () => {
    const { owner, member } = await shop(1);
    const order = await createOrder(owner);
    await giveTo(owner, [order.id], member.userId);
    // Due 30 seconds ago: still the member's.
    await testKnex()('operations')
      .where({ id: order.operation_id })
      .update({ next_attempt_at: testKnex().raw("now() - interval '30 seconds'") });
    await owner.agent.post('/api/calls/next').expect(204);
    // Due 61 seconds ago: past the reserve, anyone on shift may take it.
    await testKnex()('operations')
      .where({ id: order.operation_id })
      .update({ next_attempt_at: testKnex().raw("now() - interval '61 seconds'") });
    const res = await owner.agent.post('/api/calls/next').expect(200);
    expect(res.body.order.id).to.equal(order.id);
  });

  it('an assignee who goes off shift (or is idle two hours) hands their orders to the pool at once', async () => {
    const { owner, member } = await shop();
    const [o1, o2] = [await createOrder(owner), await createOrder(owner, { ...ORDER, clientName: 'B' })];
    await giveTo(owner, [o1.id, o2.id], member.userId);
    await owner.agent.post('/api/calls/next').expect(204);
    await member.agent.put('/api/me/shift').send({ on: false }).expect(200);
    const taken = await owner.agent.post('/api/calls/next').expect(200);
    expect(taken.body.order.id).to.equal(o1.id);
    // One open call per member: the owner settles it before asking again.
    await owner.agent.post(`/api/calls/${taken.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    await member.agent.put('/api/me/shift').send({ on: true }).expect(200);
    await owner.agent.post('/api/calls/next').expect(204);
    await testKnex()('workspace_members')
      .where({ user_id: member.userId })
      .update({ last_seen_at: testKnex().raw("now() - interval '2 hours 5 minutes'") });
    expect((await owner.agent.post('/api/calls/next').expect(200)).body.order.id).to.equal(o2.id);
  });

  it('with `assignment: open` an assigned order is offered to whoever asks, as before', async () => {
    const owner = await humanShop();
    const member = await memberOf(owner);
    const order = await createOrder(owner);
    await giveTo(owner, [order.id], member.userId);
    expect((await owner.agent.post('/api/calls/next').expect(200)).body.order.id).to.equal(order.id);
  });
});
