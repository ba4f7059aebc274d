import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { loadConfig, ROOT } from '../../config';
import { Jobs } from '../../db/jobs';
import { SignedSender } from '../../integrations/http';
import { Secrets } from '../../integrations/secrets';
import { createServices } from '../../services';
import type { WriteBackJob } from '../../services/stores';
import type { RunningWorker } from '../../worker';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, signUp, TEST_ENV, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { openAllDay, testWorker, waitFor } from '../helpers/loop';

/**
 * Shopify's expiring offline tokens (issue 52): the code exchange asks for one (`expiring=1`), the
 * connection keeps both tokens sealed with their expiries, and every Admin API call refreshes first
 * when under 5 minutes remain (and once more on a 401), one refresh per connection at a time. A
 * refused refresh asks the owner to reconnect; a non-expiring token is to be replaced before
 * 1 January 2027. Shopify is an HTTP double on 127.0.0.1 answering the shapes of its documentation
 * (test/fixtures/stores/shopify-offline-token-*.json).
 */
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', name), 'utf8'));
const GRANT = fixture('shopify-offline-token-expiring.json');
const REFRESHED = fixture('shopify-offline-token-refresh.json');
const SHOPIFY_ORDER = fixture('shopify-orders-create.json');
const CLIENT_SECRET = 'shpss_token_refresh_client_secret_0123';
const secrets = new Secrets(TEST_ENV.SECRETS_KEY);

interface Hit {
  url: string;
  headers: http.IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: the JSON Shopify receives, read field by field
  json: any;
}

/**
 * Shopify's double. The code exchange answers GRANT (another pair for `code-again`); a refresh answers
 * REFRESHED the first time, then new pairs, and accepts only a live refresh token (the one before
 * stays usable until the new one is used, as Shopify's does); Admin GraphQL answers 401 for a
 * revoked token. `refuse` makes every refresh a 400 invalid_grant; `beforeRefresh` is awaited
 * before a refresh is answered.
 */
