import { expect } from 'chai';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../app';
import { loadConfig } from '../../config';
import { createKnex } from '../../db/knex';
import { appUrl, csrfFrom, signUp, TEST_ENV, unsetOrderHandler } from '../helpers/app';
import { testDatabaseUrl, testKnex, testSessionPool } from '../helpers/db';

const cookieOf = (res: request.Response) =>
  ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .find((c) => c.startsWith('ocs.sid='))
    ?.split(';')[0];

describe('security checks', () => {
  it('session fixation: a session id planted before sign-in is never signed in', async () => {
    const { email, password } = await signUp();
    // The attacker obtains an anonymous session and plants its cookie in the victim's browser.
    const planted = await request(appUrl()).get('/login');
    const plantedCookie = cookieOf(planted)!;
    const login = await request(appUrl())
      .post('/login')
      .set('Cookie', plantedCookie)
      .type('form')
      .send({ _csrf: csrfFrom(planted.text), email, password })
      .expect(303);
    expect(cookieOf(login)).to.be.a('string').and.not.equal(plantedCookie);
    await request(appUrl()).get('/api/credits').set('Cookie', plantedCookie).expect(401);
    await request(appUrl()).get('/api/credits').set('Cookie', cookieOf(login)!).expect(200);
  });

  it('sign-out everywhere ends the sessions on other devices too', async () => {
    const user = await signUp();
    const laptop = request.agent(appUrl());
    const page = await laptop.get('/login');
    await laptop
      .post('/login')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), email: user.email, password: user.password })
      .expect(303);
    await laptop.get('/api/credits').expect(200);
    await user.agent.get('/api/credits').expect(200);
    const workspacePage = await user.agent.get('/workspace').expect(200);
    expect(workspacePage.text).to.contain('action="/logout/everywhere"');
    const res = await user.agent
      .post('/logout/everywhere')
      .type('form')
      .send({ _csrf: csrfFrom(workspacePage.text) })
      .expect(303);
    expect(res.headers.location).to.equal('/login');
    await user.agent.get('/api/credits').expect(401);
    await laptop.get('/api/credits').expect(401);
    expect(await testKnex()('session').whereRaw("sess->>'userId' = ?", [user.userId])).to.have.length(0);
  });

  it('mass assignment on update: id, workspace_id and operation_id are ignored', async () => {
    const shop = await signUp();
    const other = await signUp();
    await shop.agent.post('/api/agents').send({ name: 'H', orderHandler: true }).expect(201);
    const order = (await shop.agent.post('/api/orders').send({ clientName: 'A', phone: '0612345678', storeName: 'S', productsName: 'P' }).expect(201)).body;
    const res = await shop.agent
      .put(`/api/orders/${order.id}`)
      .send({
        id: '00000000-0000-4000-8000-000000000000',
        workspace_id: other.workspaceId,
        operation_id: null,
        created_at: '2000-01-01T00:00:00Z',
        address: 'Fès',
      })
      .expect(200);
    expect(res.body).to.include({
      id: order.id,
      workspace_id: shop.workspaceId,
      operation_id: order.operation_id,
      created_at: order.created_at,
      address: 'Fès',
    });
    expect(await testKnex()('orders').where({ workspace_id: other.workspaceId })).to.have.length(0);
  });

  it('redirects only ever lead inside the site, whatever next/return-to parameters say', async () => {
    const { email, password } = await signUp();
    const evil = ['//evil.com', '/\\evil.com', 'https://evil.com', '%2F%2Fevil.com', '/%5Cevil.com', 'javascript:alert(1)'];
    for (const target of evil) {
      const query = `next=${encodeURIComponent(target)}&returnTo=${encodeURIComponent(target)}&redirectTo=${encodeURIComponent(target)}`;
      const agent = request.agent(appUrl());
      const page = await agent.get(`/login?${query}`);
      const res = await agent
        .post(`/login?${query}`)
        .type('form')
        .send({ _csrf: csrfFrom(page.text), email, password, next: target, returnTo: target, redirectTo: target })
        .expect(303);
      expect(res.headers.location, target).to.equal('/');
      const home = await agent.get(`/?${query}`).expect(303);
      expect(home.headers.location).to.match(/^\/[a-z]/);
    }
    const noHandler = await signUp();
    await unsetOrderHandler(noHandler);
    const res = await noHandler.agent
      .post('/api/orders?redirectTo=//evil.com')
      .send({ clientName: 'A', phone: '0612345678', storeName: 'S', productsName: 'P', redirectTo: '//evil.com' })
      .expect(422);
    expect(res.body.redirectTo).to.equal('/agents');
  });

  it('no stack trace or SQL reaches the client when the database fails (JSON and pages)', async () => {
    const dead = createKnex(testDatabaseUrl());
    await dead.destroy();
    const broken = createApp({ config: loadConfig(TEST_ENV), knex: dead, sessionPool: testSessionPool(), logger: pino({ level: 'silent' }) });
    const user = await signUp();
    const cookie = user.cookie;
    const json = await request(broken).get('/api/orders').set('Cookie', cookie);
    const page = await request(broken).get('/workspace').set('Cookie', cookie);
    expect(json.status).to.equal(500);
    expect(json.body).to.deep.equal({ error: 'Internal server error' });
    expect(page.status).to.equal(500);
    expect(page.text).to.contain('Something went wrong');
    for (const text of [json.text, page.text]) expect(text).not.to.match(/at .+\.js|knex|SELECT|pool|Unable to acquire/i);
  });

  it("every :id route of every resource answers 404 to another workspace's id and changes nothing", async () => {
    const victim = await signUp();
    const agentId = (await victim.agent.post('/api/agents').send({ name: 'Victim handler', orderHandler: true }).expect(201)).body.id;
    const orderId = (await victim.agent.post('/api/orders').send({ clientName: 'V', phone: '0612345678', storeName: 'S', productsName: 'P' }).expect(201)).body
      .id;
    const keyId = (await victim.agent.post('/api/keys').send({ name: 'victim key' }).expect(201)).body.id;
    const snapshot = async () => ({
      order: await testKnex()('orders').where({ id: orderId }).first(),
      agent: await testKnex()('agents').where({ id: agentId }).first(),
      key: await testKnex()('api_keys').where({ id: keyId }).first(),
    });
    const before = await snapshot();

    const attacker = await signUp();
    await attacker.agent.post('/api/agents').send({ name: 'Mine', orderHandler: true }).expect(201);
    const csrf = csrfFrom((await attacker.agent.get('/workspace')).text);
    const json: Array<[string, string, object?]> = [
      ['get', `/api/orders/${orderId}`],
      ['put', `/api/orders/${orderId}`, { status: 'failed', clientName: 'pwned' }],
      ['delete', `/api/orders/${orderId}`],
      ['put', `/api/agents/${agentId}`, { name: 'pwned', orderHandler: false }],
      ['delete', `/api/keys/${keyId}`],
    ];
    for (const [method, path, body] of json) {
      const req = (attacker.agent as unknown as Record<string, (p: string) => request.Test>)[method](path);
      const res = await (body ? req.send(body) : req);
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.error, path).to.be.a('string');
    }
    for (const path of [`/orders/${orderId}`, `/orders/${orderId}/delete`]) await attacker.agent.get(path).expect(404);
    const forms: Array<[string, object]> = [
      [`/orders/${orderId}`, { client_name: 'pwned', phone: '0612345678', store_name: 'x', products_name: 'x' }],
      [`/orders/${orderId}/status`, { status: 'failed' }],
      [`/orders/${orderId}/delete`, {}],
      [`/agents/${agentId}/order-handler`, {}],
      [`/api-keys/${keyId}/revoke`, {}],
    ];
    for (const [path, form] of forms) {
      const res = await attacker.agent
        .post(path)
        .type('form')
        .send({ ...form, _csrf: csrf });
      expect(res.status, path).to.equal(404);
    }
    expect(await snapshot()).to.deep.equal(before);
  });

  it('stored XSS: every order field and every user-named thing is escaped on every page', async () => {
    const payload = (field: string) => `<script>alert("${field}")</script><img src=x onerror=alert(1)>`;
    const user = await signUp({ workspace: payload('workspace'), name: payload('user') });
    await user.agent
      .post('/api/agents')
      .send({ name: payload('agent'), orderHandler: true })
      .expect(201);
    await user.agent
      .post('/api/keys')
      .send({ name: payload('key') })
      .expect(201);
    const order = (
      await user.agent
        .post('/api/orders')
        .send({
          clientName: payload('client'),
          phone: '0612345678',
          storeName: payload('store'),
          productsName: payload('products'),
          address: payload('address'),
        })
        .expect(201)
    ).body;
    const pages = [
      '/orders',
      '/orders?status=pending',
      '/orders/new',
      `/orders/${order.id}`,
      `/orders/${order.id}/delete`,
      '/agents',
      '/api-keys',
      '/credits',
      '/workspace',
    ];
    for (const path of pages) {
      const res = await user.agent.get(path).expect(200);
      expect(res.text, path).not.to.match(/<script>alert|<img src=x/);
      expect(res.text, path).to.contain('&lt;script&gt;alert(&#34;');
    }
    const detail = (await user.agent.get(`/orders/${order.id}`)).text;
    for (const field of ['client', 'store', 'products', 'address']) expect(detail).to.contain(`alert(&#34;${field}&#34;)`);
    const header = (await user.agent.get('/credits')).text;
    for (const field of ['user', 'workspace']) expect(header).to.contain(`alert(&#34;${field}&#34;)`);
  });

  it('security headers on every kind of response', async () => {
    const user = await signUp();
    const responses = await Promise.all([
      request(appUrl()).get('/login'),
      request(appUrl()).get('/nothing-here'),
      request(appUrl()).get('/api/orders'),
      user.agent.get('/api/orders'),
      request(appUrl()).get('/healthz'),
      request(appUrl()).post('/api/v1/token'),
      request(appUrl()).get('/data/v1/orders'),
      request(appUrl()).get('/assets/app.css'),
      user.agent.post('/api/orders').set('Content-Type', 'application/json').send('{'),
    ]);
    for (const res of responses) {
      const where = `${(res as unknown as { req: { method: string; path: string } }).req.method} ${(res as unknown as { req: { path: string } }).req.path} (${res.status})`;
      expect(res.headers['content-security-policy'], where).to.contain("default-src 'self'").and.contain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options'], where).to.equal('nosniff');
      expect(res.headers['referrer-policy'], where).to.equal('same-origin');
      expect(res.headers['x-frame-options'], where).to.equal('SAMEORIGIN');
      expect(res.headers['cross-origin-opener-policy'], where).to.equal('same-origin');
      expect(res.headers, where).not.to.have.property('x-powered-by');
      expect(res.headers, where).not.to.have.property('access-control-allow-origin');
    }
  });
});
