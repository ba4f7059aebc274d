import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../../config';
import { csrfFrom, signUp, TEST_ENV, testApp, uniqueEmail } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { randomIp } from '../helpers/keys';
import { requireRedis } from '../helpers/redis';

/** Client IPs come from X-Forwarded-For behind one proxy: each test counts from a fresh address. */
const PROXIED = { TRUST_PROXY: '1' };

function expectLimitHeaders(res: request.Response, name: string, limit: number, windowSeconds: number, remaining: number): void {
  expect(res.headers['ratelimit-policy']).to.match(new RegExp(`"${name}";\\s*q=${limit};\\s*w=${windowSeconds}`));
  expect(res.headers.ratelimit).to.match(new RegExp(`"${name}";\\s*r=${remaining};\\s*t=\\d+`));
}

describe('rate limits where strangers knock (issue 28, item 11)', () => {
  it('POST /signup: the 3rd attempt from one IP within the hour → 429, the form again with the message and Retry-After; another IP signs up', async function () {
    const target = testApp({ ...PROXIED, SIGNUP_LIMIT_PER_IP: '2' }, await requireRedis(this));
    const ip = randomIp();
    const signUpFrom = async (from: string, email: string) => {
      const agent = request.agent(target);
      const page = await agent.get('/signup').set('X-Forwarded-For', from).expect(200);
      return agent
        .post('/signup')
        .set('X-Forwarded-For', from)
        .type('form')
        .send({ _csrf: csrfFrom(page.text), name: 'Amina', email, password: 'correct horse battery', workspace: 'Dar Nour' });
    };
    for (let i = 0; i < 2; i++) {
      const res = await signUpFrom(ip, uniqueEmail('signup'));
      expect(res.status).to.equal(303);
      expectLimitHeaders(res, 'signup-ip', 2, 3600, 1 - i);
    }
    const email = uniqueEmail('limited');
    const res = await signUpFrom(ip, email);
    expect(res.status).to.equal(429);
    expect(res.headers['content-type']).to.match(/^text\/html/);
    expect(res.text).to.contain('Too many sign-ups from this network').and.contain(`value="${email}"`).and.contain('action="/signup"');
    expect(Number(res.headers['retry-after'])).to.be.within(1, 3600);
    expectLimitHeaders(res, 'signup-ip', 2, 3600, 0);
    expect(await testKnex()('users').whereRaw('lower(email) = lower(?)', [email])).to.have.length(0);
    expect((await signUpFrom(randomIp(), uniqueEmail('elsewhere'))).status).to.equal(303);
  });

  it('/hooks: past the per-IP limit → 429 {"error":"rate_limited"} with Retry-After; below it the report is handled as usual; 600 a minute by default', async function () {
    const target = testApp({ ...PROXIED, HOOKS_LIMIT_PER_IP: '3' }, await requireRedis(this));
    const ip = randomIp();
    const report = (from: string) =>
      request(target).post('/hooks/calls/no-such-call').set('X-Forwarded-For', from).set('content-type', 'application/json').send('{"type":"call.started"}');
    for (let i = 0; i < 3; i++) {
      const res = await report(ip);
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ error: 'not_found' });
      expectLimitHeaders(res, 'hooks-ip', 3, 60, 2 - i);
    }
    const res = await report(ip);
    expect(res.status).to.equal(429);
    expect(res.body).to.deep.equal({ error: 'rate_limited' });
    expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
    expectLimitHeaders(res, 'hooks-ip', 3, 60, 0);
    expect((await report(randomIp())).status).to.equal(404);

    const { SIGNUP_LIMIT_PER_IP: _signup, HOOKS_LIMIT_PER_IP: _hooks, ...defaults } = TEST_ENV;
    expect(loadConfig(defaults).limits).to.include({ hooksPerIp: 600, signupPerIp: 20 });
  });

  it('/hooks/stores: a store’s signed messages are never limited (a flash sale from one IP); refused ones count, and past the limit → 429', async function () {
    const target = testApp({ ...PROXIED, HOOKS_LIMIT_PER_IP: '3' }, await requireRedis(this));
    const owner = await signUp();
    const secret = 'shpss_rate_limit_test_key';
    const store = (await owner.agent.post('/api/stores').send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret }).expect(201)).body;
    const ip = randomIp();
    const deliver = (body: string, signature: string) =>
      request(target)
        .post(`/hooks/stores/${store.id}`)
        .set('X-Forwarded-For', ip)
        .set('Content-Type', 'application/json')
        .set('X-Shopify-Topic', 'orders/create')
        .set('X-Shopify-Webhook-Id', crypto.randomUUID())
        .set('X-Shopify-Hmac-Sha256', signature)
        .send(body);
    const sign = (body: string) => crypto.createHmac('sha256', secret).update(body).digest('base64');
    for (let i = 0; i < 8; i++) {
      const body = JSON.stringify({ id: 9000 + i, name: `#${9000 + i}`, phone: '0612345678', line_items: [] });
      const res = await deliver(body, sign(body));
      expect(res.status, `message ${i}`).to.equal(200);
    }
    expect(await testKnex()('store_events').where({ connection_id: store.id })).to.have.length(8);
    for (let i = 0; i < 3; i++) expect((await deliver('{"id":1}', 'bm90IHRoZSBzaWduYXR1cmU=')).status).to.equal(401);
    const limited = await deliver('{"id":1}', 'bm90IHRoZSBzaWduYXR1cmU=');
    expect(limited.status).to.equal(429);
    expect(limited.body).to.deep.equal({ error: 'rate_limited' });
    expectLimitHeaders(limited, 'hooks-stores-ip', 3, 60, 0);
    // The voice agents' counter is another one: this IP's reports are still handled.
    expect((await request(target).post('/hooks/calls/no-such-call').set('X-Forwarded-For', ip).send({})).status).to.equal(404);
  });

  it('without Redis the limits hold in memory', async () => {
    const target = testApp({ ...PROXIED, HOOKS_LIMIT_PER_IP: '1' });
    const ip = randomIp();
    await request(target).post('/hooks/calls/no-such-call').set('X-Forwarded-For', ip).send({}).expect(404);
    const res = await request(target).post('/hooks/calls/no-such-call').set('X-Forwarded-For', ip).send({}).expect(429);
    expect(res.body).to.deep.equal({ error: 'rate_limited' });
    expect(res.headers['retry-after']).to.match(/^\d+$/);
    const store = `/hooks/stores/${crypto.randomUUID()}`;
    await request(target).post(store).set('X-Forwarded-For', ip).send({}).expect(404);
    expect((await request(target).post(store).set('X-Forwarded-For', ip).send({}).expect(429)).body).to.deep.equal({ error: 'rate_limited' });
  });
});
