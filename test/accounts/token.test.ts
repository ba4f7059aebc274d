import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../app';
import { loadConfig } from '../../config';
import { createKnex } from '../../db/knex';
import { createRedis, redisReady } from '../../db/redis';
import { signUp, TEST_ENV, testApp } from '../helpers/app';
import { testDatabaseUrl, testKnex, testSessionPool } from '../helpers/db';
import { createKey, randomIp } from '../helpers/keys';
import { requireRedis } from '../helpers/redis';
import { startThrowawayRedis } from '../helpers/redis-server';

const PROXIED = { TRUST_PROXY: '1' };

describe('POST /api/v1/token', () => {
  const exchanger = () => testApp({ ...PROXIED, TOKEN_LIMIT_PER_IP: '1000', TOKEN_LIMIT_PER_KEY: '1000' });
  const exchange = (target: ReturnType<typeof testApp>, key: string | undefined, ip = randomIp()) => {
    const req = request(target).post('/api/v1/token').set('X-Forwarded-For', ip);
    return key === undefined ? req : req.set('Authorization', `Bearer ${key}`);
  };

  it('200 with the token response, no-store and no CORS headers', async () => {
    const owner = await signUp();
    const { key } = await createKey(owner);
    const res = await exchange(exchanger(), key).set('Origin', 'https://shop.example').expect(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['access_token', 'expires_in', 'project_url', 'publishable_key', 'token_type']);
    expect(res.body).to.include({ token_type: 'bearer', expires_in: 3600, project_url: TEST_ENV.PUBLIC_BASE_URL });
    expect(res.body.publishable_key).to.match(/^pk_/);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
  });

  it('the access token is HS256, sub = key owner, exp = iat + 3600, iss = public URL', async () => {
    const owner = await signUp();
    const { key } = await createKey(owner);
    const res = await exchange(exchanger(), key).expect(200);
    const decoded = jwt.decode(res.body.access_token, { complete: true })!;
    expect(decoded.header.alg).to.equal('HS256');
    const claims = jwt.verify(res.body.access_token, TEST_ENV.JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(claims.sub).to.equal(owner.userId);
    expect(claims.iss).to.equal(TEST_ENV.PUBLIC_BASE_URL);
    expect(claims.exp! - claims.iat!).to.equal(3600);
    expect(Math.abs(claims.iat! - Date.now() / 1000)).to.be.lessThan(10);
  });

  it('an OPTIONS preflight gets no CORS headers either', async () => {
    const res = await request(exchanger()).options('/api/v1/token').set('Origin', 'https://shop.example').set('Access-Control-Request-Method', 'POST');
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
  });

  it('records last use without the secret', async () => {
    const owner = await signUp();
    const { id, key } = await createKey(owner);
    await exchange(exchanger(), key).expect(200);
    let row: { last_used_at: Date | null } | undefined;
    for (let i = 0; i < 50 && !row?.last_used_at; i++) {
      await new Promise((r) => setTimeout(r, 20));
      row = await testKnex()('api_keys').where({ id }).first();
    }
    expect(row?.last_used_at).to.be.instanceOf(Date);
  });

  describe('401 invalid_api_key, byte-identical for every cause', () => {
    it('missing header, other scheme, malformed, unknown, expired, revoked', async () => {
      const owner = await signUp();
      const { key: expired, id: expiredId } = await createKey(owner);
      await testKnex()('api_keys')
        .where({ id: expiredId })
        .update({ expires_at: testKnex().raw("now() - interval '1 second'") });
      const { key: revoked, id: revokedId } = await createKey(owner);
      await owner.agent.delete(`/api/keys/${revokedId}`).expect(204);
      const target = exchanger();
      const bodies = await Promise.all([
        exchange(target, undefined),
        request(target)
          .post('/api/v1/token')
          .set('X-Forwarded-For', randomIp())
          .set('Authorization', `Basic ${Buffer.from('a:b').toString('base64')}`),
        exchange(target, 'sk_live_short'),
        exchange(target, `sk_live_${'A'.repeat(43)}`),
        exchange(target, expired),
        exchange(target, revoked),
      ]);
      for (const res of bodies) {
        expect(res.status).to.equal(401);
        expect(res.text).to.equal('{"error":"invalid_api_key"}');
        expect(res.headers['cache-control']).to.equal('no-store');
      }
    });
  });

  it('500 server_error when the database fails', async () => {
    const deadKnex = createKnex(testDatabaseUrl());
    await deadKnex.destroy();
    const broken = createApp({ config: loadConfig(TEST_ENV), knex: deadKnex, sessionPool: testSessionPool(), logger: pino({ level: 'silent' }) });
    const res = await request(broken)
      .post('/api/v1/token')
      .set('Authorization', `Bearer sk_live_${'B'.repeat(43)}`)
      .expect(500);
    expect(res.body).to.deep.equal({ error: 'server_error' });
  });

  it('a token stays valid after its key is revoked; the key mints no more', async () => {
    const owner = await signUp();
    const { id, key } = await createKey(owner);
    const target = exchanger();
    const { body } = await exchange(target, key).expect(200);
    await owner.agent.delete(`/api/keys/${id}`).expect(204);
    await exchange(target, key).expect(401);
    await request(target).get('/data/v1/orders').set('apikey', body.publishable_key).set('Authorization', `Bearer ${body.access_token}`).expect(200);
  });

  describe('rate limits (Redis)', () => {
    it('the 13th exchange for one key in 5 minutes → 429 rate_limited with Retry-After', async function () {
      const redis = await requireRedis(this);
      const target = testApp({ ...PROXIED }, redis);
      const owner = await signUp();
      const { key } = await createKey(owner);
      for (let i = 0; i < 12; i++) await exchange(target, key).expect(200);
      const res = await exchange(target, key).expect(429);
      expect(res.body).to.deep.equal({ error: 'rate_limited' });
      const retryAfter = Number(res.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).to.equal(true);
      expect(retryAfter).to.be.within(1, 300);
      expect(res.headers['ratelimit-policy']).to.match(/"token-key";\s*q=12;\s*w=300/);
      expect(res.headers.ratelimit).to.match(/"token-key";\s*r=0/);
      expect(res.headers['cache-control']).to.equal('no-store');
    });

    it('the 61st exchange from one IP, over several keys → 429', async function () {
      const redis = await requireRedis(this);
      const target = testApp({ ...PROXIED }, redis);
      const owner = await signUp();
      const keys = await Promise.all(Array.from({ length: 6 }, () => createKey(owner)));
      const ip = randomIp();
      for (let i = 0; i < 60; i++) await exchange(target, keys[i % 6].key, ip).expect(200);
      const res = await exchange(target, keys[0].key, ip).expect(429);
      expect(res.body).to.deep.equal({ error: 'rate_limited' });
      expect(res.headers['retry-after']).to.match(/^\d+$/);
      // Another IP is unaffected.
      await exchange(target, keys[1].key).expect(200);
    });

    it('two app instances sharing one Redis share one budget', async function () {
      const redis = await requireRedis(this);
      const second = createRedis(process.env.REDIS_URL!, pino({ level: 'silent' }));
      try {
        expect(await redisReady(second)).to.equal(true);
        const a = testApp({ ...PROXIED }, redis);
        const b = testApp({ ...PROXIED }, second);
        const owner = await signUp();
        const { key } = await createKey(owner);
        for (let i = 0; i < 12; i++) await exchange(i % 2 ? a : b, key).expect(200);
        await exchange(a, key).expect(429);
        await exchange(b, key).expect(429);
      } finally {
        await second.quit();
      }
    });

    it('Redis stopped: exchanges fail open within 3 s, and limits apply again when Redis returns', async function () {
      this.timeout(30_000);
      const server = await startThrowawayRedis(this);
      const client = createRedis(server.url, pino({ level: 'silent' }));
      try {
        expect(await redisReady(client)).to.equal(true);
        const target = testApp({ ...PROXIED, TOKEN_LIMIT_PER_KEY: '2' }, client);
        const owner = await signUp();
        const { key } = await createKey(owner);
        await exchange(target, key).expect(200);
        await server.stop();
        for (let i = 0; i < 4; i++) {
          const started = Date.now();
          await exchange(target, key).expect(200);
          expect(Date.now() - started, 'answered without stalling on Redis').to.be.lessThan(3000);
        }
        await server.start();
        for (let i = 0; i < 100 && client.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
        expect(client.status).to.equal('ready');
        // The restarted Redis is empty: the budget starts again and is enforced.
        await exchange(target, key).expect(200);
        await exchange(target, key).expect(200);
        await exchange(target, key).expect(429);
      } finally {
        client.disconnect();
        await server.stop();
      }
    });
  });
});
