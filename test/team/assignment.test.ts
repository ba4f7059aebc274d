import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../../config';
import { app, memberOf, signUp, TEST_ENV } from '../helpers/app';
import { createKey, randomIp } from '../helpers/keys';
import type { SignedIn } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, humanShop, ORDER } from '../helpers/loop';

type Shop = SignedIn & { handlerId: string };

/** A shop with the owner and two members, all on shift, in `assignment` mode. */
async function team(assignment: 'open' | 'round_robin' | 'weighted', reserveMinutes = 30): Promise<{ owner: Shop; a: Shop; b: Shop }> {
  const owner = await humanShop();
  const a = await memberOf(owner);
  const b = await memberOf(owner);
  await owner.agent.put('/api/settings/team').send({ assignment, reserveMinutes }).expect(200);
  for (const who of [owner, a, b]) await who.agent.put('/api/me/shift').send({ on: true }).expect(200);
  return { owner, a, b };
}

const countsOf = async (workspaceId: string) => {
  const rows = await testKnex()('orders')
    .where({ workspace_id: workspaceId })
    .groupBy('assigned_to')
    .select('assigned_to', testKnex().raw('count(*)::int AS n'));
  return Object.fromEntries(rows.map((r: { assigned_to: string | null; n: number }) => [r.assigned_to ?? 'none', r.n]));
};

