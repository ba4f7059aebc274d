import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { loadConfig } from '../../config';
import type { SignedIn } from '../helpers/app';
import { signUp, TEST_ENV, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey, randomIp } from '../helpers/keys';

let target: ReturnType<typeof testApp>;
const PUBLISHABLE_KEY = loadConfig(TEST_ENV).publishableKey;
const ORDER = { clientName: 'Hind', phone: '06 61 23 45 67', storeName: 'Souk', productsName: 'Babouches' };

interface Integrator extends SignedIn {
  token: string;
  workspaceId: string;
}

async function integrator(): Promise<Integrator> {
  const owner = await signUp({ target });
  await owner.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  const { key } = await createKey(owner);
  const res = await request(target).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key}`).expect(200);
  expect(res.body.publishable_key).to.equal(PUBLISHABLE_KEY);
  return { ...owner, token: res.body.access_token, workspaceId: owner.workspaceId! };
}

function data(method: 'get' | 'post' | 'patch' | 'delete', path: string, token?: string, apikey: string | null = PUBLISHABLE_KEY) {
  let req = request(target)[method](`/data/v1${path}`);
  if (apikey !== null) req = req.set('apikey', apikey);
  if (token !== undefined) req = req.set('Authorization', `Bearer ${token}`);
  return req;
}

describe('Data API (/data/v1)', () => {
  before(() => {
    target = testApp({ TRUST_PROXY: '1', TOKEN_LIMIT_PER_IP: '1000', TOKEN_LIMIT_PER_KEY: '1000' });
  });

  it('orders: create, list, read, update (PATCH), delete — in the token owner’s workspace', async () => {
    const shop = await integrator();
    const created = await data('post', '/orders', shop.token).send(ORDER).expect(201);
    expect(created.body).to.include({ phone: '+212661234567', status: 'pending', workspace_id: shop.workspaceId });
    expect(created.body.operation_id).to.be.a('string');
    const id = created.body.id;

    const list = await data('get', '/orders', shop.token).expect(200);
    expect(list.body.orders.map((o: { id: string }) => o.id)).to.deep.equal([id]);
    expect((await data('get', `/orders/${id}`, shop.token).expect(200)).body).to.deep.equal(created.body);

    const patched = await data('patch', `/orders/${id}`, shop.token).send({ address: 'Derb Sultan, Casablanca', status: 'confirmed' }).expect(200);
    expect(patched.body).to.include({ address: 'Derb Sultan, Casablanca', status: 'confirmed' });
    expect(await testKnex()('orders').where({ id }).first()).to.include({ status: 'confirmed', address: 'Derb Sultan, Casablanca' });

    // The same rules as the dashboard: no content edit once not pending.
    const locked = await data('patch', `/orders/${id}`, shop.token).send({ clientName: 'Changed' }).expect(409);
    expect(locked.body.code).to.equal('ORDER_NOT_EDITABLE');

    await data('delete', `/orders/${id}`, shop.token).expect(204);
    expect(await testKnex()('orders').where({ id })).to.have.length(0);
  });

  it('the same validation and error bodies as /api', async () => {
    const shop = await integrator();
    const res = await data('post', '/orders', shop.token)
      .send({ ...ORDER, phone: '+33612345678', clientName: '' })
      .expect(400);
    expect(res.body.code).to.equal('VALIDATION_ERROR');
    expect(res.body.fields).to.have.keys('phone', 'clientName');
    const badJson = await data('post', '/orders', shop.token).set('Content-Type', 'application/json').send('{').expect(400);
    expect(badJson.body.code).to.equal('INVALID_JSON');
    expect(await testKnex()('orders').where({ workspace_id: shop.workspaceId })).to.have.length(0);
  });

  it('credits: the workspace owner’s balance', async () => {
    const shop = await integrator();
    await testKnex()('credit_ledger').insert([
      { user_id: shop.userId, kind: 'grant', amount: 100 },
      { user_id: shop.userId, kind: 'spend', amount: 12.5 },
    ]);
    expect((await data('get', '/credits', shop.token).expect(200)).body).to.deep.equal({ credits: 87.5, totalCredits: 100, totalSpent: 12.5 });
  });

  it("isolation: another workspace's order is 404 on every route and stays unchanged", async () => {
    const a = await integrator();
    const b = await integrator();
    const theirs = (await data('post', '/orders', b.token).send(ORDER).expect(201)).body;
    const before = await testKnex()('orders').where({ id: theirs.id }).first();
    expect((await data('get', '/orders', a.token).expect(200)).body.orders).to.deep.equal([]);
    await data('get', `/orders/${theirs.id}`, a.token).expect(404);
    await data('patch', `/orders/${theirs.id}`, a.token).send({ status: 'failed' }).expect(404);
    await data('delete', `/orders/${theirs.id}`, a.token).expect(404);
    await data('get', '/orders/not-a-uuid', a.token).expect(404);
    expect(await testKnex()('orders').where({ id: theirs.id }).first()).to.deep.equal(before);
  });

  describe('401 causes', () => {
    it('missing or wrong publishable key → invalid_apikey', async () => {
      const shop = await integrator();
      for (const apikey of [null, 'pk_wrong', '']) {
        const res = await data('get', '/orders', shop.token, apikey).expect(401);
        expect(res.body).to.deep.equal({ error: 'invalid_apikey' });
      }
    });

    it('missing, malformed, expired, forged and alg:none tokens → invalid_token with WWW-Authenticate', async () => {
      const shop = await integrator();
      const claims = { sub: shop.userId, iss: TEST_ENV.PUBLIC_BASE_URL };
      const expired = jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 }, TEST_ENV.JWT_SECRET, { algorithm: 'HS256' });
      const forged = jwt.sign(claims, 'another-secret-another-secret-another', { algorithm: 'HS256', expiresIn: 3600 });
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
      const otherIssuer = jwt.sign({ sub: shop.userId, iss: 'https://elsewhere.example' }, TEST_ENV.JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
      const noSubject = jwt.sign({ iss: TEST_ENV.PUBLIC_BASE_URL }, TEST_ENV.JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
      for (const token of [undefined, 'not-a-jwt', expired, forged, none, otherIssuer, noSubject]) {
        const res = await data('get', '/orders', token).expect(401);
        expect(res.body, String(token)).to.deep.equal({ error: 'invalid_token' });
        expect(res.headers['www-authenticate']).to.equal('Bearer error="invalid_token"');
      }
      const basic = await request(target).get('/data/v1/orders').set('apikey', PUBLISHABLE_KEY).set('Authorization', 'Basic abc').expect(401);
      expect(basic.body).to.deep.equal({ error: 'invalid_token' });
    });

    it('an access token is refused on the dashboard /api routes', async () => {
      const shop = await integrator();
      const res = await request(target).get('/api/orders').set('Authorization', `Bearer ${shop.token}`).set('apikey', PUBLISHABLE_KEY).expect(401);
      expect(res.body).to.deep.equal({ error: 'Unauthorized' });
      await request(target).post('/api/keys').set('Authorization', `Bearer ${shop.token}`).send({}).expect(401);
    });
  });
});
