import { expect } from 'chai';
import type request from 'supertest';
import type { SignedIn } from '../helpers/app';
import { csrfOf, memberOf, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/**
 * Integrations are the owner's (issue 28, item 5): a member of the workspace reads the voice agents
 * and webhook endpoints but cannot create, change, send to or read the secret of any of them, on
 * the JSON API or the pages; human agents and call settings stay open to every member.
 */

const AGENT_URL = 'http://127.0.0.1:9/calls';
const HOOK_URL = 'http://127.0.0.1:9/hooks';

interface Team {
  owner: SignedIn;
  member: SignedIn;
  voiceId: string;
  voiceSecret: string;
  humanId: string;
  endpointId: string;
  endpointSecret: string;
  deliveryId: string;
}

/** An owner with a voice agent, a human agent and a webhook endpoint with one delivery, and a member. */
async function team(): Promise<Team> {
  const owner = await signUp();
  const voice = (await owner.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: AGENT_URL }).expect(201)).body;
  const human = (await owner.agent.post('/api/agents').send({ name: 'Salma', orderHandler: true }).expect(201)).body;
  const endpoint = (await owner.agent.post('/api/webhooks').send({ url: HOOK_URL }).expect(201)).body;
  const delivery = (await owner.agent.post(`/api/webhooks/${endpoint.id}/test`).expect(202)).body;
  const member = await memberOf(owner);
  return {
    owner,
    member,
    voiceId: voice.id,
    voiceSecret: voice.secret,
    humanId: human.id,
    endpointId: endpoint.id,
    endpointSecret: endpoint.secret,
    deliveryId: delivery.id,
  };
}

/** Everything a refused request could have changed in the workspace. */
async function integrationsOf(workspaceId: string) {
  const knex = testKnex();
  return {
    agents: await knex('agents').where({ workspace_id: workspaceId }).orderBy('id'),
    endpoints: await knex('webhook_endpoints').where({ workspace_id: workspaceId }).orderBy('id'),
    deliveries: await knex('webhook_deliveries').where({ workspace_id: workspaceId }).orderBy('id'),
    messages: await knex('webhook_messages').where({ workspace_id: workspaceId }).orderBy('id'),
  };
}

type Call = (agent: SignedIn['agent'], t: Team) => request.Test;