describe('team: assignment (settings, round-robin, weighted, stores, off shift, nobody on shift)', function () {
  this.timeout(120_000);

  it('GET /api/settings/team has the defaults (open, 30 minutes, follow-ups on, MAD); PUT changes them, the owner only; a bad value is a 400 naming it and nothing changes', async () => {
    const owner = await signUp();
    const member = await memberOf(owner);
    const read = await owner.agent.get('/api/settings/team').expect(200);
    expect(read.body).to.include({ assignment: 'open', reserve_minutes: 30, follow_ups: true, currency: 'MAD' });
    expect(read.body.members).to.have.length(2);
    await member.agent.put('/api/settings/team').send({ assignment: 'weighted' }).expect(403);
    const bad = await owner.agent.put('/api/settings/team').send({ assignment: 'random', reserveMinutes: 0 }).expect(400);
    expect(bad.body.fields).to.have.keys('assignment', 'reserveMinutes');
    expect((await owner.agent.get('/api/settings/team').expect(200)).body.assignment).to.equal('open');
    const saved = await owner.agent
      .put('/api/settings/team')
      .send({ assignment: 'round_robin', reserveMinutes: 5, followUps: false, currency: 'eur' })
      .expect(200);
    expect(saved.body).to.deep.equal({ assignment: 'round_robin', reserve_minutes: 5, follow_ups: false, currency: 'EUR' });
    expect(await testKnex()('team_settings').where({ workspace_id: owner.workspaceId }).first()).to.include({ assignment: 'round_robin', reserve_minutes: 5 });
  });

  it('with `open` (the default) new orders are nobody’s: assigned_to and assigned_at null in the JSON', async () => {
    const owner = await humanShop();
    await owner.agent.put('/api/me/shift').send({ on: true }).expect(200);
    const order = await createOrder(owner);
    expect(order).to.include({ assigned_to: null, assigned_at: null });
  });

  it('round-robin: 31 orders over three on-shift confirmers differ by at most one; the order’s JSON (session API, webhook, Data API) carries assigned_to and assigned_at', async () => {
    const { owner, a, b } = await team('round_robin');
    await owner.agent
      .post('/api/webhooks')
      .send({ url: 'http://127.0.0.1:9/hook', events: ['order.created'] })
      .expect(201);
    let last = null as null | { id: string; assigned_to: string | null; assigned_at: string | null };
    for (let i = 0; i < 31; i += 1) last = await createOrder(owner, { ...ORDER, clientName: `C${i}` });
    expect([owner.userId, a.userId, b.userId]).to.include(last!.assigned_to);
    expect(new Date(last!.assigned_at!).getTime()).to.be.greaterThan(Date.now() - 60_000);
    // The webhook's order says the same.
    const message = await testKnex()('webhook_messages')
      .where({ workspace_id: owner.workspaceId, event_type: 'order.created' })
      .whereRaw("data->'order'->>'id' = ?", [last!.id])
      .first();
    expect(message.data.order.assigned_to).to.equal(last!.assigned_to);
    expect(new Date(message.data.order.assigned_at).toISOString()).to.equal(last!.assigned_at);
    // The Data API's order too.
    const target = app();
    const { key } = await createKey(owner);
    const token = (await request(target).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key}`).expect(200)).body
      .access_token;
    const read = await request(target)
      .get(`/data/v1/orders/${last!.id}`)
      .set('apikey', loadConfig(TEST_ENV).publishableKey)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(read.body).to.include({ assigned_to: last!.assigned_to, assigned_at: last!.assigned_at });
    const counts = await countsOf(owner.workspaceId!);
    const ns = [owner.userId, a.userId, b.userId].map((id) => counts[id] ?? 0);
    expect(ns.reduce((x, y) => x + y)).to.equal(31);
    expect(Math.max(...ns) - Math.min(...ns)).to.be.at.most(1);
  });

  it('an off-shift confirmer gets none; with nobody on shift orders stay unassigned, and are assigned when someone comes on shift', async () => {
    const { owner, a, b } = await team('round_robin');
    await b.agent.put('/api/me/shift').send({ on: false }).expect(200);
    for (let i = 0; i < 6; i += 1) await createOrder(owner, { ...ORDER, clientName: `C${i}` });
    let counts = await countsOf(owner.workspaceId!);
    expect(counts[b.userId]).to.equal(undefined);
    expect(counts[owner.userId]).to.equal(3);
    expect(counts[a.userId]).to.equal(3);
    // Idle for over two hours counts as off shift too.
    await testKnex()('workspace_members')
      .where({ user_id: a.userId })
      .update({ last_seen_at: testKnex().raw("now() - interval '3 hours'") });
    await owner.agent.put('/api/me/shift').send({ on: false }).expect(200);
    const waiting = [];
    for (let i = 0; i < 4; i += 1) waiting.push(await createOrder(owner, { ...ORDER, clientName: `W${i}` }));
    expect(waiting.map((o) => o.assigned_to)).to.deep.equal([null, null, null, null]);
    await b.agent.put('/api/me/shift').send({ on: true }).expect(200);
    counts = await countsOf(owner.workspaceId!);
    expect(counts[b.userId]).to.equal(4);
    expect(counts.none).to.equal(undefined);
  });

  it('weighted: shares in percent, set by the owner (PUT /api/team/:userId); a member cannot; a bad share is a 400', async () => {
    const { owner, a, b } = await team('weighted');
    await a.agent.put(`/api/team/${a.userId}`).send({ share: 90 }).expect(403);
    const bad = await owner.agent.put(`/api/team/${a.userId}`).send({ share: 101 }).expect(400);
    expect(bad.body.fields).to.have.property('share');
    await owner.agent.put(`/api/team/00000000-0000-4000-8000-000000000000`).send({ share: 10 }).expect(404);
    const set = await owner.agent.put(`/api/team/${owner.userId}`).send({ share: 50 }).expect(200);
    expect(set.body.share).to.equal(50);
    await owner.agent.put(`/api/team/${a.userId}`).send({ share: 25 }).expect(200);
    await owner.agent.put(`/api/team/${b.userId}`).send({ share: 25 }).expect(200);
    for (let i = 0; i < 40; i += 1) await createOrder(owner, { ...ORDER, clientName: `C${i}` });
    const counts = await countsOf(owner.workspaceId!);
    expect(counts[owner.userId]).to.equal(20);
    expect(counts[a.userId]).to.equal(10);
    expect(counts[b.userId]).to.equal(10);
  });

  it('a store may name its own confirmers: its orders go to them alone; the others’ orders to everyone on shift', async () => {
    const { owner, a, b } = await team('round_robin');
    await a.agent
      .put('/api/settings/team/stores')
      .send({ storeName: 'Argan', userIds: [b.userId] })
      .expect(403);
    const bad = await owner.agent
      .put('/api/settings/team/stores')
      .send({ storeName: 'Argan', userIds: ['nope'] })
      .expect(400);
    expect(bad.body.fields).to.have.property('userIds');
    const saved = await owner.agent
      .put('/api/settings/team/stores')
      .send({ storeName: 'Argan', userIds: [b.userId] })
      .expect(200);
    expect(saved.body).to.deep.equal({ store_name: 'Argan', user_ids: [b.userId] });
    for (let i = 0; i < 4; i += 1) expect((await createOrder(owner, { ...ORDER, storeName: 'Argan', clientName: `A${i}` })).assigned_to).to.equal(b.userId);
    const others = [];
    for (let i = 0; i < 3; i += 1) others.push((await createOrder(owner, { ...ORDER, storeName: 'Other', clientName: `O${i}` })).assigned_to);
    // b already took the store's four today: the turns give the others to the owner and a, evenly.
    expect(new Set(others)).to.deep.equal(new Set([owner.userId, a.userId]));
    expect((await owner.agent.get('/api/settings/team').expect(200)).body.stores).to.deep.equal([{ store_name: 'Argan', user_ids: [b.userId] }]);
  });

  it('orders of every path are assigned, an import’s included (one trigger on orders)', async () => {
    const { owner, a, b } = await team('round_robin');
    const csv = 'client_name,phone,store_name,products_name\nImp1,0612345601,S,P\nImp2,0612345602,S,P\nImp3,0612345603,S,P\n';
    await owner.agent.post('/api/orders/import').set('Content-Type', 'text/csv').send(csv).expect(200);
    const imported = await testKnex()('orders').where({ workspace_id: owner.workspaceId, source: 'import' }).pluck('assigned_to');
    expect(new Set(imported)).to.deep.equal(new Set([owner.userId, a.userId, b.userId]));
  });

  it('POST /api/orders/assign: the owner gives orders to a member or back to the pool; no order.updated for an assignment alone; a member may not; another workspace’s order is a 404 and nothing changes', async () => {
    const owner = await humanShop();
    const member = await memberOf(owner);
    await owner.agent
      .post('/api/webhooks')
      .send({ url: 'http://127.0.0.1:9/hook', events: ['order.updated'] })
      .expect(201);
    const orders = [await createOrder(owner), await createOrder(owner, { ...ORDER, clientName: 'Other' })];
    const ids = orders.map((o) => o.id);
    const res = await owner.agent.post('/api/orders/assign').send({ orderIds: ids, userId: member.userId }).expect(200);
    expect(res.body).to.deep.equal({ assigned: 2 });
    const read = await owner.agent.get(`/api/orders/${ids[0]}`).expect(200);
    expect(read.body.assigned_to).to.equal(member.userId);
    expect(read.body.assigned_at).to.be.a('string');
    expect(await testKnex()('webhook_messages').where({ workspace_id: owner.workspaceId, event_type: 'order.updated' })).to.have.length(0);
    await member.agent.post('/api/orders/assign').send({ orderIds: ids, userId: null }).expect(403);
    const stranger = await humanShop();
    const theirs = await createOrder(stranger);
    await owner.agent
      .post('/api/orders/assign')
      .send({ orderIds: [ids[0], theirs.id], userId: null })
      .expect(404);
    expect((await testKnex()('orders').where({ id: ids[0] }).first()).assigned_to).to.equal(member.userId);
    const notMember = await owner.agent.post('/api/orders/assign').send({ orderIds: ids, userId: stranger.userId }).expect(400);
    expect(notMember.body.fields).to.have.property('userId');
    const bad = await owner.agent.post('/api/orders/assign').send({ orderIds: 'x' }).expect(400);
    expect(bad.body.fields).to.have.property('orderIds');
    await owner.agent.post('/api/orders/assign').send({ orderIds: ids, userId: null }).expect(200);
    expect(await testKnex()('orders').whereIn('id', ids).pluck('assigned_to')).to.deep.equal([null, null]);
  });

  it('GET /api/orders?assignee=mine|none|<id> filters by assignee', async () => {
    const owner = await humanShop();
    const member = await memberOf(owner);
    const [o1, o2, o3] = [
      await createOrder(owner),
      await createOrder(owner, { ...ORDER, clientName: 'B' }),
      await createOrder(owner, { ...ORDER, clientName: 'C' }),
    ];
    await owner.agent
      .post('/api/orders/assign')
      .send({ orderIds: [o1.id], userId: member.userId })
      .expect(200);
    await owner.agent
      .post('/api/orders/assign')
      .send({ orderIds: [o2.id], userId: owner.userId })
      .expect(200);
    const ids = (res: { body: { orders: Array<{ id: string }> } }) => res.body.orders.map((o) => o.id);
    expect(ids(await member.agent.get('/api/orders?assignee=mine').expect(200))).to.deep.equal([o1.id]);
    expect(ids(await owner.agent.get('/api/orders?assignee=mine').expect(200))).to.deep.equal([o2.id]);
    expect(ids(await owner.agent.get('/api/orders?assignee=none').expect(200))).to.deep.equal([o3.id]);
    expect(ids(await owner.agent.get(`/api/orders?assignee=${member.userId}`).expect(200))).to.deep.equal([o1.id]);
    const bad = await owner.agent.get('/api/orders?assignee=someone').expect(400);
    expect(bad.body.fields).to.have.property('assignee');
  });

  it('a member removed from the workspace loses their orders to the pool at once', async () => {
    const { owner, a } = await team('round_robin');
    for (let i = 0; i < 6; i += 1) await createOrder(owner, { ...ORDER, clientName: `C${i}` });
    expect((await countsOf(owner.workspaceId!))[a.userId]).to.equal(2);
    await owner.agent.delete(`/api/workspace/members/${a.userId}`).expect((r) => expect([200, 204]).to.include(r.status));
    const counts = await countsOf(owner.workspaceId!);
    expect(counts[a.userId]).to.equal(undefined);
    expect(counts.none).to.equal(2);
  });
});
