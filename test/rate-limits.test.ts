import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../config';
import { csrfFrom, TEST_ENV, testApp, uniqueEmail } from './helpers/app';
import { testKnex } from './helpers/db';
import { randomIp } from './helpers/keys';
import { requireRedis } from './helpers/redis';

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

  it('without Redis the limits hold in memory', async () => {
    const target = testApp({ ...PROXIED, HOOKS_LIMIT_PER_IP: '1' });
    const ip = randomIp();
    await request(target).post('/hooks/calls/no-such-call').set('X-Forwarded-For', ip).send({}).expect(404);
    const res = await request(target).post('/hooks/calls/no-such-call').set('X-Forwarded-For', ip).send({}).expect(429);
    expect(res.body).to.deep.equal({ error: 'rate_limited' });
    expect(res.headers['retry-after']).to.match(/^\d+$/);
  });
});
