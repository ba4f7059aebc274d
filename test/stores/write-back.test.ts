import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import request from 'supertest';
import { ConfigError, loadConfig, ROOT } from '../../config';
import { Jobs, QUEUES } from '../../db/jobs';
import { SignedSender } from '../../integrations/http';
import { Secrets } from '../../integrations/secrets';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import { ShopifyAdmin, StoreWriteBackService } from '../../services/stores';
import type { RunningWorker } from '../../worker';
import { startWorker } from '../../worker';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfOf, signUp, TEST_ENV } from '../helpers/app';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import { openAllDay, waitFor } from '../helpers/loop';

const SHOPIFY_ORDER = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-orders-create.json'), 'utf8'));
const WOO_ORDER = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'woocommerce-order.json'), 'utf8'));
const YOUCAN_RAW = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'youcan-order-create.json'));
const SHOPIFY_SECRET = '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';
const TOKEN = `shpat_${crypto.randomBytes(16).toString('hex')}`;
const CONSUMER_KEY = `ck_${crypto.randomBytes(20).toString('hex')}`;
const CONSUMER_SECRET = `cs_${crypto.randomBytes(20).toString('hex')}`;
/** Three tries in all, a fifth of a second apart: the schedule's shape, at a test's pace. */
const FAST_RETRIES = { WRITE_BACK_RETRY_SECONDS: '0.2,0.2' };

interface Hit {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: the JSON a store's API receives, read field by field
  json: any;
}
type Answer = { status: number; body?: unknown };

/** A store's API double on 127.0.0.1: records each request and answers as `answer` says. */
async function storeDouble(answer: (hit: Hit) => Answer) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const hit = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, json: body ? JSON.parse(body) : null };
      hits.push(hit);
      const { status, body: reply = {} } = answer(hit);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const tagged = (gid: string) => ({ data: { tagsAdd: { node: { id: gid }, userErrors: [] } } });
/** Shopify's answers, by the order's gid (the file shares one double: SHOPIFY_API_ORIGIN is the worker's). */
const shopifyAnswers = new Map<string, () => Answer>();
let shopify: Awaited<ReturnType<typeof storeDouble>>;
const shopifyHits = (externalId: string) => shopify.hits.filter((h) => h.json?.variables?.id === `gid://shopify/Order/${externalId}`);

type Shop = SignedIn & { workspaceId: string; storeId: string; secret: string };

async function shop(store: Record<string, unknown>): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  await openAllDay(s);
  const created = (await s.agent.post('/api/stores').send(store).expect(201)).body;
  return { ...s, workspaceId: s.workspaceId!, storeId: created.id, secret: created.secret ?? (store.secret as string) };
}

const shopifyShop = (writeBack: object | null = { access_token: TOKEN }) =>
  shop({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: SHOPIFY_SECRET, write_back: writeBack });
const wooShop = (url: string, writeBack: object = { consumer_key: CONSUMER_KEY, consumer_secret: CONSUMER_SECRET }) =>
  shop({ kind: 'woocommerce', name: 'Boutique', shop: url, write_back: writeBack });

function hook(s: Shop, raw: string, headers: Record<string, string>) {
  return request(appUrl())
    .post(`/hooks/stores/${s.storeId}`)
    .set({ 'Content-Type': 'application/json', ...headers })
    .send(raw);
}

/** A Shopify order message, signed as Shopify signs it. */
function shopifyHook(s: Shop, order: object, topic = 'orders/create') {
  const raw = JSON.stringify(order);
  const hmac = crypto.createHmac('sha256', SHOPIFY_SECRET).update(raw).digest('base64');
  return hook(s, raw, { 'X-Shopify-Topic': topic, 'X-Shopify-Webhook-Id': crypto.randomUUID(), 'X-Shopify-Hmac-Sha256': hmac });
}

