import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { ROOT } from '../../config';
import { SignedSender } from '../../integrations/http';
import { Secrets } from '../../integrations/secrets';
import { ValidationError } from '../../services/shared';
import { StoreConnectService } from '../../services/stores';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, signUp, TEST_ENV, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { testWorker, waitFor } from '../helpers/loop';
import { Jobs } from '../../db/jobs';
import { opened } from '../helpers/secrets';

/**
 * One click: doubles of Shopify's OAuth and Admin GraphQL, WooCommerce's wc-auth and webhooks REST
 * API, and YouCan's OAuth and resthooks, on 127.0.0.1 (their origins are settings), driven end to
 * end: start → approve → callback → webhooks registered → a signed order arrives and is created.
 */
const SHOPIFY_ORDER = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-orders-create.json'), 'utf8');
const WOO_ORDER = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'woocommerce-order.json'), 'utf8');
const YOUCAN_ORDER = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'youcan-order-create.json'));
/** Shopify's answer to the code exchange with expiring=1: an access token for an hour, a refresh token for 90 days. */
const SHOPIFY_GRANT = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-offline-token-expiring.json'), 'utf8'));
const SHOPIFY_SECRET = 'shpss_app_client_secret_0123456789';
const secrets = new Secrets(TEST_ENV.SECRETS_KEY);
const YOUCAN_SECRET = 'youcan_app_client_secret_9876543210';
const BASE = 'http://127.0.0.1:3000';

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Handler = (hit: Hit) => { status: number; body: unknown } | undefined;

/** A platform double: records every request, answers by `handler` (or 404). */
async function double(handler: Handler) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      hits.push(hit);
      const answer = double.current(hit) ?? { status: 404, body: { message: 'not found' } };
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  const double = { current: handler, hits, url: '', close: () => new Promise<void>((r) => server.close(() => r())) };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  double.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return double;
}

/** Shopify's answers: the token for a code, a subscription id per webhookSubscriptionCreate (the n-th may fail). */
function shopifyHandler(options: { tokenStatus?: number; failAt?: number; failStatus?: number } = {}): Handler {
  let created = 0;
  return (hit) => {
    if (hit.url === '/admin/oauth/access_token') {
      return options.tokenStatus ? { status: options.tokenStatus, body: { errors: 'boom' } } : { status: 200, body: SHOPIFY_GRANT };
    }
    if (hit.url === '/admin/api/2025-10/graphql.json') {
      const { query, variables } = JSON.parse(hit.body);
      if (query.includes('webhookSubscriptionDelete'))
        return { status: 200, body: { data: { webhookSubscriptionDelete: { deletedWebhookSubscriptionId: variables.id, userErrors: [] } } } };
      created += 1;
      if (created === options.failAt && options.failStatus) return { status: options.failStatus, body: { errors: 'Internal error' } };
      if (created === options.failAt)
        return {
          status: 200,
          body: { data: { webhookSubscriptionCreate: { webhookSubscription: null, userErrors: [{ field: ['uri'], message: 'Address is invalid' }] } } },
        };
      return {
        status: 200,
        body: { data: { webhookSubscriptionCreate: { webhookSubscription: { id: `gid://shopify/WebhookSubscription/${created}` }, userErrors: [] } } },
      };
    }
    return undefined;
  };
}

let shopify: Awaited<ReturnType<typeof double>>;
let woo: Awaited<ReturnType<typeof double>>;
let youcan: Awaited<ReturnType<typeof double>>;
let connectApp: Express;

before(async () => {
  shopify = await double(shopifyHandler());
  woo = await double(() => undefined);
  youcan = await double(() => undefined);
  connectApp = testApp({
    SHOPIFY_CLIENT_ID: 'shopify-client-id',
    SHOPIFY_CLIENT_SECRET: SHOPIFY_SECRET,
    SHOPIFY_API_ORIGIN: shopify.url,
    YOUCAN_CLIENT_ID: 'youcan-client-id',
    YOUCAN_CLIENT_SECRET: YOUCAN_SECRET,
    YOUCAN_ADMIN_ORIGIN: youcan.url,
    YOUCAN_API_ORIGIN: youcan.url,
  });
});
after(async () => {
  await Promise.all([shopify.close(), woo.close(), youcan.close()]);
});

type Owner = SignedIn & { workspaceId: string };

async function owner(): Promise<Owner> {
  const s = await signUp({ target: connectApp });
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId! };
}

/** The owner's "Connect" press: the platform's address the browser is sent to. */
async function start(s: Owner, form: Record<string, string>): Promise<URL> {
  const page = await s.agent.get(`/stores/new?kind=${form.kind}`).expect(200);
  const res = await s.agent
    .post('/stores/connect')
    .type('form')
    .send({ _csrf: csrfFrom(page.text), cod_only: 'true', ...form })
    .expect(200);
  // The page goes on to the platform by its Refresh header, and by a link.
  const link = /id="continue" class="button" href="([^"]+)"/.exec(res.text)![1].replace(/&amp;/g, '&');
  expect(res.headers.refresh).to.equal(`0; url=${link}`);
  return new URL(link);
}

/** Shopify's redirect back: the query signed with the app's client secret as Shopify signs it. */
function shopifyCallbackQuery(params: Record<string, string>, secret = SHOPIFY_SECRET): string {
  const sorted = new URLSearchParams(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : 1)));
  const hmac = crypto.createHmac('sha256', secret).update(sorted.toString()).digest('hex');
  return new URLSearchParams({ ...params, hmac }).toString();
}

/** The owner's connections, each signing key opened (sealed at rest); the write-back credentials as stored. */
const connectionsOf = async (s: Owner) => (await testKnex()('store_connections').where({ workspace_id: s.workspaceId })).map((row) => opened(row));
const statesOf = (s: Owner) => testKnex()('oauth_states').where({ workspace_id: s.workspaceId });
/** Makes the owner's approvals under way `minutes` old. */
const ageStates = (s: Owner, minutes: number) => statesOf(s).update({ created_at: testKnex().raw(`now() - make_interval(mins => ?)`, [minutes]) });
const ordersOf = (s: Owner) => testKnex()('orders').where({ workspace_id: s.workspaceId });
const errorOf = (location: string) => new URL(location, BASE).searchParams.get('connect_error');

/** A message as Shopify sends it for an app's subscription: signed with the app's client secret, naming its shop (`null`: no shop named). */
function signedShopify(connectionId: string, raw: string, topic = 'orders/create', shop: string | null = 'atlas.myshopify.com', secret = SHOPIFY_SECRET) {
  const req = request(connectApp).post(`/hooks/stores/${connectionId}`).set('Content-Type', 'application/json').set('X-Shopify-Topic', topic);
  if (shop !== null) req.set('X-Shopify-Shop-Domain', shop);
  return req
    .set('X-Shopify-Webhook-Id', crypto.randomUUID())
    .set('X-Shopify-Hmac-Sha256', crypto.createHmac('sha256', secret).update(raw).digest('base64'))
    .send(raw);
}

