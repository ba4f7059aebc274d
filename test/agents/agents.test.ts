import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import type { Agent } from '../../services/agents';
import type { SignedIn } from '../helpers/app';
import { ROOT } from '../../config';
import { appUrl, csrfOf, signUp } from '../helpers/app';
import { ORDER } from '../helpers/loop';
import { testKnex } from '../helpers/db';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ABSENT_ID = '00000000-0000-4000-8000-000000000000';
const NOT_FOUND = { error: 'Agent not found' };

async function createAgent(shop: SignedIn, body: object): Promise<Agent> {
  return (await shop.agent.post('/api/agents').send(body).expect(201)).body;
}

const agentRow = (id: string) => testKnex()('agents').where({ id }).first();
const handlersOf = async (workspaceId: string) => (await testKnex()('agents').where({ workspace_id: workspaceId, is_order_handler: true })).map((a) => a.id);

/** An agent of another workspace, to check that nothing reaches or changes it. */
async function foreignAgent(): Promise<{ agent: Agent; before: unknown }> {
  const other = await signUp();
  const agent = await createAgent(other, { name: 'Other shop handler', orderHandler: true });
  return { agent, before: await agentRow(agent.id) };
}

describe('GET /api/agents', () => {
  it('200: the workspace’s agents only, oldest first', async () => {
    const shop = await signUp();
    const { agent: foreign } = await foreignAgent();
    const first = await createAgent(shop, { name: 'Salma' });
    const second = await createAgent(shop, { name: 'Omar', orderHandler: true });
    const res = await shop.agent.get('/api/agents').expect(200);
    // The team's own agent, made at sign-up, comes first; it stopped being the handler when Omar became it.
    const [team] = res.body.agents;
    expect(team)
      .to.include({ kind: 'human', is_order_handler: false })
      .and.to.have.property('name')
      .that.match(/ team$/);
    expect(res.body).to.deep.equal({ agents: [team, first, second] });
    expect(res.body.agents.map((a: Agent) => a.id)).not.to.include(foreign.id);
  });

  it('401 without a session', async () => {
    expect((await request(appUrl()).get('/api/agents').expect(401)).body).to.deep.equal({ error: 'Unauthorized' });
  });

  it('403 for a user with no workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    expect((await agent.get('/api/agents').expect(403)).body).to.deep.equal({ error: 'No workspace found' });
  });
});

describe('POST /api/agents', () => {
  it('201: the agent, stored; not the handler unless asked', async () => {
    const shop = await signUp();
    const agent = await createAgent(shop, { name: '  Salma  ' });
    expect(agent).to.have.all.keys('id', 'name', 'kind', 'is_order_handler', 'endpoint_url', 'fallback_agent_id', 'created_at');
    expect(agent).to.include({ kind: 'human', endpoint_url: null });
    expect(agent).to.include({ name: 'Salma', is_order_handler: false });
    expect(agent.created_at).to.match(ISO_MS);
    expect(await agentRow(agent.id)).to.include({ workspace_id: shop.workspaceId, name: 'Salma', is_order_handler: false });
  });

  it('201: a new handler (orderHandler or order_handler) replaces the previous one', async () => {
    const shop = await signUp();
    const first = await createAgent(shop, { name: 'First', orderHandler: true });
    expect(first.is_order_handler).to.equal(true);
    const second = await createAgent(shop, { name: 'Second', order_handler: true });
    expect(second.is_order_handler).to.equal(true);
    expect(await handlersOf(shop.workspaceId!)).to.deep.equal([second.id]);
    const third = await createAgent(shop, { name: 'Third', orderHandler: false, order_handler: true });
    expect(third.is_order_handler).to.equal(false);
    expect(await handlersOf(shop.workspaceId!)).to.deep.equal([second.id]);
  });

  it('400 VALIDATION_ERROR naming each bad field; nothing is written', async () => {
    const shop = await signUp();
    const res = await shop.agent.post('/api/agents').send({ name: ' ', orderHandler: 'yes' }).expect(400);
    expect(res.body).to.deep.equal({
      error: 'Validation failed',
      code: 'VALIDATION_ERROR',
      fields: { name: 'Name is required', orderHandler: 'orderHandler must be true or false' },
    });
    const empty = await shop.agent.post('/api/agents').expect(400);
    expect(empty.body.fields).to.deep.equal({ name: 'Name is required' });
    const array = await shop.agent
      .post('/api/agents')
      .send([{ name: 'x' }])
      .expect(400);
    expect(array.body.code).to.equal('VALIDATION_ERROR');
    // Only the team's own agent, made at sign-up.
    expect(await testKnex()('agents').where({ workspace_id: shop.workspaceId })).to.have.length(1);
  });

  it('400 INVALID_JSON for a body that is not JSON', async () => {
    const shop = await signUp();
    const res = await shop.agent.post('/api/agents').set('Content-Type', 'application/json').send('{name').expect(400);
    expect(res.body.code).to.equal('INVALID_JSON');
  });

  it('401 without a session', async () => {
    await request(appUrl()).post('/api/agents').send({ name: 'x' }).expect(401);
  });

  it('403 for a user with no workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    expect((await agent.post('/api/agents').send({ name: 'x' }).expect(403)).body).to.deep.equal({ error: 'No workspace found' });
  });
});