async function shopifyDouble() {
  const hits: Hit[] = [];
  const state = {
    refuse: false,
    beforeRefresh: null as null | (() => Promise<void>),
    liveRefresh: new Set<string>([GRANT.refresh_token]),
    revoked: new Set<string>(),
    refreshes: 0,
  };
  const answer = async (hit: Hit): Promise<{ status: number; body: unknown }> => {
    if (hit.url === '/admin/oauth/access_token' && hit.json.grant_type === 'refresh_token') {
      if (state.beforeRefresh) await state.beforeRefresh();
      if (state.refuse || !state.liveRefresh.has(hit.json.refresh_token))
        return { status: 400, body: { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid, expired, or revoked.' } };
      state.refreshes += 1;
      const next =
        state.refreshes === 1
          ? REFRESHED
          : { ...REFRESHED, access_token: `${REFRESHED.access_token}_${state.refreshes}`, refresh_token: `${REFRESHED.refresh_token}_${state.refreshes}` };
      state.liveRefresh = new Set([hit.json.refresh_token, next.refresh_token]);
      return { status: 200, body: next };
    }
    if (hit.url === '/admin/oauth/access_token') {
      if (hit.json.code !== 'code-again') return { status: 200, body: GRANT };
      const again = { ...GRANT, access_token: `${GRANT.access_token}_again`, refresh_token: `${GRANT.refresh_token}_again` };
      state.liveRefresh = new Set([again.refresh_token]);
      return { status: 200, body: again };
    }
    if (hit.url === '/admin/api/2025-10/graphql.json') {
      if (state.revoked.has(String(hit.headers['x-shopify-access-token']))) return { status: 401, body: { errors: '[API] Invalid API key or access token' } };
      const { query, variables } = hit.json;
      if (query.includes('webhookSubscriptionCreate'))
        return {
          status: 200,
          body: {
            data: { webhookSubscriptionCreate: { webhookSubscription: { id: `gid://shopify/WebhookSubscription/${crypto.randomUUID()}` }, userErrors: [] } },
          },
        };
      return { status: 200, body: { data: { tagsAdd: { node: { id: variables.id }, userErrors: [] } } } };
    }
    return { status: 404, body: { errors: 'Not Found' } };
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const hit = { url: req.url ?? '', headers: req.headers, json: body ? JSON.parse(body) : null };
      hits.push(hit);
      const { status, body: reply } = await answer(hit);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    state,
    refreshHits: () => hits.filter((h) => h.json?.grant_type === 'refresh_token'),
    tagHits: (externalId: string) => hits.filter((h) => h.json?.variables?.id === `gid://shopify/Order/${externalId}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let shopify: Awaited<ReturnType<typeof shopifyDouble>>;
let app: Express;
let env: Record<string, string>;

before(async () => {
  shopify = await shopifyDouble();
  env = { SHOPIFY_CLIENT_ID: 'shopify-client-id', SHOPIFY_CLIENT_SECRET: CLIENT_SECRET, SHOPIFY_API_ORIGIN: shopify.url };
  app = testApp(env);
});
after(() => shopify.close());

type Shop = SignedIn & { workspaceId: string; connectionId: string };

/** The owner's Shopify approval, driven through the pages: the address the browser is sent on to. */
async function approvalLink(res: request.Response): Promise<URL> {
  const link = /id="continue" class="button" href="([^"]+)"/.exec(res.text)![1].replace(/&amp;/g, '&');
  return new URL(link);
}

/** Shopify's redirect back to us, signed with the client secret. */
function callbackQuery(state: string, code: string): string {
  const params = { code, shop: 'atlas.myshopify.com', state, timestamp: '1764100000' };
  const sorted = new URLSearchParams(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : 1)));
  return new URLSearchParams({ ...params, hmac: crypto.createHmac('sha256', CLIENT_SECRET).update(sorted.toString()).digest('hex') }).toString();
}

/** A shop connected to Shopify in one click (the code exchanged for GRANT). */
async function connectedShop(): Promise<Shop> {
  shopify.state.liveRefresh = new Set([GRANT.refresh_token]);
  const s = await signUp({ target: app });
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  await openAllDay(s);
  const page = await s.agent.get('/stores/new?kind=shopify').expect(200);
  const go = await s.agent
    .post('/stores/connect')
    .type('form')
    .send({ _csrf: csrfFrom(page.text), kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', cod_only: 'true' })
    .expect(200);
  const state = (await approvalLink(go)).searchParams.get('state')!;
  const back = await s.agent.get(`/stores/shopify/callback?${callbackQuery(state, 'code-1')}`).expect(303);
  return { ...s, workspaceId: s.workspaceId!, connectionId: back.headers.location.split('/').pop()! };
}

const connectionRow = (id: string) => testKnex()('store_connections').where({ id }).first();
/** Makes the connection's access token one with `minutes` left (as if the hour had passed). */
const expireIn = (id: string, minutes: number) =>
  testKnex()('store_connections')
    .where({ id })
    .update({
      write_back: testKnex().raw(
        `jsonb_set(write_back, '{expires_at}', to_jsonb(to_char((now() + make_interval(mins => ?)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))`,
        [minutes],
      ),
    });

/** A new order of the connection, through its signed webhook. */
async function order(s: Shop) {
  const externalId = String(7_000_000_000 + crypto.randomInt(1_000_000_000));
  const raw = JSON.stringify({ ...SHOPIFY_ORDER, id: Number(externalId), name: `#${externalId.slice(-4)}` });
  const res = await request(app)
    .post(`/hooks/stores/${s.connectionId}`)
    .set({
      'Content-Type': 'application/json',
      'X-Shopify-Topic': 'orders/create',
      // A one-click connection takes only the messages Shopify sends for its own shop (issue 51).
      'X-Shopify-Shop-Domain': 'atlas.myshopify.com',
      'X-Shopify-Webhook-Id': crypto.randomUUID(),
      'X-Shopify-Hmac-Sha256': crypto.createHmac('sha256', CLIENT_SECRET).update(raw).digest('base64'),
    })
    .send(raw)
    .expect(200);
  expect(res.body.result).to.equal('created');
  return testKnex()('orders').where({ store_connection_id: s.connectionId, external_id: externalId }).first();
}

const writeBackJobs = (orderId: string) =>
  testKnex()('pgboss.job').where({ name: 'store-write-back' }).whereRaw("data->>'orderId' = ?", [orderId]).orderBy('created_on');
const settled = (orderId: string) =>
  waitFor(`the write-back of ${orderId} settled`, async () => {
    const jobs = await writeBackJobs(orderId);
    return jobs.length > 0 && jobs.every((job) => job.state === 'completed') && jobs;
  });

async function confirm(s: Shop, orderId: string) {
  await s.agent.put(`/api/orders/${orderId}`).send({ status: 'confirmed' }).expect(200);
}

/** Every column of every connection, as a dump would hold them. */
async function dump(): Promise<string> {
  const { rows } = await testKnex().raw('SELECT * FROM store_connections');
  return JSON.stringify(rows);
}

const TOKENS = [GRANT.access_token, GRANT.refresh_token, REFRESHED.access_token, REFRESHED.refresh_token];

describe('Shopify’s expiring offline tokens', () => {
  describe('with the worker running', () => {
    let worker: RunningWorker;
    before(async () => {
      worker = await testWorker({ ...env, WRITE_BACK_RETRY_SECONDS: '0.2,0.2' });
    });
    after(() => worker.stop());

    it('a token that expires between two write-backs: the second refreshes, then uses the new token; the next refresh uses the new refresh token', async () => {
      const s = await connectedShop();
      const first = await order(s);
      await confirm(s, first.id);
      await settled(first.id);
      expect(shopify.tagHits(first.external_id).map((h) => h.headers['x-shopify-access-token'])).to.deep.equal([GRANT.access_token]);
      const refreshesBefore = shopify.refreshHits().length;
      expect(refreshesBefore).to.equal(0);

      // The hour has passed but for 4 minutes: under the 5-minute margin.
      await expireIn(s.connectionId, 4);
      const second = await order(s);
      await confirm(s, second.id);
      await settled(second.id);
      const [refresh] = shopify.refreshHits();
      expect(refresh.json).to.deep.equal({
        client_id: 'shopify-client-id',
        client_secret: CLIENT_SECRET,
        grant_type: 'refresh_token',
        refresh_token: GRANT.refresh_token,
      });
      expect(shopify.tagHits(second.external_id).map((h) => h.headers['x-shopify-access-token'])).to.deep.equal([REFRESHED.access_token]);
      // Both new tokens stored, sealed, with the new expiries.
      const row = await connectionRow(s.connectionId);
      expect(secrets.open(row.write_back.access_token)).to.equal(REFRESHED.access_token);
      expect(secrets.open(row.write_back.refresh_token)).to.equal(REFRESHED.refresh_token);
      expect(row.write_back.refresh_token).to.match(new RegExp(`^v1:${secrets.keyId}:`));
      expect(Date.parse(row.write_back.expires_at)).to.be.above(Date.now() + 50 * 60_000);
      expect(row).to.include({ reconnect_needed: false, write_back_error: null });
      expect(await dump())
        .not.to.contain(REFRESHED.refresh_token)
        .and.not.to.contain(REFRESHED.access_token);

      // Expired again: the refresh sends the refresh token the last one gave.
      await expireIn(s.connectionId, 1);
      const third = await order(s);
      await confirm(s, third.id);
      await settled(third.id);
      expect(shopify.refreshHits().map((h) => h.json.refresh_token)).to.deep.equal([GRANT.refresh_token, REFRESHED.refresh_token]);
      expect(shopify.tagHits(third.external_id).map((h) => h.headers['x-shopify-access-token'])).to.deep.equal([`${REFRESHED.access_token}_2`]);
    });

    it('a 401 on a token that should still be good: one refresh, and the call made once more with the new token', async () => {
      shopify.state.refreshes = 0;
      const s = await connectedShop();
      shopify.state.revoked.add(GRANT.access_token);
      try {
        const placed = await order(s);
        await confirm(s, placed.id);
        await settled(placed.id);
        expect(shopify.tagHits(placed.external_id).map((h) => h.headers['x-shopify-access-token'])).to.deep.equal([GRANT.access_token, REFRESHED.access_token]);
        expect(secrets.open((await connectionRow(s.connectionId)).write_back.access_token)).to.equal(REFRESHED.access_token);
      } finally {
        shopify.state.revoked.clear();
      }
    });

    it('a refresh Shopify refuses: the connection needs reconnecting, said on /stores and its page with a Reconnect that keeps its orders', async () => {
      const s = await connectedShop();
      const placed = await order(s);
      await expireIn(s.connectionId, 2);
      shopify.state.refuse = true;
      try {
        await confirm(s, placed.id);
        await settled(placed.id);
      } finally {
        shopify.state.refuse = false;
      }
      // Refused once: no tagsAdd with the stale token, and no later try.
      expect(shopify.tagHits(placed.external_id)).to.have.length(0);
      expect(await writeBackJobs(placed.id)).to.have.length(1);
      const row = await connectionRow(s.connectionId);
      expect(row).to.include({ reconnect_needed: true, enabled: true });
      expect(row.write_back_error).to.equal(`Order ${placed.external_ref}: Shopify no longer renews this connection’s access: reconnect it`);
      const api = (await s.agent.get(`/api/stores/${s.connectionId}`).expect(200)).body;
      expect(api).to.include({ reconnect_needed: true, reconnect_before: null });

      const list = await s.agent.get('/stores').expect(200);
      expect(list.text).to.contain('Reconnect needed').and.contain(`action="/stores/${s.connectionId}/reconnect"`);
      const page = await s.agent.get(`/stores/${s.connectionId}`).expect(200);
      expect(page.text).to.contain('Shopify no longer renews this connection’s access').and.contain(`action="/stores/${s.connectionId}/reconnect"`);
      const french = await s.agent.get('/stores').set('Accept-Language', 'fr').expect(200);
      expect(french.text).to.contain('Reconnexion nécessaire').and.contain('Reconnecter');

      // Reconnect: Shopify's approval again for the same shop; the same row gets new tokens.
      const go = await s.agent
        .post(`/stores/${s.connectionId}/reconnect`)
        .type('form')
        .send({ _csrf: csrfFrom(page.text) })
        .expect(200);
      const authorize = await approvalLink(go);
      expect(authorize.origin + authorize.pathname).to.equal(`${shopify.url}/admin/oauth/authorize`);
      const back = await s.agent.get(`/stores/shopify/callback?${callbackQuery(authorize.searchParams.get('state')!, 'code-again')}`).expect(303);
      expect(back.headers.location).to.equal(`/stores/${s.connectionId}`);
      const after = await connectionRow(s.connectionId);
      expect(after).to.include({ id: s.connectionId, reconnect_needed: false, write_back_error: null, enabled: true });
      // The audit log: connected once (in one click), reconnected once, by the owner; no token in it.
      const audited = await testKnex()('audit_events').where({ workspace_id: s.workspaceId }).whereLike('action', 'store_%').orderBy('created_at');
      expect(audited.map((e) => [e.action, e.actor_id, e.target_id])).to.deep.equal([
        ['store_connected', s.userId, s.connectionId],
        ['store_reconnected', s.userId, s.connectionId],
      ]);
      expect(JSON.stringify(audited)).not.to.contain(GRANT.access_token).and.not.to.contain(GRANT.refresh_token);
      expect(secrets.open(after.write_back.refresh_token)).to.equal(`${GRANT.refresh_token}_again`);
      expect(await testKnex()('store_connections').where({ workspace_id: s.workspaceId })).to.have.length(1);
      expect((await testKnex()('orders').where({ id: placed.id }).first()).store_connection_id).to.equal(s.connectionId);
      expect((await s.agent.get('/stores').expect(200)).text).not.to.contain('Reconnect needed');

      // Write-back works again, with the new token.
      const next = await order(s);
      await confirm(s, next.id);
      await settled(next.id);
      expect(shopify.tagHits(next.external_id).map((h) => h.headers['x-shopify-access-token'])).to.deep.equal([`${GRANT.access_token}_again`]);
    });

    it('a legacy connection with a non-expiring token (kept in plain text): still used, and listed as “reconnect before 1 January 2027”', async () => {
      const s = await connectedShop();
      const legacy = `shpua_legacy_${crypto.randomBytes(8).toString('hex')}`;
      await testKnex()('store_connections')
        .where({ id: s.connectionId })
        .update({ write_back: JSON.stringify({ access_token: legacy }) });
      const placed = await order(s);
      await confirm(s, placed.id);
      await settled(placed.id);
      expect(shopify.tagHits(placed.external_id).map((h) => h.headers['x-shopify-access-token'])).to.deep.equal([legacy]);

      expect((await s.agent.get(`/api/stores/${s.connectionId}`).expect(200)).body).to.include({ reconnect_needed: false, reconnect_before: '2027-01-01' });
      const list = await s.agent.get('/stores').expect(200);
      expect(list.text).to.contain('Reconnect before 1 January 2027').and.contain(`action="/stores/${s.connectionId}/reconnect"`);
      expect((await s.agent.get('/stores').set('Accept-Language', 'ar').expect(200)).text).to.contain('أعد الربط قبل 1 يناير 2027');
      const page = await s.agent.get(`/stores/${s.connectionId}`).expect(200);
      expect(page.text).to.contain('which Shopify refuses from 1 January 2027');

      // Reconnected: an expiring token in its place, and nothing more to say.
      const go = await s.agent
        .post(`/stores/${s.connectionId}/reconnect`)
        .type('form')
        .send({ _csrf: csrfFrom(page.text) })
        .expect(200);
      const state = (await approvalLink(go)).searchParams.get('state')!;
      await s.agent.get(`/stores/shopify/callback?${callbackQuery(state, 'code-again')}`).expect(303);
      expect((await s.agent.get(`/api/stores/${s.connectionId}`).expect(200)).body.reconnect_before).to.equal(null);
      expect((await s.agent.get('/stores').expect(200)).text).not.to.contain('Reconnect before');
      expect(await dump()).not.to.contain(`${GRANT.access_token}_again`);
    });
  });

  describe('without a worker (the write-backs run here)', () => {
    it('two write-backs at once on an expiring token: exactly one refresh reaches Shopify, and both use its new token', async () => {
      shopify.state.refreshes = 0;
      const s = await connectedShop();
      const [a, b] = [await order(s), await order(s)];
      await confirm(s, a.id);
      await confirm(s, b.id);
      const jobs = [...(await writeBackJobs(a.id)), ...(await writeBackJobs(b.id))];
      expect(jobs).to.have.length(2);
      await testKnex()('pgboss.job')
        .whereIn(
          'id',
          jobs.map((job) => job.id),
        )
        .delete();
      await expireIn(s.connectionId, 3);
      const before = shopify.refreshHits().length;
      // Shopify answers the refresh only once the other write-back waits on the connection's lock.
      let waited = false;
      shopify.state.beforeRefresh = async () => {
        waited = await waitFor('the other write-back waiting on the connection’s row lock', async () => {
          const { rows } = await testKnex().raw(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%store_connections%for update%'",
          );
          return rows.length > 0;
        });
      };
      const services = createServices(testKnex(), loadConfig({ ...TEST_ENV, ...env }), new Jobs(testKnex()));
      const sender = new SignedSender(true, 5000);
      try {
        const done = await Promise.all(jobs.map((job) => services.storeWriteBack.perform(job.data as WriteBackJob, (r) => sender.request(r))));
        expect(done).to.deep.equal([{ result: 'sent' }, { result: 'sent' }]);
      } finally {
        shopify.state.beforeRefresh = null;
        sender.close();
      }
      expect(waited).to.equal(true);
      expect(shopify.refreshHits().slice(before)).to.have.length(1);
      for (const placed of [a, b])
        expect(shopify.tagHits(placed.external_id).map((h) => h.headers['x-shopify-access-token'])).to.deep.equal([REFRESHED.access_token]);
      expect(secrets.open((await connectionRow(s.connectionId)).write_back.refresh_token)).to.equal(REFRESHED.refresh_token);
    });

    it('a dump of store_connections holds neither token in plain text; each sealed value names its key', async () => {
      const s = await connectedShop();
      const text = await dump();
      for (const token of TOKENS) expect(text).not.to.contain(token);
      const row = await connectionRow(s.connectionId);
      for (const field of ['access_token', 'refresh_token']) {
        expect(row.write_back[field]).to.match(new RegExp(`^v1:${secrets.keyId}:[\\w-]{16}:[\\w-]{22}:[\\w-]+$`));
        // Another key cannot open it.
        expect(() => new Secrets(Secrets.newKey()).open(row.write_back[field])).to.throw('no key');
      }
      expect(secrets.open(row.write_back.access_token)).to.equal(GRANT.access_token);
    });
  });
});