describe('connecting a store in one click', () => {
  describe('Shopify (authorization code grant, webhookSubscriptionCreate)', () => {
    it('start → approve → callback → six subscriptions → a signed order arrives and is created; the token writes back', async () => {
      shopify.current = shopifyHandler();
      const s = await owner();
      const authorize = await start(s, { kind: 'shopify', name: 'Atlas', shop: 'Atlas.myshopify.com' });
      expect(authorize.origin + authorize.pathname).to.equal(`${shopify.url}/admin/oauth/authorize`);
      expect(Object.fromEntries(authorize.searchParams)).to.include({
        client_id: 'shopify-client-id',
        scope: 'read_orders,write_orders,read_fulfillments',
        redirect_uri: `${BASE}/stores/shopify/callback`,
      });
      const state = authorize.searchParams.get('state')!;
      expect(state).to.have.length.above(40);
      expect(await connectionsOf(s)).to.deep.equal([]);

      const before = shopify.hits.length;
      const query = shopifyCallbackQuery({
        code: 'code-123',
        host: 'YWRtaW4uc2hvcGlmeS5jb20vc3RvcmUvYXRsYXM=',
        shop: 'atlas.myshopify.com',
        state,
        timestamp: '1764100000',
      });
      const calledAt = Date.now();
      const back = await s.agent.get(`/stores/shopify/callback?${query}`).expect(303);
      const answeredAt = Date.now();
      const [connection] = await connectionsOf(s);
      expect(back.headers.location).to.equal(`/stores/${connection.id}`);
      expect(connection).to.include({
        kind: 'shopify',
        name: 'Atlas',
        shop: 'atlas.myshopify.com',
        enabled: true,
        pending: false,
        connected_by: 'oauth',
        secret: SHOPIFY_SECRET,
      });
      // The tokens sealed, with their expiries: an hour and 90 days from the exchange.
      expect(Object.keys(connection.write_back).sort()).to.deep.equal(['access_token', 'expires_at', 'refresh_token', 'refresh_token_expires_at']);
      expect(secrets.open(connection.write_back.access_token)).to.equal(SHOPIFY_GRANT.access_token);
      expect(secrets.open(connection.write_back.refresh_token)).to.equal(SHOPIFY_GRANT.refresh_token);
      expect(Date.parse(connection.write_back.expires_at)).to.be.within(calledAt + 3_600_000, answeredAt + 3_600_000);
      expect(Date.parse(connection.write_back.refresh_token_expires_at)).to.be.within(calledAt + 7_776_000_000, answeredAt + 7_776_000_000);
      expect(JSON.stringify(connection)).not.to.contain(SHOPIFY_GRANT.access_token).and.not.to.contain(SHOPIFY_GRANT.refresh_token);
      // The audit log: connected in one click, once, by the owner, named; no token in it.
      const audited = await testKnex()('audit_events').where({ workspace_id: s.workspaceId });
      expect(audited.map((e) => [e.action, e.actor_id, e.target_id, e.target_label])).to.deep.equal([['store_connected', s.userId, connection.id, 'Atlas']]);
      expect(JSON.stringify(audited)).not.to.contain(SHOPIFY_GRANT.access_token).and.not.to.contain(SHOPIFY_GRANT.refresh_token);

      const hits = shopify.hits.slice(before);
      // An expiring offline token is asked for.
      expect(JSON.parse(hits[0].body)).to.deep.equal({ client_id: 'shopify-client-id', client_secret: SHOPIFY_SECRET, code: 'code-123', expiring: 1 });
      const subscriptions = hits.slice(1).map((h) => JSON.parse(h.body).variables);
      expect(subscriptions.map((v) => v.topic)).to.deep.equal([
        'ORDERS_CREATE',
        'ORDERS_UPDATED',
        'ORDERS_CANCELLED',
        'FULFILLMENTS_CREATE',
        'FULFILLMENTS_UPDATE',
        'APP_UNINSTALLED',
      ]);
      expect(new Set(subscriptions.map((v) => v.uri))).to.deep.equal(new Set([`${BASE}/hooks/stores/${connection.id}`]));
      expect(hits.slice(1).every((h) => h.headers['x-shopify-access-token'] === SHOPIFY_GRANT.access_token)).to.equal(true);

      const page = await s.agent.get(`/stores/${connection.id}`).expect(200);
      expect(page.text).to.contain('Shopify is connected');
      expect((await signedShopify(connection.id, SHOPIFY_ORDER).expect(200)).body.result).to.equal('created');
      expect((await ordersOf(s))[0]).to.include({ source: 'shopify', external_id: '5678901234', store_connection_id: connection.id });
      // A fulfilment the app is told of is answered and ignored.
      // A shipment of an order we do not have: answered 200, nothing changed.
      const shipment = '{"id":1,"order_id":820982911946154999,"shipment_status":null}';
      expect((await signedShopify(connection.id, shipment, 'fulfillments/create').expect(200)).body.result).to.equal('ignored_unchanged');
    });

    it('refusals: a bad hmac, a reused state, another session’s state, a foreign shop, a refused approval, a platform 5xx: the reason in the owner’s language, nothing left', async () => {
      shopify.current = shopifyHandler();
      const s = await owner();
      const state = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })).searchParams.get('state')!;
      const params = { code: 'c', shop: 'atlas.myshopify.com', state, timestamp: '1764100000' };
      // Bad hmac: signed with another key.
      const forged = await s.agent.get(`/stores/shopify/callback?${shopifyCallbackQuery(params, 'not-the-secret')}`).expect(303);
      expect(errorOf(forged.headers.location)).to.equal('hmac');
      // Another owner's session cannot use this state.
      const other = await owner();
      expect(errorOf((await other.agent.get(`/stores/shopify/callback?${shopifyCallbackQuery(params)}`).expect(303)).headers.location)).to.equal('state');
      // A foreign shop, correctly signed, is refused.
      const foreign = await s.agent.get(`/stores/shopify/callback?${shopifyCallbackQuery({ ...params, shop: 'evil.myshopify.com' })}`).expect(303);
      expect(errorOf(foreign.headers.location)).to.equal('shop');
      // The state was taken by that try: it cannot be used again.
      const reused = await s.agent.get(`/stores/shopify/callback?${shopifyCallbackQuery(params)}`).expect(303);
      expect(errorOf(reused.headers.location)).to.equal('state');
      // A shop name that is not myshopify.com.
      const state2 = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })).searchParams.get('state')!;
      const badShop = await s.agent
        .get(`/stores/shopify/callback?${shopifyCallbackQuery({ ...params, state: state2, shop: 'atlas.example.com' })}`)
        .expect(303);
      expect(errorOf(badShop.headers.location)).to.equal('shop');
      // A refused approval.
      const state3 = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })).searchParams.get('state')!;
      const { code: _code, ...noCode } = params;
      const refused = await s.agent.get(`/stores/shopify/callback?${shopifyCallbackQuery({ ...noCode, state: state3, error: 'access_denied' })}`).expect(303);
      expect(errorOf(refused.headers.location)).to.equal('refused');
      // Shopify answers 500 to the code exchange.
      shopify.current = shopifyHandler({ tokenStatus: 500 });
      const state4 = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })).searchParams.get('state')!;
      const failed = await s.agent.get(`/stores/shopify/callback?${shopifyCallbackQuery({ ...params, state: state4 })}`).expect(303);
      expect(errorOf(failed.headers.location)).to.equal('platform');
      expect(await connectionsOf(s)).to.deep.equal([]);
      // The reason, in French for a French owner.
      const page = await s.agent.get(`${failed.headers.location}`).set('Accept-Language', 'fr').expect(200);
      expect(page.text).to.contain('La boutique n’a pas répondu comme prévu');
      shopify.current = shopifyHandler();
    });

    it('a subscription that fails midway: the ones made are deleted again and no connection is left', async () => {
      shopify.current = shopifyHandler({ failAt: 4 });
      const s = await owner();
      const state = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })).searchParams.get('state')!;
      const before = shopify.hits.length;
      const res = await s.agent
        .get(`/stores/shopify/callback?${shopifyCallbackQuery({ code: 'c', shop: 'atlas.myshopify.com', state, timestamp: '1' })}`)
        .expect(303);
      expect(errorOf(res.headers.location)).to.equal('registration');
      const deleted = shopify.hits
        .slice(before)
        .map((h) => JSON.parse(h.body || '{}'))
        .filter((b) => b.query?.includes('webhookSubscriptionDelete'))
        .map((b) => b.variables.id);
      expect(deleted.sort()).to.deep.equal([
        'gid://shopify/WebhookSubscription/1',
        'gid://shopify/WebhookSubscription/2',
        'gid://shopify/WebhookSubscription/3',
      ]);
      expect(await connectionsOf(s)).to.deep.equal([]);
      shopify.current = shopifyHandler();
    });

    it('a subscription answered 5xx midway: the ones made are deleted again, no connection and no approval are left', async () => {
      shopify.current = shopifyHandler({ failAt: 2, failStatus: 502 });
      const s = await owner();
      const state = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })).searchParams.get('state')!;
      const before = shopify.hits.length;
      const res = await s.agent
        .get(`/stores/shopify/callback?${shopifyCallbackQuery({ code: 'c', shop: 'atlas.myshopify.com', state, timestamp: '1' })}`)
        .expect(303);
      // The reason, and what the owner typed, so that trying again is one press.
      expect(res.headers.location).to.equal('/stores/new?kind=shopify&connect_error=registration&name=Atlas&shop=atlas.myshopify.com');
      const deleted = shopify.hits
        .slice(before)
        .map((h) => JSON.parse(h.body || '{}'))
        .filter((b) => b.query?.includes('webhookSubscriptionDelete'))
        .map((b) => b.variables.id);
      expect(deleted).to.deep.equal(['gid://shopify/WebhookSubscription/1']);
      expect(await connectionsOf(s)).to.deep.equal([]);
      expect(await statesOf(s)).to.deep.equal([]);
      const page = await s.agent.get(res.headers.location).set('Accept-Language', 'ar').expect(200);
      expect(page.text).to.contain('رفض المتجر تسجيل webhooks الخاصة بنا: لم يبقَ أي شيء.');
      expect(page.text)
        .to.contain('id="c-name" name="name" type="text" value="Atlas"')
        .and.contain('id="c-shop" name="shop" type="text" value="atlas.myshopify.com"');
      shopify.current = shopifyHandler();
    });

    it('an approval older than 10 minutes is refused at the callback, before anything is sent to Shopify; one of 9 minutes connects', async () => {
      shopify.current = shopifyHandler();
      const s = await owner();
      const late = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })).searchParams.get('state')!;
      await ageStates(s, 11);
      const before = shopify.hits.length;
      const refused = await s.agent
        .get(`/stores/shopify/callback?${shopifyCallbackQuery({ code: 'c', shop: 'atlas.myshopify.com', state: late, timestamp: '1' })}`)
        .expect(303);
      expect(errorOf(refused.headers.location)).to.equal('state');
      expect(shopify.hits.length, 'no code exchanged').to.equal(before);
      expect(await connectionsOf(s)).to.deep.equal([]);
      const page = await s.agent.get(refused.headers.location).set('Accept-Language', 'fr').expect(200);
      expect(page.text).to.contain('Cette autorisation a expiré ou a déjà servi');

      await statesOf(s).delete();
      const inTime = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })).searchParams.get('state')!;
      await ageStates(s, 9);
      const back = await s.agent
        .get(`/stores/shopify/callback?${shopifyCallbackQuery({ code: 'c', shop: 'atlas.myshopify.com', state: inTime, timestamp: '1' })}`)
        .expect(303);
      const [connection] = await connectionsOf(s);
      expect(back.headers.location).to.equal(`/stores/${connection.id}`);
      expect(connection).to.include({ enabled: true, pending: false });
      expect(await statesOf(s)).to.deep.equal([]);
    });

    it('app/uninstalled disables the connection and its page says so; the privacy topics are answered and redact', async () => {
      shopify.current = shopifyHandler();
      const s = await owner();
      const state = (await start(s, { kind: 'shopify', name: 'Atlas', shop: 'privacy.myshopify.com' })).searchParams.get('state')!;
      await s.agent.get(`/stores/shopify/callback?${shopifyCallbackQuery({ code: 'c', shop: 'privacy.myshopify.com', state, timestamp: '1' })}`).expect(303);
      const [connection] = await connectionsOf(s);
      const bigId = '820982911946154508';
      const order = JSON.stringify({ ...JSON.parse(SHOPIFY_ORDER), id: 'BIG' }).replace('"BIG"', bigId);
      await signedShopify(connection.id, order, 'orders/create', 'privacy.myshopify.com').expect(200);
      await signedShopify(connection.id, SHOPIFY_ORDER, 'orders/create', 'privacy.myshopify.com').expect(200);
      expect(await ordersOf(s)).to.have.length(2);

      const privacy = (topic: string, body: string, secret = SHOPIFY_SECRET) =>
        request(connectApp)
          .post('/hooks/shopify/privacy')
          .set('Content-Type', 'application/json')
          .set('X-Shopify-Topic', topic)
          .set('X-Shopify-Hmac-Sha256', crypto.createHmac('sha256', secret).update(body).digest('base64'))
          .send(body);
      const dataRequest =
        '{"shop_id":954889,"shop_domain":"privacy.myshopify.com","orders_requested":[299938],"customer":{"id":191167,"email":"amina.benali@example.com","phone":"555-625-1199"}}';
      expect((await privacy('customers/data_request', dataRequest, 'wrong').expect(401)).body).to.deep.equal({ error: 'invalid_signature' });
      await privacy('customers/data_request', dataRequest).expect(200);
      const redact = `{"shop_id":954889,"shop_domain":"privacy.myshopify.com","customer":{"id":191167,"email":"amina.benali@example.com"},"orders_to_redact":[${bigId}]}`;
      await privacy('customers/redact', redact).expect(200);
      expect((await ordersOf(s)).map((o) => o.external_id)).to.deep.equal(['5678901234']);
      // A customer Shopify names by phone alone: their orders of this shop go, another shop's stay.
      const other = await owner();
      await testKnex()('orders').insert({
        workspace_id: other.workspaceId,
        client_name: 'Amina',
        phone: '+212612345678',
        store_name: 'Elsewhere',
        products_name: 'Tea',
      });
      const byPhone = '{"shop_id":954889,"shop_domain":"privacy.myshopify.com","customer":{"id":191168,"phone":"+212 6 12 34 56 78"},"orders_to_redact":[]}';
      await privacy('customers/redact', byPhone).expect(200);
      expect(await ordersOf(s)).to.deep.equal([]);
      expect(await testKnex()('orders').where({ workspace_id: other.workspaceId }).pluck('phone')).to.deep.equal(['+212612345678']);
      await signedShopify(connection.id, SHOPIFY_ORDER, 'orders/create', 'privacy.myshopify.com').expect(200);

      const uninstalled = '{"id":1,"name":"Privacy","domain":"privacy.myshopify.com","myshopify_domain":"privacy.myshopify.com"}';
      expect((await signedShopify(connection.id, uninstalled, 'app/uninstalled', 'privacy.myshopify.com').expect(200)).body.result).to.equal('ignored');
      const [stopped] = await connectionsOf(s);
      expect(stopped).to.include({ enabled: false, disabled_reason: 'uninstalled', write_back: null });
      const page = await s.agent.get(`/stores/${connection.id}`).expect(200);
      expect(page.text).to.contain('our app was uninstalled');
      expect((await signedShopify(connection.id, SHOPIFY_ORDER, 'orders/create', 'privacy.myshopify.com').expect(404)).body).to.deep.equal({
        error: 'not_found',
      });

      await privacy('shop/redact', '{"shop_id":954889,"shop_domain":"privacy.myshopify.com"}').expect(200);
      expect(await connectionsOf(s)).to.deep.equal([]);
      expect(await ordersOf(s)).to.deep.equal([]);
    });
  });

  describe('what Shopify does not sign is not trusted (issue 51, item 5)', () => {
    /** A shop connected in one click: its connection signed with the app's one client secret. */
    async function connected(shop: string): Promise<{ owner: Owner; id: string }> {
      shopify.current = shopifyHandler();
      const s = await owner();
      const state = (await start(s, { kind: 'shopify', name: 'Atlas', shop })).searchParams.get('state')!;
      await s.agent.get(`/stores/shopify/callback?${shopifyCallbackQuery({ code: 'c', shop, state, timestamp: '1' })}`).expect(303);
      const [connection] = await connectionsOf(s);
      expect(connection).to.include({ connected_by: 'oauth', enabled: true });
      return { owner: s, id: connection.id };
    }

    it('a body signed for one shop is not taken at another shop’s connection: X-Shopify-Shop-Domain must name the connection’s shop', async () => {
      const a = await connected('trust-a.myshopify.com');
      const b = await connected('trust-b.myshopify.com');
      expect((await signedShopify(b.id, SHOPIFY_ORDER, 'orders/create', 'trust-a.myshopify.com').expect(401)).body).to.deep.equal({
        error: 'invalid_signature',
      });
      expect((await signedShopify(b.id, SHOPIFY_ORDER, 'orders/create', null)).status).to.equal(401);
      expect(await ordersOf(b.owner)).to.deep.equal([]);
      expect(await testKnex()('store_events').where({ connection_id: b.id })).to.deep.equal([]);
      // Named rightly, each shop's own connection takes it (the shop's name in any case).
      await signedShopify(b.id, SHOPIFY_ORDER, 'orders/create', 'Trust-B.myshopify.com').expect(200);
      await signedShopify(a.id, SHOPIFY_ORDER, 'orders/create', 'trust-a.myshopify.com').expect(200);
      expect(await ordersOf(a.owner)).to.have.length(1);
      expect(await ordersOf(b.owner)).to.have.length(1);
    });

    it('app/uninstalled is decided from the signed shop record naming this shop, not from the topic header', async () => {
      const c = await connected('trust-c.myshopify.com');
      // An order's signed body resent under the topic, and another shop's record: nothing changes.
      expect((await signedShopify(c.id, SHOPIFY_ORDER, 'app/uninstalled', 'trust-c.myshopify.com').expect(200)).body.result).to.equal('ignored');
      const otherShop = '{"id":2,"name":"Other","domain":"other.example","myshopify_domain":"other.myshopify.com"}';
      await signedShopify(c.id, otherShop, 'app/uninstalled', 'trust-c.myshopify.com').expect(200);
      const [still] = await connectionsOf(c.owner);
      expect(still).to.include({ enabled: true, disabled_reason: null });
      expect(still.write_back).to.not.equal(null);
      // Shopify's own record of the shop: the app is gone.
      const record = '{"id":1,"name":"Trust C","domain":"trust-c.example","myshopify_domain":"trust-c.myshopify.com"}';
      await signedShopify(c.id, record, 'app/uninstalled', 'trust-c.myshopify.com').expect(200);
      const [stopped] = await connectionsOf(c.owner);
      expect(stopped).to.include({ enabled: false, disabled_reason: 'uninstalled', write_back: null });
    });

    it('the privacy topics act only on the connections our app made for that shop, never on one the shop made by hand', async () => {
      const shop = 'trust-d.myshopify.com';
      const viaApp = await connected(shop);
      await signedShopify(viaApp.id, SHOPIFY_ORDER, 'orders/create', shop).expect(200);
      const byHand = await owner();
      const manualSecret = 'shpss_the_shops_own_notifications_key';
      const manual = (await byHand.agent.post('/api/stores').send({ kind: 'shopify', name: 'Hand', shop, secret: manualSecret }).expect(201)).body;
      // A connection made by hand is signed with the shop's own key and names no shop.
      const manualOrder = await signedShopify(manual.id, SHOPIFY_ORDER, 'orders/create', null, manualSecret).expect(200);
      expect(manualOrder.body.result).to.equal('created');
      const privacy = (topic: string, body: string) =>
        request(connectApp)
          .post('/hooks/shopify/privacy')
          .set('Content-Type', 'application/json')
          .set('X-Shopify-Topic', topic)
          .set('X-Shopify-Hmac-Sha256', crypto.createHmac('sha256', SHOPIFY_SECRET).update(body).digest('base64'))
          .send(body);
      const externalId = JSON.parse(SHOPIFY_ORDER).id;
      await privacy('customers/redact', `{"shop_id":1,"shop_domain":"${shop}","customer":{"id":2},"orders_to_redact":[${externalId}]}`).expect(200);
      expect(await ordersOf(viaApp.owner)).to.deep.equal([]);
      expect(await ordersOf(byHand)).to.have.length(1);
      await privacy('shop/redact', `{"shop_id":1,"shop_domain":"${shop}"}`).expect(200);
      expect(await connectionsOf(viaApp.owner)).to.deep.equal([]);
      expect((await connectionsOf(byHand)).map((c) => c.id)).to.deep.equal([manual.id]);
      expect(await ordersOf(byHand)).to.have.length(1);
    });
  });

  describe('WooCommerce (wc-auth, POST /wp-json/wc/v3/webhooks)', () => {
    function wooHandler(options: { failAt?: number } = {}): Handler {
      let created = 0;
      return (hit) => {
        if (hit.method === 'POST' && hit.url === '/wp-json/wc/v3/webhooks') {
          created += 1;
          if (created === options.failAt) return { status: 500, body: { code: 'internal_server_error' } };
          return { status: 201, body: { id: 100 + created, status: 'active', topic: JSON.parse(hit.body).topic } };
        }
        if (hit.method === 'DELETE' && hit.url.startsWith('/wp-json/wc/v3/webhooks/'))
          return { status: 200, body: { id: Number(hit.url.split('/')[5].split('?')[0]) } };
        return undefined;
      };
    }

    /** Start, then WooCommerce's server posting the keys to our callback_url. */
    async function approved(s: Owner) {
      const authorize = await start(s, { kind: 'woocommerce', name: 'Boutique', shop: `${woo.url}/` });
      expect(authorize.origin + authorize.pathname).to.equal(`${woo.url}/wc-auth/v1/authorize`);
      const params = Object.fromEntries(authorize.searchParams);
      expect(params).to.include({ app_name: 'Order Confirmation', scope: 'read_write', return_url: `${BASE}/stores/woocommerce/return` });
      const [pending] = await connectionsOf(s);
      expect(pending).to.include({ pending: true, enabled: false });
      expect(params.callback_url).to.equal(`${BASE}/hooks/stores/${pending.id}/keys`);
      // Listed as being connected; its intake answers 404, and the ping WooCommerce sends when a webhook is made, 200.
      expect((await s.agent.get('/api/stores').expect(200)).body.stores[0]).to.include({ pending: true, enabled: false });
      await request(connectApp).post(`/hooks/stores/${pending.id}`).send('webhook_id=12').expect(200);
      return { nonce: params.user_id, connectionId: pending.id as string };
    }

    const postKeys = (connectionId: string, nonce: string) =>
      request(connectApp)
        .post(`/hooks/stores/${connectionId}/keys`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ key_id: 7, user_id: nonce, consumer_key: 'ck_abc123', consumer_secret: 'cs_def456', key_permissions: 'read_write' }));

    it('start → approve → keys posted → back → three webhooks with our secret → a signed order is created', async () => {
      woo.current = wooHandler();
      const s = await owner();
      const { nonce, connectionId } = await approved(s);
      expect((await postKeys(connectionId, 'an-unknown-nonce').expect(404)).body).to.deep.equal({ error: 'not_found' });
      await postKeys(connectionId, nonce).expect(200);
      // Single use: the same keys again are refused.
      await postKeys(connectionId, nonce).expect(404);
      const before = woo.hits.length;
      const back = await s.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(nonce)}`).expect(303);
      expect(back.headers.location).to.equal(`/stores/${connectionId}`);
      const [connection] = await connectionsOf(s);
      expect(connection).to.include({ enabled: true, pending: false, connected_by: 'oauth', shop: woo.url });
      // WooCommerce's keys are kept sealed, each on its own (issue 58).
      expect(connection.write_back.consumer_key).to.match(/^v1:/);
      expect(secrets.openFields(connection.write_back, ['consumer_key', 'consumer_secret'])).to.deep.equal({
        consumer_key: 'ck_abc123',
        consumer_secret: 'cs_def456',
        set_status: false,
      });
      const made = woo.hits.slice(before);
      expect(made.map((h) => JSON.parse(h.body).topic)).to.deep.equal(['order.created', 'order.updated', 'order.deleted']);
      for (const hit of made) {
        expect(hit.headers.authorization).to.equal(`Basic ${Buffer.from('ck_abc123:cs_def456').toString('base64')}`);
        expect(JSON.parse(hit.body)).to.include({ delivery_url: `${BASE}/hooks/stores/${connectionId}`, secret: connection.secret, status: 'active' });
      }
      const signature = crypto.createHmac('sha256', connection.secret).update(WOO_ORDER).digest('base64');
      const res = await request(connectApp)
        .post(`/hooks/stores/${connectionId}`)
        .set('Content-Type', 'application/json')
        .set('X-WC-Webhook-Topic', 'order.created')
        .set('X-WC-Webhook-Signature', signature)
        .send(WOO_ORDER)
        .expect(200);
      expect(res.body.result).to.equal('created');
      expect(await ordersOf(s)).to.have.length(1);
    });

    it('a refused approval, keys never sent, or a webhook that fails midway: nothing left behind, and the owner is told why', async () => {
      woo.current = wooHandler({ failAt: 3 });
      const s = await owner();
      const refused = await approved(s);
      const no = await s.agent.get(`/stores/woocommerce/return?success=0&user_id=${encodeURIComponent(refused.nonce)}`).expect(303);
      expect(errorOf(no.headers.location)).to.equal('refused');
      expect(await connectionsOf(s)).to.deep.equal([]);

      const keyless = await approved(s);
      const noKeys = await s.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(keyless.nonce)}`).expect(303);
      expect(errorOf(noKeys.headers.location)).to.equal('keys');
      expect(await connectionsOf(s)).to.deep.equal([]);

      const midway = await approved(s);
      await postKeys(midway.connectionId, midway.nonce).expect(200);
      const before = woo.hits.length;
      const failed = await s.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(midway.nonce)}`).expect(303);
      expect(errorOf(failed.headers.location)).to.equal('registration');
      const deletes = woo.hits.slice(before).filter((h) => h.method === 'DELETE');
      expect(deletes.map((h) => h.url).sort()).to.deep.equal(['/wp-json/wc/v3/webhooks/101?force=true', '/wp-json/wc/v3/webhooks/102?force=true']);
      expect(await connectionsOf(s)).to.deep.equal([]);
      const page = await s.agent.get(failed.headers.location).expect(200);
      expect(page.text).to.contain('The store refused to register our webhooks');
    });

    it('keys are taken only for a live nonce naming their connection; the return only once, from the session that started it; a pending intake answers 404', async () => {
      woo.current = wooHandler();
      const first = await owner();
      const second = await owner();
      const a = await approved(first);
      const b = await approved(second);
      // A pending connection is listed as being connected, and its intake refuses a signed order.
      expect((await second.agent.get('/stores').expect(200)).text).to.contain('Being connected');
      const [pendingB] = await connectionsOf(second);
      const signature = crypto.createHmac('sha256', pendingB.secret).update(WOO_ORDER).digest('base64');
      const early = await request(connectApp)
        .post(`/hooks/stores/${b.connectionId}`)
        .set('Content-Type', 'application/json')
        .set('X-WC-Webhook-Topic', 'order.created')
        .set('X-WC-Webhook-Signature', signature)
        .send(WOO_ORDER)
        .expect(404);
      expect(early.body).to.deep.equal({ error: 'not_found' });
      expect(await ordersOf(second)).to.deep.equal([]);
      // Another approval's nonce, a nonce of nobody's, keys of an approval over 10 minutes old: refused, nothing kept.
      await postKeys(b.connectionId, a.nonce).expect(404);
      await postKeys(b.connectionId, 'no-such-nonce').expect(404);
      await ageStates(first, 11);
      await postKeys(a.connectionId, a.nonce).expect(404);
      const kept = await testKnex()('store_connections').whereIn('id', [a.connectionId, b.connectionId]).select('write_back');
      expect(kept).to.deep.equal([{ write_back: null }, { write_back: null }]);
      // The return: an unknown user_id, or another owner's session, is refused and leaves the approval alone.
      const unknown = await second.agent.get('/stores/woocommerce/return?success=1&user_id=no-such-nonce').expect(303);
      expect(errorOf(unknown.headers.location)).to.equal('state');
      const stranger = await first.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(b.nonce)}`).expect(303);
      expect(errorOf(stranger.headers.location)).to.equal('state');
      await postKeys(b.connectionId, b.nonce).expect(200);
      const back = await second.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(b.nonce)}`).expect(303);
      expect(back.headers.location).to.equal(`/stores/${b.connectionId}`);
      // Used once: the same return again is refused, and the connection made stays as it is.
      const again = await second.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(b.nonce)}`).expect(303);
      expect(errorOf(again.headers.location)).to.equal('state');
      expect((await connectionsOf(second)).map((c) => [c.pending, c.enabled])).to.deep.equal([[false, true]]);
      expect(await statesOf(second)).to.deep.equal([]);
    });

    it('the first webhook answered 5xx: nothing registered, nothing left', async () => {
      woo.current = wooHandler({ failAt: 1 });
      const s = await owner();
      const { nonce, connectionId } = await approved(s);
      await postKeys(connectionId, nonce).expect(200);
      const before = woo.hits.length;
      const failed = await s.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(nonce)}`).expect(303);
      expect(Object.fromEntries(new URL(failed.headers.location, BASE).searchParams)).to.deep.equal({
        kind: 'woocommerce',
        connect_error: 'registration',
        name: 'Boutique',
        shop: woo.url,
      });
      expect(woo.hits.slice(before).map((h) => h.method)).to.deep.equal(['POST']);
      expect(await connectionsOf(s)).to.deep.equal([]);
      expect(await statesOf(s)).to.deep.equal([]);
    });

    it('an approval lives 10 minutes; the worker removes older ones and connections left pending over an hour', async () => {
      woo.current = wooHandler();
      const age = (table: string, where: Record<string, string>, minutes: number) =>
        testKnex()(table)
          .where(where)
          .update({ created_at: testKnex().raw(`now() - interval '${minutes} minutes'`) });
      // Keys posted, then the owner comes back 11 minutes after pressing "Connect": too late.
      const slow = await owner();
      const late = await approved(slow);
      await postKeys(late.connectionId, late.nonce).expect(200);
      await age('oauth_states', { connection_id: late.connectionId }, 11);
      const refused = await slow.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(late.nonce)}`).expect(303);
      expect(errorOf(refused.headers.location)).to.equal('state');
      expect((await connectionsOf(slow)).map((c) => c.pending)).to.deep.equal([true]);
      // Back after 9 minutes: in time.
      const quick = await owner();
      const inTime = await approved(quick);
      await postKeys(inTime.connectionId, inTime.nonce).expect(200);
      await age('oauth_states', { connection_id: inTime.connectionId }, 9);
      const back = await quick.agent.get(`/stores/woocommerce/return?success=1&user_id=${encodeURIComponent(inTime.nonce)}`).expect(303);
      expect(back.headers.location).to.equal(`/stores/${inTime.connectionId}`);

      // Half-made connections: one pending for 61 minutes with its approval of 11, one for 59 with its approval of 9.
      const stale = await approved(await owner());
      const fresh = await approved(await owner());
      await age('store_connections', { id: stale.connectionId }, 61);
      await age('store_connections', { id: fresh.connectionId }, 59);
      await age('oauth_states', { connection_id: stale.connectionId }, 11);
      await age('oauth_states', { connection_id: fresh.connectionId }, 9);
      const worker = await testWorker();
      try {
        await new Jobs(testKnex()).send(testKnex(), 'housekeeping', {});
        await waitFor('the stale approval and connection to go', async () => {
          const left = await testKnex()('store_connections').where({ id: stale.connectionId });
          const states = await testKnex()('oauth_states').where({ connection_id: stale.connectionId });
          return left.length === 0 && states.length === 0;
        });
      } finally {
        await worker.stop();
      }
      expect(await testKnex()('store_connections').where({ id: fresh.connectionId }).first('pending')).to.deep.equal({ pending: true });
      expect(await testKnex()('oauth_states').where({ connection_id: fresh.connectionId })).to.have.length(1);
      expect(await testKnex()('store_connections').where({ id: inTime.connectionId }).first('pending', 'enabled')).to.deep.equal({
        pending: false,
        enabled: true,
      });
    });

    it('the shop address form: a site URL; https only in production', async () => {
      const s = await owner();
      const page = await s.agent.get('/stores/new?kind=woocommerce').expect(200);
      const res = await s.agent
        .post('/stores/connect')
        .type('form')
        .send({ _csrf: csrfFrom(page.text), kind: 'woocommerce', name: 'Boutique', shop: 'not a site' })
        .expect(400);
      expect(res.text).to.contain('must be the site’s address, such as https://atlas.ma');
      expect(await connectionsOf(s)).to.deep.equal([]);
      // In production a site reached over plain http is refused: the keys would travel in clear.
      const production = new StoreConnectService(
        testKnex(),
        new SignedSender(false),
        {
          publicBaseUrl: 'https://ocs.example',
          isProduction: true,
          shopifyApiVersion: '2025-10',
        },
        new Secrets(TEST_ENV.SECRETS_KEY),
      );
      const refused = await production
        .start({ id: s.workspaceId, role: 'owner' }, 'session', { kind: 'woocommerce', name: 'B', shop: 'http://boutique.ma' })
        .catch((err) => err);
      expect(refused).to.be.instanceOf(ValidationError);
      expect(refused.fields.shop).to.contain('https://');
      expect(await connectionsOf(s)).to.deep.equal([]);
    });
  });

  it('in production the outbound guard refuses a platform at a loopback address: nothing is sent and nothing is left (refused as a platform error)', async () => {
    shopify.current = shopifyHandler();
    const s = await owner();
    const production = new StoreConnectService(
      testKnex(),
      new SignedSender(false),
      {
        publicBaseUrl: 'https://ocs.example',
        isProduction: true,
        shopifyApp: { clientId: 'shopify-client-id', clientSecret: SHOPIFY_SECRET },
        shopifyApiOrigin: shopify.url,
        shopifyApiVersion: '2025-10',
        youcanApp: { clientId: 'youcan-client-id', clientSecret: YOUCAN_SECRET },
        youcanAdminOrigin: youcan.url,
        youcanApiOrigin: youcan.url,
      },
      new Secrets(TEST_ENV.SECRETS_KEY),
    );
    const workspace = { id: s.workspaceId, role: 'owner' as const };
    const before = { shopify: shopify.hits.length, youcan: youcan.hits.length };
    const shopifyState = new URL(
      await production.start(workspace, 'session-1', { kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' }),
    ).searchParams.get('state')!;
    const query = new URLSearchParams(shopifyCallbackQuery({ code: 'c', shop: 'atlas.myshopify.com', state: shopifyState, timestamp: '1' }));
    const refused = await production.shopifyCallback(workspace, 'session-1', query).catch((err) => err);
    expect(refused).to.include({ code: 'platform', kind: 'shopify' });
    const youcanState = new URL(await production.start(workspace, 'session-1', { kind: 'youcan', name: 'Atlas' })).searchParams.get('state')!;
    const refusedYoucan = await production.youcanCallback(workspace, 'session-1', new URLSearchParams({ code: 'c', state: youcanState })).catch((err) => err);
    expect(refusedYoucan).to.include({ code: 'platform', kind: 'youcan' });
    expect({ shopify: shopify.hits.length, youcan: youcan.hits.length }).to.deep.equal(before);
    expect(await connectionsOf(s)).to.deep.equal([]);
    expect(await statesOf(s)).to.deep.equal([]);
  });

  describe('YouCan (OAuth, POST /resthooks/subscribe)', () => {
    /** YouCan's answers; `refuse` answers a subscription to that event with its status. */
    function youcanHandler(options: { tokenStatus?: number; refuse?: Record<string, number> } = {}): Handler {
      let n = 0;
      return (hit) => {
        if (hit.url === '/oauth/token')
          return options.tokenStatus
            ? { status: options.tokenStatus, body: {} }
            : { status: 200, body: { token_type: 'Bearer', access_token: 'yc_token_1', expires_in: 31536000 } };
        if (hit.url === '/resthooks/subscribe') {
          const refused = options.refuse?.[JSON.parse(hit.body).event];
          if (refused) return { status: refused, body: { message: 'refused' } };
          n += 1;
          return { status: 201, body: { id: `sub-${n}`, event: JSON.parse(hit.body).event } };
        }
        if (hit.method === 'DELETE') return { status: 204, body: {} };
        return undefined;
      };
    }

    it('start → approve → callback → order.create and order.update subscribed → a signed order is created', async () => {
      youcan.current = youcanHandler();
      const s = await owner();
      const authorize = await start(s, { kind: 'youcan', name: 'Atlas YouCan' });
      expect(authorize.origin + authorize.pathname).to.equal(`${youcan.url}/admin/oauth/authorize`);
      expect(Object.fromEntries(authorize.searchParams)).to.include({
        client_id: 'youcan-client-id',
        redirect_uri: `${BASE}/stores/youcan/callback`,
        response_type: 'code',
        'scope[]': '*',
      });
      const before = youcan.hits.length;
      const back = await s.agent.get(`/stores/youcan/callback?code=yc-code&state=${encodeURIComponent(authorize.searchParams.get('state')!)}`).expect(303);
      const [connection] = await connectionsOf(s);
      expect(back.headers.location).to.equal(`/stores/${connection.id}`);
      expect(connection).to.include({ kind: 'youcan', enabled: true, pending: false, secret: YOUCAN_SECRET, write_back: null });
      const [token, ...subscribed] = youcan.hits.slice(before);
      expect(token.headers['content-type']).to.equal('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(token.body))).to.deep.equal({
        grant_type: 'authorization_code',
        client_id: 'youcan-client-id',
        client_secret: YOUCAN_SECRET,
        redirect_uri: `${BASE}/stores/youcan/callback`,
        code: 'yc-code',
      });
      expect(subscribed.map((h) => JSON.parse(h.body))).to.deep.equal([
        { target_url: `${BASE}/hooks/stores/${connection.id}`, event: 'order.create' },
        { target_url: `${BASE}/hooks/stores/${connection.id}`, event: 'order.update' },
      ]);
      expect(subscribed.every((h) => h.headers.authorization === 'Bearer yc_token_1')).to.equal(true);
      const res = await request(connectApp)
        .post(`/hooks/stores/${connection.id}`)
        .set('Content-Type', 'application/json')
        .set('x-youcan-signature', crypto.createHmac('sha256', YOUCAN_SECRET).update(YOUCAN_ORDER).digest('hex'))
        .send(YOUCAN_ORDER.toString('latin1'))
        .expect(200);
      expect(res.body.result).to.equal('created');
    });

    it('a refused approval and a token endpoint 5xx leave nothing; the state is single use', async () => {
      youcan.current = youcanHandler({ tokenStatus: 503 });
      const s = await owner();
      const state = (await start(s, { kind: 'youcan', name: 'Atlas YouCan' })).searchParams.get('state')!;
      const refused = await s.agent.get(`/stores/youcan/callback?error=access_denied&state=${encodeURIComponent(state)}`).expect(303);
      expect(errorOf(refused.headers.location)).to.equal('refused');
      const again = await s.agent.get(`/stores/youcan/callback?code=x&state=${encodeURIComponent(state)}`).expect(303);
      expect(errorOf(again.headers.location)).to.equal('state');
      const state2 = (await start(s, { kind: 'youcan', name: 'Atlas YouCan' })).searchParams.get('state')!;
      const failed = await s.agent.get(`/stores/youcan/callback?code=x&state=${encodeURIComponent(state2)}`).expect(303);
      expect(errorOf(failed.headers.location)).to.equal('platform');
      expect(await connectionsOf(s)).to.deep.equal([]);
    });
    it('order.create made, then order.update answered 5xx: order.create is unsubscribed again and nothing is left', async () => {
      youcan.current = youcanHandler({ refuse: { 'order.update': 500 } });
      const s = await owner();
      const state = (await start(s, { kind: 'youcan', name: 'Atlas YouCan' })).searchParams.get('state')!;
      const before = youcan.hits.length;
      const failed = await s.agent.get(`/stores/youcan/callback?code=x&state=${encodeURIComponent(state)}`).expect(303);
      expect(failed.headers.location).to.equal('/stores/new?kind=youcan&connect_error=registration&name=Atlas+YouCan&shop=');
      const removed = youcan.hits.slice(before).filter((h) => h.method === 'DELETE');
      expect(removed.map((h) => [h.url, h.headers.authorization])).to.deep.equal([['/resthooks/unsubscribe/sub-1', 'Bearer yc_token_1']]);
      expect(await connectionsOf(s)).to.deep.equal([]);
      expect(await statesOf(s)).to.deep.equal([]);
    });

    it('order.update not offered (refused 4xx): connected with order.create alone', async () => {
      youcan.current = youcanHandler({ refuse: { 'order.update': 422 } });
      const s = await owner();
      const state = (await start(s, { kind: 'youcan', name: 'Atlas YouCan' })).searchParams.get('state')!;
      const back = await s.agent.get(`/stores/youcan/callback?code=x&state=${encodeURIComponent(state)}`).expect(303);
      const [connection] = await connectionsOf(s);
      expect(back.headers.location).to.equal(`/stores/${connection.id}`);
      expect(connection).to.include({ enabled: true, pending: false });
    });

    it('an approval over 10 minutes old, or another owner’s, is refused before the code is exchanged', async () => {
      youcan.current = youcanHandler();
      const s = await owner();
      const other = await owner();
      const state = (await start(s, { kind: 'youcan', name: 'Atlas YouCan' })).searchParams.get('state')!;
      const before = youcan.hits.length;
      const stranger = await other.agent.get(`/stores/youcan/callback?code=x&state=${encodeURIComponent(state)}`).expect(303);
      expect(errorOf(stranger.headers.location)).to.equal('state');
      await ageStates(s, 11);
      const late = await s.agent.get(`/stores/youcan/callback?code=x&state=${encodeURIComponent(state)}`).expect(303);
      expect(errorOf(late.headers.location)).to.equal('state');
      expect(youcan.hits.length, 'no code exchanged').to.equal(before);
      expect(await connectionsOf(s)).to.deep.equal([]);
      expect(await connectionsOf(other)).to.deep.equal([]);
    });
  });

  it('without app credentials: /stores/new offers the manual way for Shopify, says YouCan cannot be connected, and names no server setting', async () => {
    const plain = testApp();
    const s = await signUp({ target: plain });
    const shopifyPage = await s.agent.get('/stores/new?kind=shopify').expect(200);
    expect(shopifyPage.text).to.contain('action="/stores"').and.not.contain('action="/stores/connect"');
    expect(shopifyPage.text).to.not.contain('SHOPIFY_CLIENT_ID');
    const youcanPage = await s.agent.get('/stores/new?kind=youcan').expect(200);
    expect(youcanPage.text).to.contain('YouCan cannot be connected to this service yet').and.not.contain('YOUCAN_CLIENT_ID');
    expect(youcanPage.text).to.not.contain('action="/stores"');
    const page = await s.agent.get('/stores/new?kind=shopify').expect(200);
    const res = await s.agent
      .post('/stores/connect')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), kind: 'shopify', name: 'A', shop: 'a.myshopify.com' })
      .expect(303);
    expect(errorOf(res.headers.location)).to.equal('not_configured');
    // With credentials, the one-click form comes first.
    const configured = await owner();
    const first = (await configured.agent.get('/stores/new?kind=shopify').expect(200)).text;
    expect(first.indexOf('action="/stores/connect"')).to.be.below(first.indexOf('action="/stores"'));
  });

  it('WooCommerce by hand, the second choice: we make the key, shown once, and the guide says to paste it into WooCommerce’s Secret field; an order signed with it is created', async () => {
    const s = await owner();
    const page = await s.agent.get('/stores/new?kind=woocommerce').expect(200);
    // One click first, then the manual way with its guide.
    expect(page.text.indexOf('action="/stores/connect"')).to.be.above(-1).and.below(page.text.indexOf('action="/stores"'));
    expect(page.text).to.contain('Leave it empty: we make one, shown once, for you to paste into WooCommerce’s Secret field.');
    expect(page.text).to.contain('<strong><bdi>Secret</bdi></strong>: paste the signing key we made');
    const made = await s.agent
      .post('/stores')
      .type('form')
      .send({
        _csrf: csrfFrom(page.text),
        _once: /name="_once" value="([^"]+)"/.exec(page.text)![1],
        kind: 'woocommerce',
        name: 'Boutique',
        shop: '',
        secret: '',
        cod_only: 'true',
      })
      .expect(200);
    const [connection] = await connectionsOf(s);
    expect(connection).to.include({ kind: 'woocommerce', enabled: true, pending: false });
    expect(connection.connected_by).to.not.equal('oauth');
    expect(made.text)
      .to.contain(connection.secret)
      .and.contain(`${BASE}/hooks/stores/${connection.id}`)
      .and.contain('<strong><bdi>Secret</bdi></strong>: paste the signing key we made');
    const signature = crypto.createHmac('sha256', connection.secret).update(WOO_ORDER).digest('base64');
    const res = await request(connectApp)
      .post(`/hooks/stores/${connection.id}`)
      .set('Content-Type', 'application/json')
      .set('X-WC-Webhook-Topic', 'order.created')
      .set('X-WC-Webhook-Signature', signature)
      .send(WOO_ORDER)
      .expect(200);
    expect(res.body.result).to.equal('created');
    // The guide's French and Arabic say the same.
    const fr = await s.agent.get('/stores/new?kind=woocommerce').set('Accept-Language', 'fr').expect(200);
    expect(fr.text).to.contain('<strong><bdi>Clé secrète</bdi></strong> : collez la clé de signature que nous avons créée');
    const ar = await s.agent.get('/stores/new?kind=woocommerce').set('Accept-Language', 'ar').expect(200);
    expect(ar.text).to.contain('الصق مفتاح التوقيع الذي أنشأناه');
  });

  it('docs/stores.md and the pages in en, fr and ar put one click first, with what the operator sets up once, what each platform shows on approval, and Shopify’s distribution', async () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'stores.md'), 'utf8');
    const oneClick = doc.slice(doc.indexOf('### In one click'), doc.indexOf('### By hand'));
    expect(doc.indexOf('### In one click')).to.be.above(-1).and.below(doc.indexOf('### By hand'));
    // The operator's part: the Shopify Dev Dashboard app and its redirect URL, the YouCan Partners app.
    for (const words of [
      'Dev Dashboard',
      '{PUBLIC_BASE_URL}/stores/shopify/callback',
      'YouCan Partners',
      '{PUBLIC_BASE_URL}/stores/youcan/callback',
      'SHOPIFY_CLIENT_ID',
      'YOUCAN_CLIENT_ID',
    ])
      expect(oneClick, words).to.contain(words);
    // What each platform shows the owner, and its button.
    expect(oneClick).to.match(/\| Shopify \|[^\n]*\*\*Install\*\*/);
    expect(oneClick).to.match(/\| WooCommerce \|[^\n]*\*\*Approve\*\*/);
    expect(oneClick).to.match(/\| YouCan \|[^\n]*\*\*Authorize\*\*/);
    // Shopify's distribution: the operator's choice.
    for (const words of [
      '*custom distribution*',
      'one store (or the stores of one Plus organisation)',
      '*public distribution*',
      'app review',
      'protected customer data',
    ])
      expect(oneClick, words).to.contain(words);
    expect(doc).to.contain('No manual way: connect YouCan');

    const s = await owner();
    const texts = {
      en: {
        shopify: '<strong><bdi>Install</bdi></strong>',
        woocommerce: '<strong><bdi>Approve</bdi></strong>',
        youcan: '<strong><bdi>Authorize</bdi></strong>',
      },
      fr: { shopify: 'Shopify affiche le nom de notre application', woocommerce: 'WooCommerce affiche', youcan: 'YouCan affiche notre application' },
      ar: { shopify: 'يعرض Shopify اسم تطبيقنا', woocommerce: 'يعرض WooCommerce', youcan: 'يعرض YouCan تطبيقنا' },
    };
    for (const [language, approvals] of Object.entries(texts)) {
      for (const [kind, approval] of Object.entries(approvals)) {
        const page = (await s.agent.get(`/stores/new?kind=${kind}`).set('Accept-Language', language).expect(200)).text;
        expect(page, `${language} ${kind}`).to.contain(`<html lang="${language}"`);
        const connect = page.indexOf('action="/stores/connect"');
        expect(connect, `${language} ${kind}: one click`).to.be.above(-1);
        expect(page.indexOf(approval, connect), `${language} ${kind}: what the platform shows`).to.be.above(connect);
        if (kind === 'youcan') expect(page, `${language}: no manual way`).to.not.contain('action="/stores"');
        else expect(page.indexOf('action="/stores"'), `${language} ${kind}: by hand after`).to.be.above(connect);
      }
    }
  });
});
