import { expect } from 'chai';
import express from 'express';
import helmet from 'helmet';
import pino from 'pino';
import request from 'supertest';
import { createApp, helmetOptions } from '../../app';
import { securityHeaders } from '../../routes/middleware/security-headers';
import { loadConfig } from '../../config';
import { createKnex } from '../../db/knex';
import { appUrl, signUp, TEST_ENV } from '../helpers/app';
import { testSessionPool } from '../helpers/db';

describe('app skeleton', () => {
  describe('GET /healthz', () => {
    it('200 when Postgres answers', async () => {
      const res = await request(appUrl()).get('/healthz').expect(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
    });

    it('503 when Postgres does not answer', async () => {
      const deadKnex = createKnex('postgres://postgres@127.0.0.1:1/none');
      try {
        const broken = createApp({
          config: loadConfig(TEST_ENV),
          knex: deadKnex,
          sessionPool: testSessionPool(),
          logger: pino({ level: 'silent' }),
        });
        const res = await request(broken).get('/healthz').expect(503);
        expect(res.body).to.deep.equal({ status: 'unavailable' });
      } finally {
        await deadKnex.destroy();
      }
    });
  });

  describe('request bodies', () => {
    it('a JSON body over 100 kB → 413 with a JSON error', async () => {
      const { agent } = await signUp();
      const res = await agent
        .post('/api/agents')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ name: 'x'.repeat(101 * 1024) }))
        .expect(413);
      expect(res.body).to.deep.equal({ error: 'Request body is too large (limit 100 kB)', code: 'PAYLOAD_TOO_LARGE' });
    });

    it('a form body over 100 kB → 413 page', async () => {
      const res = await request(appUrl())
        .post('/login')
        .type('form')
        .send(`email=${'x'.repeat(101 * 1024)}`)
        .expect(413);
      expect(res.headers['content-type']).to.match(/text\/html/);
    });

    it('invalid JSON on /api → 400 INVALID_JSON, whatever the Content-Type', async () => {
      const { agent } = await signUp();
      for (const type of ['application/json', 'text/plain']) {
        const res = await agent.post('/api/agents').set('Content-Type', type).send('{"name": ').expect(400);
        expect(res.body).to.deep.equal({ error: 'Request body is not valid JSON', code: 'INVALID_JSON' });
      }
    });
  });

  describe('404s', () => {
    it('an unknown /api route → 404 JSON', async () => {
      const res = await request(appUrl()).get('/api/nothing-here').expect(404);
      expect(res.body).to.deep.equal({ error: 'Not found' });
    });

    it('an unknown page → 404 HTML page', async () => {
      const res = await request(appUrl()).get('/nothing-here').expect(404);
      expect(res.text).to.contain('Page not found');
    });
  });

  describe('headers', () => {
    it('sets security headers, a request id, and a CSP without inline script', async () => {
      const res = await request(appUrl()).get('/login').expect(200);
      expect(res.headers['referrer-policy']).to.equal('same-origin');
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
      expect(res.headers['content-security-policy']).to.contain("script-src 'self'").and.not.contain('unsafe-inline');
      expect(res.headers['x-request-id']).to.match(/^[\w.-]+$/);
      expect(res.headers).not.to.have.property('x-powered-by');
    });

    it("sets exactly helmet's own headers, in development and in production", async () => {
      const headersOf = (res: request.Response) => {
        const { date: _date, 'x-request-id': _id, etag: _etag, ...rest } = res.headers;
        return rest;
      };
      for (const isProduction of [false, true]) {
        const options = helmetOptions({ isProduction });
        const answer: express.RequestHandler = (_req, res) => {
          res.json({ ok: true });
        };
        const byHelmet = headersOf(
          await request(express().disable('x-powered-by').use(helmet(options)).get('/x', answer))
            .get('/x')
            .expect(200),
        );
        const ours = headersOf(
          await request(express().disable('x-powered-by').use(securityHeaders(options)).get('/x', answer))
            .get('/x')
            .expect(200),
        );
        expect(ours, `production: ${isProduction}`).to.deep.equal(byHelmet);
        // helmet's headers: those a bare answer does not have. The whole app sends each of them.
        const bare = headersOf(await request(express().disable('x-powered-by').get('/x', answer)).get('/x').expect(200));
        const security = Object.entries(byHelmet).filter(([name]) => !(name in bare));
        expect(security.length, 'helmet sets a dozen headers').to.be.greaterThan(10);
        const config = loadConfig({ ...TEST_ENV, NODE_ENV: isProduction ? 'production' : 'test', DATABASE_URL: 'postgres://unused/db' });
        const whole = createApp({
          config,
          knex: createKnex('postgres://postgres@127.0.0.1:1/none'),
          sessionPool: testSessionPool(),
          logger: pino({ level: 'silent' }),
        });
        const res = await request(whole).get('/healthz').expect(503);
        for (const [name, value] of security) expect(res.headers[name], `${name} (production: ${isProduction})`).to.equal(value);
        if (isProduction) {
          expect(ours['strict-transport-security']).to.match(/^max-age=\d+/);
          expect(ours['content-security-policy']).to.contain('upgrade-insecure-requests');
        } else {
          expect(ours).not.to.have.property('strict-transport-security');
          expect(ours['content-security-policy']).not.to.contain('upgrade-insecure-requests');
        }
      }
    });

    it('keeps a well-formed incoming X-Request-Id and replaces a malformed one', async () => {
      expect((await request(appUrl()).get('/healthz').set('X-Request-Id', 'abc-123')).headers['x-request-id']).to.equal('abc-123');
      expect((await request(appUrl()).get('/healthz').set('X-Request-Id', 'bad id\u00e9')).headers['x-request-id']).not.to.equal('bad id\u00e9');
    });

    it('session cookies are HttpOnly and SameSite=Lax (Secure is tested with production config)', async () => {
      const res = await request(appUrl()).get('/login').expect(200);
      const cookie = ([] as string[]).concat(res.headers['set-cookie'])[0];
      expect(cookie)
        .to.match(/^ocs\.sid=/)
        .and.match(/HttpOnly/)
        .and.match(/SameSite=Lax/);
      expect(cookie).not.to.match(/Secure/);
    });

    it('in production, cookies are Secure and the proxy hop is trusted', async () => {
      const prod = createApp({
        config: loadConfig({ ...TEST_ENV, NODE_ENV: 'production', DATABASE_URL: 'postgres://unused/db' }),
        knex: createKnex('postgres://postgres@127.0.0.1:1/none'),
        sessionPool: testSessionPool(),
        logger: pino({ level: 'silent' }),
      });
      expect(prod.get('trust proxy')).to.equal(1);
      const res = await request(prod).get('/login').set('X-Forwarded-Proto', 'https').expect(200);
      const cookie = ([] as string[]).concat(res.headers['set-cookie'])[0];
      expect(cookie).to.match(/; Secure/);
    });
  });
});