const API_CALLS: Record<string, Call> = {
  'POST /api/agents (voice)': (a) => a.post('/api/agents').send({ name: 'Mine', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/mine' }),
  'PUT /api/agents/:id (voice, endpoint)': (a, t) => a.put(`/api/agents/${t.voiceId}`).send({ endpointUrl: 'http://127.0.0.1:9/mine' }),
  'PUT /api/agents/:id (voice, order handler)': (a, t) => a.put(`/api/agents/${t.voiceId}`).send({ orderHandler: true }),
  'POST /api/agents/:id/rotate-secret': (a, t) => a.post(`/api/agents/${t.voiceId}/rotate-secret`),
  'POST /api/webhooks': (a) => a.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/mine' }),
  'PUT /api/webhooks/:id': (a, t) => a.put(`/api/webhooks/${t.endpointId}`).send({ url: 'http://127.0.0.1:9/mine' }),
  'PUT /api/webhooks/:id (disable)': (a, t) => a.put(`/api/webhooks/${t.endpointId}`).send({ enabled: false }),
  'POST /api/webhooks/:id/rotate-secret': (a, t) => a.post(`/api/webhooks/${t.endpointId}/rotate-secret`),
  'POST /api/webhooks/:id/test': (a, t) => a.post(`/api/webhooks/${t.endpointId}/test`),
  'POST /api/webhooks/:id/deliveries/:deliveryId/resend': (a, t) => a.post(`/api/webhooks/${t.endpointId}/deliveries/${t.deliveryId}/resend`),
  'DELETE /api/webhooks/:id': (a, t) => a.delete(`/api/webhooks/${t.endpointId}`),
};

/** Page form posts: [path, fields]. */
const PAGE_POSTS: Record<string, (t: Team) => [string, Record<string, string>]> = {
  'POST /agents (voice)': () => ['/agents', { name: 'Mine', kind: 'voice', endpoint_url: 'http://127.0.0.1:9/mine' }],
  'POST /agents/:id/rotate-secret': (t) => [`/agents/${t.voiceId}/rotate-secret`, {}],
  'POST /agents/:id/order-handler (voice)': (t) => [`/agents/${t.voiceId}/order-handler`, {}],
  'POST /webhooks': () => ['/webhooks', { url: 'http://127.0.0.1:9/mine', events: 'order.created' }],
  'POST /webhooks/:id': (t) => [`/webhooks/${t.endpointId}`, { url: 'http://127.0.0.1:9/mine', events: 'order.created' }],
  'POST /webhooks/:id/enabled': (t) => [`/webhooks/${t.endpointId}/enabled`, { enabled: 'false' }],
  'POST /webhooks/:id/rotate-secret': (t) => [`/webhooks/${t.endpointId}/rotate-secret`, {}],
  'POST /webhooks/:id/test': (t) => [`/webhooks/${t.endpointId}/test`, {}],
  'POST /webhooks/:id/deliveries/:deliveryId/resend': (t) => [`/webhooks/${t.endpointId}/deliveries/${t.deliveryId}/resend`, {}],
  'POST /webhooks/:id/delete': (t) => [`/webhooks/${t.endpointId}/delete`, {}],
};

describe('integrations are the owner’s (voice agents, webhook endpoints)', () => {
  it('JSON: a member gets 403 {"error":"Forbidden"} on every route that changes one or shows its secret and nothing changes; human agents and call settings stay open; the owner does it all', async () => {
    const t = await team();
    const before = await integrationsOf(t.owner.workspaceId!);
    for (const [name, call] of Object.entries(API_CALLS)) {
      const res = await call(t.member.agent, t);
      expect(res.status, name).to.equal(403);
      expect(res.body, name).to.deep.equal({ error: 'Forbidden' });
      expect(res.text, name).not.to.contain(t.voiceSecret).and.not.to.contain(t.endpointSecret);
    }
    expect(await integrationsOf(t.owner.workspaceId!)).to.deep.equal(before);
    // The JSON lists never carried a secret; a member still reads them.
    const list = (await t.member.agent.get('/api/agents').expect(200)).body.agents;
    // The team's own agent (made at sign-up), and the two of the test.
    expect(list.map((a: { name: string }) => a.name.replace(/^.* team$/, 'team'))).to.have.members(['team', 'Robot', 'Salma']);
    expect((await t.member.agent.get('/api/webhooks').expect(200)).body.endpoints[0].url).to.equal(HOOK_URL);
    expect((await t.member.agent.get(`/api/webhooks/${t.endpointId}/deliveries`).expect(200)).body.deliveries).to.have.length(1);

    // What every member keeps: human agents, the order handler among them, the call settings.
    const desk = (await t.member.agent.post('/api/agents').send({ name: 'Desk' }).expect(201)).body;
    expect(desk).to.include({ kind: 'human' }).and.not.have.property('secret');
    await t.member.agent.put(`/api/agents/${desk.id}`).send({ name: 'Front desk', orderHandler: true }).expect(200);
    await t.member.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: '08:00', end: '20:00' } })
      .expect(200);
    expect(await testKnex()('call_settings').where({ workspace_id: t.owner.workspaceId }).first()).to.include({ hours_start: '08:00', hours_end: '20:00' });
    expect(await testKnex()('agents').where({ id: desk.id }).first()).to.include({ name: 'Front desk', is_order_handler: true });

    const statuses: Record<string, number> = {};
    for (const [name, call] of Object.entries(API_CALLS)) statuses[name] = (await call(t.owner.agent, t)).status;
    expect(statuses).to.deep.equal({
      'POST /api/agents (voice)': 201,
      'PUT /api/agents/:id (voice, endpoint)': 200,
      'PUT /api/agents/:id (voice, order handler)': 200,
      'POST /api/agents/:id/rotate-secret': 200,
      'POST /api/webhooks': 201,
      'PUT /api/webhooks/:id': 200,
      'PUT /api/webhooks/:id (disable)': 200,
      'POST /api/webhooks/:id/rotate-secret': 200,
      // Disabled just above: the endpoint takes no test or resend (409); then the owner deletes it.
      'POST /api/webhooks/:id/test': 409,
      'POST /api/webhooks/:id/deliveries/:deliveryId/resend': 409,
      'DELETE /api/webhooks/:id': 204,
    });
    const voice = await testKnex()('agents').where({ id: t.voiceId }).first();
    expect(voice).to.include({ endpoint_url: 'http://127.0.0.1:9/mine', is_order_handler: true });
    expect(voice.secret).not.to.equal(t.voiceSecret);
    expect(await testKnex()('webhook_endpoints').where({ id: t.endpointId })).to.have.length(0);
  });

  it('pages: a member posting the forms gets a 403 page and nothing changes, but still adds a human agent and makes it the order handler', async () => {
    const t = await team();
    const csrf = await csrfOf(t.member.agent, '/agents');
    const before = await integrationsOf(t.owner.workspaceId!);
    for (const [name, post] of Object.entries(PAGE_POSTS)) {
      const [path, fields] = post(t);
      const res = await t.member.agent
        .post(path)
        .type('form')
        .send({ _csrf: csrf, ...fields });
      expect(res.status, name).to.equal(403);
      expect(res.text, name).to.contain('Forbidden').and.not.contain(t.voiceSecret).and.not.contain(t.endpointSecret);
    }
    expect(await integrationsOf(t.owner.workspaceId!)).to.deep.equal(before);

    await t.member.agent.post('/agents').type('form').send({ _csrf: csrf, name: 'Yassine', order_handler: '1' }).expect(303);
    await t.member.agent.post(`/agents/${t.humanId}/order-handler`).type('form').send({ _csrf: csrf }).expect(303);
    const rows = await testKnex()('agents').where({ workspace_id: t.owner.workspaceId }).whereNot('name', 'like', '% team').orderBy('created_at');
    expect(rows.map((r) => [r.name, r.kind, r.is_order_handler])).to.deep.equal([
      ['Robot', 'voice', false],
      ['Salma', 'human', true],
      ['Yassine', 'human', false],
    ]);
  });

  it('pages: a member sees the voice agents and endpoints listed without their secrets or any button to change them; the owner sees both', async () => {
    const t = await team();
    const agents = (await t.member.agent.get('/agents').expect(200)).text;
    expect(agents).to.contain('Robot').and.contain(AGENT_URL).and.not.contain(t.voiceSecret).and.not.contain('Show secret');
    expect(agents).not.to.contain(`action="/agents/${t.voiceId}/order-handler"`).and.not.contain('name="kind"').and.not.contain('name="endpoint_url"');
    // Adding a human agent stays open.
    expect(agents).to.contain('action="/agents"');

    const agent = await t.member.agent.get(`/agents/${t.voiceId}`).expect(200);
    expect(agent.text).to.contain('Robot').and.not.contain(t.voiceSecret).and.not.contain('rotate-secret');

    const hooks = (await t.member.agent.get('/webhooks').expect(200)).text;
    expect(hooks).to.contain(HOOK_URL).and.not.contain('action="/webhooks"').and.not.contain('Add endpoint');

    const hook = await t.member.agent.get(`/webhooks/${t.endpointId}`).expect(200);
    expect(hook.text).to.contain(HOOK_URL).and.contain('webhook.test').and.not.contain(t.endpointSecret);
    expect(hook.text)
      .not.to.match(/<form[^>]+action="\/webhooks\//)
      .and.not.contain(`/webhooks/${t.endpointId}/delete"`);

    const del = await t.member.agent.get(`/webhooks/${t.endpointId}/delete`).expect(200);
    expect(del.text).not.to.contain(`action="/webhooks/${t.endpointId}/delete"`);

    const owner = t.owner.agent;
    const ownerAgents = (await owner.get('/agents').expect(200)).text;
    expect(ownerAgents).to.contain('Show secret').and.contain('name="kind"').and.contain(`action="/agents/${t.voiceId}/order-handler"`);
    expect((await owner.get(`/agents/${t.voiceId}`).expect(200)).text)
      .to.contain(t.voiceSecret)
      .and.contain('rotate-secret');
    expect((await owner.get('/webhooks').expect(200)).text).to.contain('action="/webhooks"');
    const ownerHook = (await owner.get(`/webhooks/${t.endpointId}`).expect(200)).text;
    expect(ownerHook)
      .to.contain(t.endpointSecret)
      .and.contain(`action="/webhooks/${t.endpointId}/rotate-secret"`)
      .and.contain(`action="/webhooks/${t.endpointId}/test"`);
    expect((await owner.get(`/webhooks/${t.endpointId}/delete`).expect(200)).text).to.contain(`action="/webhooks/${t.endpointId}/delete"`);
  });
});