describe('PUT /api/agents/:id', () => {
  it('200: renames the agent', async () => {
    const shop = await signUp();
    const agent = await createAgent(shop, { name: 'Salma', orderHandler: true });
    const res = await shop.agent.put(`/api/agents/${agent.id}`).send({ name: 'Salma B.' }).expect(200);
    expect(res.body).to.deep.equal({ ...agent, name: 'Salma B.' });
    expect(await agentRow(agent.id)).to.include({ name: 'Salma B.', is_order_handler: true });
  });

  it('200: making an agent the handler unsets the previous one; orderHandler false leaves none', async () => {
    const shop = await signUp();
    const first = await createAgent(shop, { name: 'First', orderHandler: true });
    const second = await createAgent(shop, { name: 'Second' });
    const res = await shop.agent.put(`/api/agents/${second.id}`).send({ orderHandler: true }).expect(200);
    expect(res.body).to.deep.equal({ ...second, is_order_handler: true });
    expect(await handlersOf(shop.workspaceId!)).to.deep.equal([second.id]);
    await shop.agent.put(`/api/agents/${second.id}`).send({ orderHandler: true }).expect(200);
    expect(await handlersOf(shop.workspaceId!)).to.deep.equal([second.id]);
    await shop.agent.put(`/api/agents/${first.id}`).send({ order_handler: true }).expect(200);
    expect(await handlersOf(shop.workspaceId!)).to.deep.equal([first.id]);
    await shop.agent.put(`/api/agents/${first.id}`).send({ orderHandler: false }).expect(200);
    expect(await handlersOf(shop.workspaceId!)).to.deep.equal([]);
  });

  it('new orders go to the current handler', async () => {
    const shop = await signUp();
    const first = await createAgent(shop, { name: 'First', orderHandler: true });
    const second = await createAgent(shop, { name: 'Second' });
    const order = { clientName: 'A', phone: '0612345678', storeName: 'S', productsName: 'P' };
    const before = (await shop.agent.post('/api/orders').send(order).expect(201)).body;
    await shop.agent.put(`/api/agents/${second.id}`).send({ orderHandler: true }).expect(200);
    const after = (await shop.agent.post('/api/orders').send(order).expect(201)).body;
    expect(await testKnex()('operations').where({ id: before.operation_id }).first()).to.include({ agent_id: first.id });
    expect(await testKnex()('operations').where({ id: after.operation_id }).first()).to.include({ agent_id: second.id });
  });

  it('concurrent handler changes leave exactly one handler and never fail', async () => {
    const shop = await signUp();
    const agents = [];
    for (let i = 0; i < 8; i++) agents.push(await createAgent(shop, { name: `Agent ${i}`, orderHandler: i === 0 }));
    for (let round = 0; round < 5; round++) {
      const responses = await Promise.all([
        ...agents.map((a) => shop.agent.put(`/api/agents/${a.id}`).send({ orderHandler: true })),
        shop.agent.post('/api/agents').send({ name: `New ${round}`, orderHandler: true }),
      ]);
      expect(responses.map((r) => r.status)).to.deep.equal([...agents.map(() => 200), 201]);
      expect(await handlersOf(shop.workspaceId!)).to.have.length(1);
    }
  });

  it('400 VALIDATION_ERROR for a blank name or a non-boolean orderHandler; nothing changes', async () => {
    const shop = await signUp();
    const agent = await createAgent(shop, { name: 'Salma' });
    const before = await agentRow(agent.id);
    const res = await shop.agent.put(`/api/agents/${agent.id}`).send({ name: '', orderHandler: 1 }).expect(400);
    expect(res.body.fields).to.have.all.keys('name', 'orderHandler');
    expect(await agentRow(agent.id)).to.deep.equal(before);
  });

  it('401 without a session', async () => {
    const { agent, before } = await foreignAgent();
    await request(appUrl()).put(`/api/agents/${agent.id}`).send({ name: 'x' }).expect(401);
    expect(await agentRow(agent.id)).to.deep.equal(before);
  });

  it('403 for a user with no workspace', async () => {
    const { agent: user } = await signUp({ workspace: null });
    const { agent, before } = await foreignAgent();
    await user.put(`/api/agents/${agent.id}`).send({ name: 'x' }).expect(403);
    expect(await agentRow(agent.id)).to.deep.equal(before);
  });

  it('404 with the same body for an absent id, a non-UUID id and another workspace’s agent, which stays unchanged', async () => {
    const shop = await signUp();
    const mine = await createAgent(shop, { name: 'Mine', orderHandler: true });
    const { agent, before } = await foreignAgent();
    for (const id of [ABSENT_ID, 'not-a-uuid', agent.id]) {
      for (const body of [{ name: 'Hijacked' }, { orderHandler: false }, { orderHandler: true }]) {
        expect((await shop.agent.put(`/api/agents/${id}`).send(body).expect(404)).body).to.deep.equal(NOT_FOUND);
      }
    }
    expect(await agentRow(agent.id)).to.deep.equal(before);
    // A failed attempt to set another workspace's agent as handler leaves ours in place.
    expect(await handlersOf(shop.workspaceId!)).to.deep.equal([mine.id]);
  });
});