function wooHook(s: Shop, order: object, topic = 'order.created') {
  const raw = JSON.stringify(order);
  const signature = crypto.createHmac('sha256', s.secret).update(raw).digest('base64');
  return hook(s, raw, { 'X-WC-Webhook-Topic': topic, 'X-WC-Webhook-Delivery-ID': crypto.randomUUID(), 'X-WC-Webhook-Signature': signature });
}

/** A new Shopify order through the intake: its row, and the body the store sent (for its echoes). */
async function shopifyOrder(s: Shop) {
  const externalId = String(6_000_000_000 + crypto.randomInt(1_000_000_000));
  const body = { ...SHOPIFY_ORDER, id: Number(externalId), admin_graphql_api_id: `gid://shopify/Order/${externalId}`, name: `#${externalId.slice(-4)}` };
  expect((await shopifyHook(s, body).expect(200)).body.result).to.equal('created');
  return { order: await storeOrder(s, externalId), body };
}

async function wooOrder(s: Shop) {
  const externalId = String(10_000 + crypto.randomInt(1_000_000));
  const body = { ...WOO_ORDER, id: Number(externalId), number: externalId, status: 'on-hold' };
  expect((await wooHook(s, body).expect(200)).body.result).to.equal('created');
  return { order: await storeOrder(s, externalId), body };
}

const storeOrder = (s: Shop, externalId: string) => testKnex()('orders').where({ store_connection_id: s.storeId, external_id: externalId }).first();
const orderRow = (id: string) => testKnex()('orders').where({ id }).first();
const writeBackJobs = (orderId: string) =>
  testKnex()('pgboss.job').where({ name: 'store-write-back' }).whereRaw("data->>'orderId' = ?", [orderId]).orderBy('created_on');
const connectionRow = (id: string) => testKnex()('store_connections').where({ id }).first();

/** Every write-back job of the order has run, and no try is waiting. */
const settled = (orderId: string) =>
  waitFor(`the write-back of ${orderId} settled`, async () => {
    const jobs = await writeBackJobs(orderId);
    return jobs.length > 0 && jobs.every((job) => job.state === 'completed') && jobs;
  });

async function setStatus(s: Shop, orderId: string, status: string) {
  expect((await s.agent.put(`/api/orders/${orderId}`).send({ status }).expect(200)).body.status).to.equal(status);
}

/** The confirmation loop's human half: the due call claimed and its outcome recorded with notes. */
async function callOutcome(s: Shop, orderId: string, outcome: string, notes?: string) {
  const claimed = (await s.agent.post('/api/calls/next').expect(200)).body;
  expect(claimed.order.id).to.equal(orderId);
  const ended = (await s.agent.post(`/api/calls/${claimed.call.id}/outcome`).send({ outcome, notes }).expect(200)).body;
  expect(ended.order.status).to.equal(outcome);
}

