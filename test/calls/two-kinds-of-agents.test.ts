import { expect } from 'chai';
import request from 'supertest';
import { SignedSender } from '../../integrations/http';
import { checkEndpointUrl, UrlRefusedError } from '../../integrations/url-guard';
import { newMessageId } from '../../integrations/signing';
import { testApp, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey } from '../helpers/keys';
import { agentDouble, createOrder, humanShop } from '../helpers/loop';
import { opened } from '../helpers/secrets';

/** An agent's row, its signing secret opened (sealed at rest). */
const agentRow = async (id: string) => opened(await testKnex()('agents').where({ id }).first());

describe('agents of two kinds', () => {
  it('201 voice: kind, endpoint_url and a whsec_ secret (32 random bytes), not cached; the list never shows the secret', async () => {
    const shop = await signUp();
    const res = await shop.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:4000/calls' }).expect(201);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.body).to.have.all.keys('id', 'name', 'kind', 'is_order_handler', 'endpoint_url', 'fallback_agent_id', 'created_at', 'secret');
    expect(res.body).to.include({ kind: 'voice', endpoint_url: 'http://127.0.0.1:4000/calls', is_order_handler: false });
    expect(Buffer.from(res.body.secret.slice('whsec_'.length), 'base64')).to.have.length(32);
    expect(await agentRow(res.body.id)).to.include({ kind: 'voice', secret: res.body.secret });
    const list = await shop.agent.get('/api/agents').expect(200);
    expect(list.body.agents[0]).not.to.have.property('secret');
    const human = await shop.agent.post('/api/agents').send({ name: 'Salma', kind: 'human' }).expect(201);
    expect(human.body).to.include({ kind: 'human', endpoint_url: null }).and.not.have.property('secret');
  });

  it('400 VALIDATION_ERROR: unknown kind, voice without a URL, a URL for a human, bad URLs; nothing is written', async () => {
    const shop = await signUp();
    const cases: Array<[object, string[]]> = [
      [{ name: 'X', kind: 'robot' }, ['kind']],
      [{ name: 'X', kind: 'voice' }, ['endpointUrl']],
      [{ name: 'X', kind: 'human', endpointUrl: 'http://127.0.0.1/' }, ['endpointUrl']],
      [{ name: 'X', endpointUrl: 'http://127.0.0.1/' }, ['endpointUrl']],
      [{ name: 'X', kind: 'voice', endpointUrl: 'ftp://example.com/' }, ['endpointUrl']],
      [{ name: 'X', kind: 'voice', endpointUrl: '/relative' }, ['endpointUrl']],
      [{ name: 'X', kind: 'voice', endpointUrl: `http://127.0.0.1/${'a'.repeat(2000)}` }, ['endpointUrl']],
      [{ name: 'X', kind: 'voice', endpointUrl: 42 }, ['endpointUrl']],
      [{ name: '', kind: 'voice', endpointUrl: 'nope' }, ['name', 'endpointUrl']],
    ];
    for (const [body, fields] of cases) {
      const res = await shop.agent.post('/api/agents').send(body).expect(400);
      expect(res.body.code, JSON.stringify(body)).to.equal('VALIDATION_ERROR');
      expect(Object.keys(res.body.fields), JSON.stringify(body)).to.have.members(fields);
    }
    // Only the team's own agent, made at sign-up.
    expect(await testKnex()('agents').where({ workspace_id: shop.workspaceId })).to.have.length(1);
  });

  it('PUT changes name, handler and a voice agent’s endpointUrl; kind never changes (400)', async () => {
    const shop = await signUp();
    const voice = (await shop.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:4000/' }).expect(201)).body;
    const moved = await shop.agent.put(`/api/agents/${voice.id}`).send({ endpointUrl: 'http://127.0.0.1:5000/hook' }).expect(200);
    expect(moved.body).to.include({ endpoint_url: 'http://127.0.0.1:5000/hook', kind: 'voice' }).and.not.have.property('secret');
    const kind = await shop.agent.put(`/api/agents/${voice.id}`).send({ kind: 'human' }).expect(400);
    expect(kind.body.fields).to.have.keys('kind');
    const human = (await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201)).body;
    await shop.agent.put(`/api/agents/${human.id}`).send({ kind: 'voice' }).expect(400);
    await shop.agent.put(`/api/agents/${human.id}`).send({ endpointUrl: 'http://127.0.0.1/' }).expect(400);
    expect(await agentRow(human.id)).to.include({ kind: 'human', endpoint_url: null });
  });

  it('rotate-secret: 200 with a new secret that replaces the old at once; 404 for a human agent and another workspace’s agent', async () => {
    const shop = await signUp();
    const voice = (await shop.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:4000/' }).expect(201)).body;
    const res = await shop.agent.post(`/api/agents/${voice.id}/rotate-secret`).expect(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.body.secret)
      .to.match(/^whsec_/)
      .and.not.equal(voice.secret);
    expect((await agentRow(voice.id)).secret).to.equal(res.body.secret);
    const human = (await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201)).body;
    await shop.agent.post(`/api/agents/${human.id}/rotate-secret`).expect(404);
    const other = await signUp();
    await other.agent.post(`/api/agents/${voice.id}/rotate-secret`).expect(404);
    await other.agent.put(`/api/agents/${voice.id}`).send({ endpointUrl: 'http://127.0.0.1:9/' }).expect(404);
    expect((await agentRow(voice.id)).secret).to.equal(res.body.secret);
  });
});