describe('a workspace created later on /workspace starts with its team as order handler', () => {
  const LEADS = Object.fromEntries(
    (['en', 'fr', 'ar'] as const).map((lng) => [lng, JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', `${lng}.json`), 'utf8')).agentsPage.lead as string]),
  );
  const CASES = [
    {
      lng: 'en',
      workspace: 'Dar Imane',
      agent: 'Dar Imane team',
      agentWord: 'An agent is whoever calls your customers',
      handlerWord: 'The order handler is the agent that receives every new order',
    },
    {
      lng: 'fr',
      workspace: 'Dar Imane',
      agent: 'Équipe Dar Imane',
      agentWord: 'Un agent, c’est celui qui appelle vos clients',
      handlerWord: 'L’agent de commandes est celui qui reçoit chaque nouvelle commande',
    },
    {
      lng: 'ar',
      workspace: 'دار إيمان',
      agent: 'فريق دار إيمان',
      agentWord: 'الوكيل هو من يتصل بزبائنك',
      handlerWord: 'وكيل الطلبات هو الوكيل الذي يتلقى كل طلب جديد',
    },
  ] as const;

  for (const c of CASES) {
    it(`${c.lng}: a human agent named in the owner's language is the handler at once, the first order goes to it, and /agents says what an agent and the order handler are`, async () => {
      const shop = await signUp({ workspace: null });
      await shop.agent
        .post('/account/language')
        .type('form')
        .send({ _csrf: await csrfOf(shop.agent), language: c.lng })
        .expect(303);
      await shop.agent
        .post('/workspace')
        .type('form')
        .send({ _csrf: await csrfOf(shop.agent), name: c.workspace })
        .expect(303);
      const { workspace_id: workspaceId } = await testKnex()('workspace_members').where({ user_id: shop.userId }).first();
      const agents = await testKnex()('agents').where({ workspace_id: workspaceId });
      expect(agents.map((a) => ({ name: a.name, kind: a.kind, is_order_handler: a.is_order_handler }))).to.deep.equal([
        { name: c.agent, kind: 'human', is_order_handler: true },
      ]);
      const order = await shop.agent.post('/api/orders').send(ORDER).expect(201);
      expect((await testKnex()('operations').where({ order_id: order.body.id }).first()).agent_id).to.equal(agents[0].id);
      const page = await shop.agent.get('/agents').expect(200);
      expect(page.text).to.contain(LEADS[c.lng]).and.contain(c.agent);
      // One sentence says what an agent is, the next what the order handler is.
      expect(LEADS[c.lng].startsWith(c.agentWord)).to.equal(true);
      expect(LEADS[c.lng]).to.contain(c.handlerWord);
    });
  }
});