describe('store write-back', () => {
  before(async () => {
    shopify = await storeDouble((hit) => shopifyAnswers.get(hit.json?.variables?.id)?.() ?? { status: 200, body: tagged(hit.json?.variables?.id) });
  });
  after(() => shopify.close());

  describe('with the worker running', () => {
    let worker: RunningWorker;
    const lines: string[] = [];
    before(async () => {
      const config = loadConfig({ ...TEST_ENV, ...FAST_RETRIES, SHOPIFY_API_ORIGIN: shopify.url });
      worker = await startWorker(config, testDatabaseUrl(), pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }));
    });
    after(() => worker.stop());

    it('Shopify, confirmed by a person (the API): one tagsAdd request with the token, the gid and confirmation:confirmed', async () => {
      const s = await shopifyShop();
      const { order } = await shopifyOrder(s);
      await setStatus(s, order.id, 'confirmed');
      const jobs = await settled(order.id);
      expect(jobs.map((job) => job.data)).to.deep.equal([{ orderId: order.id, status: 'confirmed', attempt: 1 }]);
      const hits = shopifyHits(order.external_id);
      expect(hits).to.have.length(1);
      const [hit] = hits;
      expect(hit.method).to.equal('POST');
      expect(hit.path).to.equal('/admin/api/2025-10/graphql.json');
      expect(hit.headers['x-shopify-access-token']).to.equal(TOKEN);
      expect(hit.headers['content-type']).to.equal('application/json');
      expect(hit.json.query).to.match(
        /^mutation \w+\(\$id: ID!, \$tags: \[String!\]!\) \{\s+tagsAdd\(id: \$id, tags: \$tags\) \{ node \{ id \} userErrors \{ field message \} \}/,
      );
      expect(hit.json.variables).to.deep.equal({ id: `gid://shopify/Order/${order.external_id}`, tags: ['confirmation:confirmed'] });
      // The order as it was but its status; the person's change cancelled its open operation.
      // The status changed, so the order's last change moved (retention counts from it).
      const confirmed = await orderRow(order.id);
      expect(confirmed.changed_at).to.be.instanceOf(Date);
      expect(confirmed).to.deep.equal({ ...order, status: 'confirmed', op_status: 'cancelled', changed_at: confirmed.changed_at });
      expect((await s.agent.get(`/api/stores/${s.storeId}`).expect(200)).body.write_back).to.deep.equal({ enabled: true, last_error: null });
    });

    it('Shopify, an order id above 2^53: the tag goes to that very order, its id exact from the raw JSON', async () => {
      const s = await shopifyShop();
      // A random id of that size that a JavaScript number cannot hold (1 in ~128 of them could).
      let bigId: string;
      do bigId = `82098291194615${String(crypto.randomInt(1000, 9999))}`;
      while (String(Number(bigId)) === bigId);
      expect(String(Number(bigId))).to.not.equal(bigId);
      const raw = JSON.stringify({ ...SHOPIFY_ORDER, id: 'ID', name: '#1002' }).replace('"ID"', bigId);
      const hmac = crypto.createHmac('sha256', SHOPIFY_SECRET).update(raw).digest('base64');
      expect(
        (await hook(s, raw, { 'X-Shopify-Topic': 'orders/create', 'X-Shopify-Webhook-Id': crypto.randomUUID(), 'X-Shopify-Hmac-Sha256': hmac }).expect(200))
          .body.result,
      ).to.equal('created');
      const order = await storeOrder(s, bigId);
      await setStatus(s, order.id, 'confirmed');
      await settled(order.id);
      const hits = shopifyHits(bigId);
      expect(hits).to.have.length(1);
      expect(hits[0].json.variables).to.deep.equal({ id: `gid://shopify/Order/${bigId}`, tags: ['confirmation:confirmed'] });
    });

    it('Shopify, unconfirmed by a person on the order page: the tag confirmation:unconfirmed', async () => {
      const s = await shopifyShop();
      const { order } = await shopifyOrder(s);
      const csrf = await csrfOf(s.agent, `/orders/${order.id}`);
      await s.agent.post(`/orders/${order.id}/status`).type('form').send({ _csrf: csrf, status: 'unconfirmed' }).expect(303);
      await settled(order.id);
      const hits = shopifyHits(order.external_id);
      expect(hits).to.have.length(1);
      expect(hits[0].json.variables.tags).to.deep.equal(['confirmation:unconfirmed']);
    });

    it('WooCommerce, confirmed by the loop (a call’s outcome): one private note with the outcome and the call’s notes, Basic auth; no status without set_status', async () => {
      const woo = await storeDouble((hit) => ({ status: 201, body: { id: 1, note: hit.json?.note } }));
      try {
        const s = await wooShop(woo.url);
        const { order } = await wooOrder(s);
        await callOutcome(s, order.id, 'confirmed', 'Client confirmed; deliver after 6 pm');
        await settled(order.id);
        expect(woo.hits).to.have.length(1);
        const [note] = woo.hits;
        expect(note.method).to.equal('POST');
        expect(note.path).to.equal(`/wp-json/wc/v3/orders/${order.external_id}/notes`);
        expect(note.headers.authorization).to.equal(`Basic ${Buffer.from(`${CONSUMER_KEY}:${CONSUMER_SECRET}`).toString('base64')}`);
        expect(note.headers['content-type']).to.equal('application/json');
        expect(note.json).to.deep.equal({ note: 'Confirmation call: confirmed.\nSummary: Client confirmed; deliver after 6 pm', customer_note: false });
        expect((await orderRow(order.id)).status).to.equal('confirmed');
      } finally {
        await woo.close();
      }
    });

    it('WooCommerce with set_status: the note, then PUT {status: processing} for confirmed and {status: cancelled} for unconfirmed', async () => {
      const woo = await storeDouble((hit) => ({ status: hit.method === 'POST' ? 201 : 200, body: { id: 1 } }));
      try {
        const s = await wooShop(woo.url, { consumer_key: CONSUMER_KEY, consumer_secret: CONSUMER_SECRET, set_status: true });
        const confirmed = (await wooOrder(s)).order;
        const unconfirmed = (await wooOrder(s)).order;
        await setStatus(s, confirmed.id, 'confirmed');
        await settled(confirmed.id);
        await setStatus(s, unconfirmed.id, 'unconfirmed');
        await settled(unconfirmed.id);
        const seen = woo.hits.map((h) => [h.method, h.path, h.json]);
        expect(seen).to.deep.equal([
          ['POST', `/wp-json/wc/v3/orders/${confirmed.external_id}/notes`, { note: 'Confirmation call: confirmed.', customer_note: false }],
          ['PUT', `/wp-json/wc/v3/orders/${confirmed.external_id}`, { status: 'processing' }],
          ['POST', `/wp-json/wc/v3/orders/${unconfirmed.external_id}/notes`, { note: 'Confirmation call: unconfirmed.', customer_note: false }],
          ['PUT', `/wp-json/wc/v3/orders/${unconfirmed.external_id}`, { status: 'cancelled' }],
        ]);
        for (const hit of woo.hits) expect(hit.headers.authorization).to.equal(`Basic ${Buffer.from(`${CONSUMER_KEY}:${CONSUMER_SECRET}`).toString('base64')}`);
      } finally {
        await woo.close();
      }
    });

    it('Shopify answers 500: tried three times, then write_back.last_error on the API and the page; the order is untouched; a later success clears it', async () => {
      const s = await shopifyShop();
      const { order } = await shopifyOrder(s);
      shopifyAnswers.set(`gid://shopify/Order/${order.external_id}`, () => ({ status: 500, body: { errors: 'Internal error' } }));
      await setStatus(s, order.id, 'confirmed');
      const before = await orderRow(order.id);
      await waitFor('the last error', async () => (await connectionRow(s.storeId)).write_back_error);
      await settled(order.id);
      expect(shopifyHits(order.external_id)).to.have.length(3);
      expect((await writeBackJobs(order.id)).map((job) => job.data.attempt)).to.deep.equal([1, 2, 3]);
      const error = `Order ${order.external_ref}: Shopify answered 500`;
      expect((await s.agent.get(`/api/stores/${s.storeId}`).expect(200)).body.write_back).to.deep.equal({ enabled: true, last_error: error });
      expect((await s.agent.get(`/stores/${s.storeId}`).expect(200)).text).to.contain(error);
      // In French and Arabic the page says it by its code, not in the API's English.
      for (const [language, said] of [
        ['fr', `Commande ${order.external_ref} : Shopify a répondu 500`],
        ['ar', `الطلب ${order.external_ref}: أجاب Shopify بـ500`],
      ]) {
        await s.agent
          .post('/account/language')
          .type('form')
          .send({ _csrf: await csrfOf(s.agent, '/orders/new'), language })
          .expect(303);
        const page = (await s.agent.get(`/stores/${s.storeId}`).expect(200)).text;
        expect(page, language).to.contain(said).and.not.to.contain('answered 500');
      }
      expect(await orderRow(order.id)).to.deep.equal(before);

      const next = (await shopifyOrder(s)).order;
      await setStatus(s, next.id, 'confirmed');
      await settled(next.id);
      expect((await connectionRow(s.storeId)).write_back_error).to.equal(null);
    });

    it('WooCommerce: a failed status change after its note is retried without writing the note again; the error names the answer, never a key', async () => {
      const woo = await storeDouble((hit) =>
        hit.method === 'POST' ? { status: 201, body: { id: 1 } } : { status: 401, body: { code: 'woocommerce_rest_cannot_edit' } },
      );
      try {
        const s = await wooShop(woo.url, { consumer_key: CONSUMER_KEY, consumer_secret: CONSUMER_SECRET, set_status: true });
        const { order } = await wooOrder(s);
        await setStatus(s, order.id, 'unconfirmed');
        await waitFor('the last error', async () => (await connectionRow(s.storeId)).write_back_error);
        await settled(order.id);
        expect(woo.hits.map((h) => h.method)).to.deep.equal(['POST', 'PUT', 'PUT', 'PUT']);
        const error = (await s.agent.get(`/api/stores/${s.storeId}`).expect(200)).body.write_back.last_error;
        expect(error).to.equal(`Order ${order.external_ref}: WooCommerce answered 401`);
        expect((await orderRow(order.id)).status).to.equal('unconfirmed');
      } finally {
        await woo.close();
      }
    });

    it('Shopify answers 200 with userErrors, or with GraphQL errors: failures, retried, then shown', async () => {
      const s = await shopifyShop();
      const refused = (await shopifyOrder(s)).order;
      const throttled = (await shopifyOrder(s)).order;
      shopifyAnswers.set(`gid://shopify/Order/${refused.external_id}`, () => ({
        status: 200,
        body: { data: { tagsAdd: { node: null, userErrors: [{ field: ['id'], message: 'Order does not exist' }] } } },
      }));
      shopifyAnswers.set(`gid://shopify/Order/${throttled.external_id}`, () => ({ status: 200, body: { errors: [{ message: 'Throttled' }] } }));
      await setStatus(s, refused.id, 'confirmed');
      await waitFor('the refusal shown', async () => (await connectionRow(s.storeId)).write_back_error);
      expect(shopifyHits(refused.external_id)).to.have.length(3);
      expect((await connectionRow(s.storeId)).write_back_error).to.equal(`Order ${refused.external_ref}: Shopify refused the tag`);
      await setStatus(s, throttled.id, 'confirmed');
      await waitFor('the errors shown', async () => ((await connectionRow(s.storeId)).write_back_error ?? '').includes(throttled.external_ref));
      expect(shopifyHits(throttled.external_id)).to.have.length(3);
      expect((await connectionRow(s.storeId)).write_back_error).to.equal(`Order ${throttled.external_ref}: Shopify answered with errors`);
    });

    it('echoes of our own write-back change nothing: Shopify’s orders/updated with our tag, WooCommerce’s order.updated with processing or cancelled → ignored_unchanged', async () => {
      const s = await shopifyShop();
      const { order, body } = await shopifyOrder(s);
      await setStatus(s, order.id, 'confirmed');
      await settled(order.id);
      const before = await orderRow(order.id);
      const echo = { ...body, tags: 'confirmation:confirmed', updated_at: '2026-11-24T11:00:00+01:00' };
      expect((await shopifyHook(s, echo, 'orders/updated').expect(200)).body.result).to.equal('ignored_unchanged');
      expect(await orderRow(order.id)).to.deep.equal(before);
      expect(await writeBackJobs(order.id)).to.have.length(1);
      expect(shopifyHits(order.external_id)).to.have.length(1);

      const woo = await storeDouble((hit) => ({ status: hit.method === 'POST' ? 201 : 200, body: { id: 1 } }));
      try {
        const w = await wooShop(woo.url, { consumer_key: CONSUMER_KEY, consumer_secret: CONSUMER_SECRET, set_status: true });
        const confirmed = await wooOrder(w);
        const unconfirmed = await wooOrder(w);
        await setStatus(w, confirmed.order.id, 'confirmed');
        await setStatus(w, unconfirmed.order.id, 'unconfirmed');
        await settled(confirmed.order.id);
        await settled(unconfirmed.order.id);
        expect(woo.hits).to.have.length(4);
        const rows = [await orderRow(confirmed.order.id), await orderRow(unconfirmed.order.id)];
        const modified = '2026-11-24T11:30:00';
        const processing = { ...confirmed.body, status: 'processing', date_modified: modified, date_modified_gmt: modified };
        const cancelled = { ...unconfirmed.body, status: 'cancelled', date_modified: modified, date_modified_gmt: modified };
        expect((await wooHook(w, processing, 'order.updated').expect(200)).body.result).to.equal('ignored_unchanged');
        expect((await wooHook(w, cancelled, 'order.updated').expect(200)).body.result).to.equal('ignored_unchanged');
        expect([await orderRow(confirmed.order.id), await orderRow(unconfirmed.order.id)]).to.deep.equal(rows);
        expect(await writeBackJobs(confirmed.order.id)).to.have.length(1);
        expect(await writeBackJobs(unconfirmed.order.id)).to.have.length(1);
        const events = (await w.agent.get(`/api/stores/${w.storeId}/events`).expect(200)).body.events;
        expect(events.slice(0, 2).map((e: { result: string }) => e.result)).to.deep.equal(['ignored_unchanged', 'ignored_unchanged']);
        expect(woo.hits).to.have.length(4);
      } finally {
        await woo.close();
      }
    });

    it('the tokens and consumer secrets are in no job, no connection error and no log line', async () => {
      const s = await shopifyShop();
      const { order } = await shopifyOrder(s);
      shopifyAnswers.set(`gid://shopify/Order/${order.external_id}`, () => ({ status: 403, body: { errors: `bad token ${TOKEN}` } }));
      await setStatus(s, order.id, 'confirmed');
      await waitFor('the last error', async () => (await connectionRow(s.storeId)).write_back_error);
      await settled(order.id);
      const logged = lines.filter((line) => line.includes(order.id));
      expect(logged).to.have.length(3);
      expect(logged[2]).to.contain('"result":"failed"').and.contain('Shopify answered 403');
      const everything = JSON.stringify([lines, await writeBackJobs(order.id), await connectionRow(s.storeId).then((c) => c.write_back_error)]);
      for (const secret of [TOKEN, CONSUMER_KEY, CONSUMER_SECRET]) expect(everything).not.to.contain(secret);
    });
  });

  describe('enqueued with the status change, in its transaction', () => {
    it('a status change that rolls back leaves no job (the job existed inside the transaction)', async () => {
      const s = await shopifyShop();
      const { order } = await shopifyOrder(s);
      const rollback = new Error('rollback');
      let inside = -1;
      await testKnex()
        .transaction(async (trx) => {
          await trx('orders').where({ id: order.id }).update({ status: 'confirmed' });
          inside = (await trx('pgboss.job').where({ name: 'store-write-back' }).whereRaw("data->>'orderId' = ?", [order.id])).length;
          throw rollback;
        })
        .catch((err) => {
          if (err !== rollback) throw err;
        });
      expect(inside).to.equal(1);
      expect(await writeBackJobs(order.id)).to.have.length(0);
      expect((await orderRow(order.id)).status).to.equal('pending');
    });

    it('no job: a connection without write_back, a YouCan or custom order, an order that came through the API, a status that is not final, the same status again', async () => {
      const none = await shopifyShop(null);
      const plain = (await shopifyOrder(none)).order;
      await setStatus(none, plain.id, 'confirmed');

      const youcan = await shop({ kind: 'youcan', name: 'Atlas YouCan', secret: 'youcan-client-secret-7f3a9c2e' });
      const youcanHmac = crypto.createHmac('sha256', youcan.secret).update(YOUCAN_RAW).digest('hex');
      expect((await hook(youcan, YOUCAN_RAW.toString('latin1'), { 'x-youcan-signature': youcanHmac }).expect(200)).body.result).to.equal('created');
      // Even with credentials forced in beside the rules, YouCan is never written to.
      await testKnex()('store_connections')
        .where({ id: youcan.storeId })
        .update({ write_back: JSON.stringify({ access_token: TOKEN }) });
      const youcanOrder = await testKnex()('orders').where({ store_connection_id: youcan.storeId }).first();
      await setStatus(youcan, youcanOrder.id, 'confirmed');

      const custom = await shop({ kind: 'custom', name: 'Sheet' });
      const raw = JSON.stringify({
        type: 'order.created',
        data: { external_id: 'row-7', client_name: 'Amina Benali', phone: '0612345678', products_name: '1 × Tajine' },
      });
      expect((await hook(custom, raw, signedHeaders(custom.secret, newMessageId(), raw)).expect(200)).body.result).to.equal('created');
      const customOrder = await storeOrder(custom, 'row-7');
      await setStatus(custom, customOrder.id, 'unconfirmed');

      const s = await shopifyShop();
      const api = (await s.agent.post('/api/orders').send({ clientName: 'Amina', phone: '0612345678', storeName: 'Atlas', productsName: 'Tajine' }).expect(201))
        .body;
      await setStatus(s, api.id, 'confirmed');
      const { order } = await shopifyOrder(s);
      await setStatus(s, order.id, 'postponed');
      await setStatus(s, order.id, 'failed');

      for (const id of [plain.id, youcanOrder.id, customOrder.id, api.id, order.id]) expect(await writeBackJobs(id), id).to.have.length(0);
      await setStatus(s, order.id, 'confirmed');
      await setStatus(s, order.id, 'confirmed');
      expect(await writeBackJobs(order.id)).to.have.length(1);
      await testKnex()('pgboss.job').where({ name: 'store-write-back' }).whereRaw("data->>'orderId' = ?", [order.id]).delete();
    });

    it('a cancellation the store sent is not told back to it', async () => {
      const s = await shopifyShop();
      const { order, body } = await shopifyOrder(s);
      expect((await shopifyHook(s, { ...body, cancelled_at: '2026-11-24T12:00:00+01:00' }, 'orders/cancelled').expect(200)).body.result).to.equal('cancelled');
      expect((await orderRow(order.id)).status).to.equal('unconfirmed');
      expect(await writeBackJobs(order.id)).to.have.length(0);
    });

    it('the job the trigger writes is the row pg-boss’s own send writes, column by column', async () => {
      const s = await shopifyShop();
      const { order } = await shopifyOrder(s);
      const columns = ['name', 'priority', 'state', 'retry_limit', 'retry_count', 'retry_delay', 'retry_backoff', 'expire_in', 'singleton_key', 'policy'];
      const rollback = new Error('rollback');
      let rows: Array<Record<string, unknown>> = [];
      await testKnex()
        .transaction(async (trx) => {
          await new Jobs(testKnex()).send(trx, QUEUES.storeWriteBack.name, { orderId: order.id, status: 'sent-by-pg-boss', attempt: 0 });
          await trx('orders').where({ id: order.id }).update({ status: 'confirmed' });
          rows = await trx('pgboss.job')
            .where({ name: 'store-write-back' })
            .whereRaw("data->>'orderId' = ?", [order.id])
            .select([...columns, 'data']);
          throw rollback;
        })
        .catch((err) => {
          if (err !== rollback) throw err;
        });
      expect(rows).to.have.length(2);
      const boss = rows.find((row) => (row.data as { status: string }).status === 'sent-by-pg-boss')!;
      const ours = rows.find((row) => row !== boss)!;
      expect(ours.data).to.deep.equal({ orderId: order.id, status: 'confirmed', attempt: 1 });
      for (const column of columns) expect(ours[column], column).to.deep.equal(boss[column]);
    });

    it('WooCommerce over plain http in production: refused before any request, and shown', async () => {
      const woo = await storeDouble(() => ({ status: 201 }));
      try {
        const s = await wooShop(woo.url);
        const { order } = await wooOrder(s);
        await setStatus(s, order.id, 'confirmed');
        const [job] = await writeBackJobs(order.id);
        await testKnex()('pgboss.job').where({ id: job.id }).delete();
        const production = new StoreWriteBackService(
          testKnex(),
          new Jobs(testKnex()),
          { shopifyApiVersion: '2025-10', httpsOnly: true, retrySeconds: [] },
          new ShopifyAdmin(testKnex(), new Secrets(TEST_ENV.SECRETS_KEY), {}),
          new Secrets(TEST_ENV.SECRETS_KEY),
        );
        const sender = new SignedSender(true, 2000);
        try {
          expect(await production.perform(job.data, (r) => sender.request(r))).to.deep.equal({
            result: 'failed',
            reason: 'WooCommerce is written to over https only: the shop’s address must start with https://',
          });
        } finally {
          sender.close();
        }
        expect(woo.hits).to.have.length(0);
        expect((await connectionRow(s.storeId)).write_back_error).to.contain('over https only');
      } finally {
        await woo.close();
      }
    });

    it('SHOPIFY_API_VERSION is pinned (2025-10 unless set); SHOPIFY_API_ORIGIN, a double’s address, is refused in production', () => {
      expect(loadConfig(TEST_ENV).stores).to.deep.equal({
        shopifyApiVersion: '2025-10',
        shopifyApiOrigin: undefined,
        writeBackRetrySeconds: undefined,
        shopifyApp: undefined,
        youcanApp: undefined,
        youcanAdminOrigin: 'https://seller-area.youcan.shop',
        youcanApiOrigin: 'https://api.youcan.shop',
      });
      expect(loadConfig({ ...TEST_ENV, SHOPIFY_API_VERSION: '2026-01', ...FAST_RETRIES }).stores).to.include({ shopifyApiVersion: '2026-01' });
      expect(loadConfig({ ...TEST_ENV, ...FAST_RETRIES }).stores.writeBackRetrySeconds).to.deep.equal([0.2, 0.2]);
      const production = { ...TEST_ENV, NODE_ENV: 'production', DATABASE_URL: 'postgres://x@127.0.0.1/x', SHOPIFY_API_ORIGIN: 'http://127.0.0.1:9' };
      expect(() => loadConfig(production)).to.throw(ConfigError, 'SHOPIFY_API_ORIGIN: not allowed when NODE_ENV=production');
      expect(() => loadConfig({ ...TEST_ENV, SHOPIFY_API_VERSION: 'latest' })).to.throw(ConfigError, 'SHOPIFY_API_VERSION');
      expect(() => loadConfig({ ...TEST_ENV, WRITE_BACK_RETRY_SECONDS: '5,soon' })).to.throw(ConfigError, 'WRITE_BACK_RETRY_SECONDS');
    });
  });

  describe('through the outbound guard (a worker with ALLOW_PRIVATE_URLS=false)', () => {
    let worker: RunningWorker;
    before(async () => {
      worker = await startWorker(loadConfig({ ...TEST_ENV, ...FAST_RETRIES, ALLOW_PRIVATE_URLS: 'false' }), testDatabaseUrl(), pino({ level: 'silent' }));
    });
    after(() => worker.stop());

    it('a shop on a private address gets no request; the connection says the address is not allowed, naming no address', async () => {
      const woo = await storeDouble(() => ({ status: 201 }));
      try {
        const s = await wooShop(woo.url);
        const { order } = await wooOrder(s);
        await setStatus(s, order.id, 'confirmed');
        await waitFor('the last error', async () => (await connectionRow(s.storeId)).write_back_error);
        await settled(order.id);
        expect(woo.hits).to.have.length(0);
        expect((await connectionRow(s.storeId)).write_back_error).to.equal(
          `Order ${order.external_ref}: WooCommerce could not be reached: address not allowed`,
        );
      } finally {
        await woo.close();
      }
    });
  });
});