describe('the private-address guard', () => {
  it('in production: only https, and no host that is or resolves to a loopback, private, link-local, unique-local, multicast or metadata address', async () => {
    const production = testApp({ NODE_ENV: 'production', DATABASE_URL: 'postgres://unused' });
    // Signed in on the development app: the session lives in the same table under the same secret.
    const shop = await signUp();
    const post = (endpointUrl: string) =>
      request(production).post('/api/agents').set('Cookie', shop.cookie).set('X-Forwarded-Proto', 'https').send({ name: 'Robot', kind: 'voice', endpointUrl });
    for (const url of [
      'http://93.184.216.34/calls',
      'https://127.0.0.1/',
      'https://localhost/',
      'https://10.0.0.8/',
      'https://172.16.0.1/',
      'https://192.168.1.1/',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/',
      'https://[fd00::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://224.0.0.1/',
      'https://0.0.0.0/',
      'https://100.64.0.1/',
    ]) {
      const res = await post(url);
      expect(res.status, url).to.equal(400);
      expect(res.body.fields, url).to.have.keys('endpointUrl');
    }
    // Only the team's own agent, made at sign-up.
    expect(await testKnex()('agents').where({ workspace_id: shop.workspaceId })).to.have.length(1);
    const ok = await post('https://93.184.216.34/calls');
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
  });

  it('checkEndpointUrl follows ALLOW_PRIVATE_URLS; a public IP literal passes either way', async () => {
    const strict = { allowPrivateUrls: false, httpsOnly: true };
    await checkEndpointUrl('https://93.184.216.34/x', strict);
    const refused = await checkEndpointUrl('https://127.0.0.1/x', strict).catch((e) => e);
    expect(refused).to.be.instanceOf(UrlRefusedError);
    expect(await checkEndpointUrl('http://127.0.0.1:4000/x', { allowPrivateUrls: true, httpsOnly: false })).to.equal('http://127.0.0.1:4000/x');
  });

  it('is applied again when we connect: a URL that reaches a loopback address is never called', async () => {
    const agent = await agentDouble();
    const guarded = new SignedSender(false);
    try {
      const result = await guarded.send({ url: agent.url, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, messageId: newMessageId(), body: '{}' });
      expect(result.delivered).to.equal(false);
      expect(result.error).to.match(/not allowed|private|loopback|DNS/i);
      expect(agent.received).to.have.length(0);
      // The same request with private addresses allowed reaches it.
      const open = new SignedSender(true);
      expect(
        (await open.send({ url: agent.url, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, messageId: newMessageId(), body: '{}' })).delivered,
      ).to.equal(true);
      open.close();
      expect(agent.received).to.have.length(1);
    } finally {
      guarded.close();
      await agent.close();
    }
  });
});

describe('Data API: GET/POST /data/v1/orders/:id/operations', () => {
  it('answers as the dashboard route does, scoped to the token owner’s workspace', async () => {
    const shop = await humanShop();
    const order = await createOrder(shop);
    const { key } = await createKey(shop);
    const app = testApp();
    const token = await request(app).post('/api/v1/token').set('Authorization', `Bearer ${key}`).expect(200);
    const headers = { apikey: token.body.publishable_key ?? token.body.publishableKey, Authorization: `Bearer ${token.body.access_token}` };
    const dashboard = await shop.agent.get(`/api/orders/${order.id}/operations`).expect(200);
    const data = await request(app).get(`/data/v1/orders/${order.id}/operations`).set(headers).expect(200);
    expect(data.body).to.deep.equal(dashboard.body);
    const conflict = await request(app).post(`/data/v1/orders/${order.id}/operations`).set(headers).expect(409);
    expect(conflict.body.code).to.equal('OPERATION_OPEN');
    const other = await humanShop();
    const foreign = await createOrder(other);
    await request(app).get(`/data/v1/orders/${foreign.id}/operations`).set(headers).expect(404);
  });
});
