import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig, ROOT } from '../../config';
import { Jobs } from '../../db/jobs';
import { SignedSender } from '../../integrations/http';
import { checkEndpointUrl, UrlRefusedError } from '../../integrations/url-guard';
import { createServices } from '../../services';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfFrom, csrfOf, signUp, TEST_ENV, uniqueEmail } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey } from '../helpers/keys';
import { openAllDay } from '../helpers/loop';

/** Issue 37, items 4 to 7: what an old token, a member, an unsigned header and a stranger's address can still do. */

const ORDER = { clientName: 'Amina', phone: '0612345678', storeName: 'Atlas', productsName: 'Tajine' };

async function exchange(key: string) {
  return (await request(appUrl()).post('/api/v1/token').set('Authorization', `Bearer ${key}`).expect(200)).body as {
    access_token: string;
    publishable_key: string;
  };
}

function data(token: { access_token: string; publishable_key: string }) {
  const auth = (req: request.Test) => req.set('apikey', token.publishable_key).set('Authorization', `Bearer ${token.access_token}`);
  return {
    get: (p: string) => auth(request(appUrl()).get(`/data/v1${p}`)),
    post: (p: string, body: object) => auth(request(appUrl()).post(`/data/v1${p}`)).send(body),
    patch: (p: string, body: object) => auth(request(appUrl()).patch(`/data/v1${p}`)).send(body),
    del: (p: string) => auth(request(appUrl()).delete(`/data/v1${p}`)),
  };
}

/** Signs in again on a fresh agent (the owner's removal ended the member's sessions). */
async function signIn(email: string, password: string): Promise<SignedIn['agent']> {
  const agent = request.agent(appUrl());
  const page = await agent.get('/login').expect(200);
  await agent
    .post('/login')
    .type('form')
    .send({ _csrf: csrfFrom(page.text), email, password })
    .expect(303);
  return agent;
}

describe('an access token reads only the workspace of its key, while its user belongs there (issue 37, item 4)', () => {
  it('a removed member’s token is 401 invalid_token, in the old workspace and in the one they make next; nothing there is readable or writable', async () => {
    const owner = await signUp();
    await owner.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
    const email = uniqueEmail('member');
    const member = await signUp({ email, invitedBy: owner });
    const stays = await signUp({ invitedBy: owner });
    const token = await exchange((await createKey(member)).key);
    const staysToken = await exchange((await createKey(stays)).key);
    const ownerOrder = (await data(token).post('/orders', ORDER).expect(201)).body;

    await owner.agent.delete(`/api/workspace/members/${member.userId}`).expect(204);
    const again = await signIn(email, member.password);
    await again
      .post('/workspace')
      .type('form')
      .send({ _csrf: await csrfOf(again), name: 'My own shop' })
      .expect(303);
    const mine = await testKnex()('workspace_members').where({ user_id: member.userId }).first();
    expect(mine, 'the member made a workspace of their own').to.not.equal(undefined);
    expect(mine.workspace_id).to.not.equal(owner.workspaceId);
    await again.post('/api/agents').send({ name: 'Me', orderHandler: true }).expect(201);
    const newOrder = (
      await again
        .post('/api/orders')
        .send({ ...ORDER, clientName: 'Private' })
        .expect(201)
    ).body;

    const old = data(token);
    for (const res of [
      await old.get('/orders'),
      await old.get(`/orders/${newOrder.id}`),
      await old.get(`/orders/${ownerOrder.id}`),
      await old.get('/credits'),
      await old.post('/orders', ORDER),
      await old.patch(`/orders/${newOrder.id}`, { clientName: 'Changed' }),
      await old.del(`/orders/${newOrder.id}`),
    ]) {
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({ error: 'invalid_token' });
    }
    const kept = await testKnex()('orders').where({ id: newOrder.id }).first();
    expect(kept.client_name).to.equal('Private');
    expect(await testKnex()('orders').where({ workspace_id: mine.workspace_id })).to.have.length(1);

    // The member who stays keeps working with their token.
    const listed = (await data(staysToken).get('/orders').expect(200)).body.orders;
    expect(listed.map((o: { id: string }) => o.id)).to.include(ownerOrder.id);
  });

  it('a token without the workspace claim (issued before this change) is 401 invalid_token', async () => {
    const owner = await signUp();
    const token = await exchange((await createKey(owner)).key);
    const claims = JSON.parse(Buffer.from(token.access_token.split('.')[1], 'base64url').toString());
    expect(claims.workspace_id).to.equal(owner.workspaceId);
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
    const { workspace_id: _, ...oldClaims } = claims;
    const body = Buffer.from(JSON.stringify(oldClaims)).toString('base64url');
    const signature = crypto.createHmac('sha256', TEST_ENV.JWT_SECRET).update(`${header}.${body}`).digest('base64url');
    const res = await data({ ...token, access_token: `${header}.${body}.${signature}` }).get('/orders');
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal({ error: 'invalid_token' });
    await data(token).get('/orders').expect(200);
  });
});

describe('API keys: a member lists and revokes their own; the owner all (issue 37, item 6)', () => {
  it('a member sees only their keys and gets 404 revoking the owner’s, which stays live; the owner lists and revokes the member’s', async () => {
    const owner = await signUp();
    const member = await signUp({ invitedBy: owner });
    const ownerKey = await createKey(owner, { name: 'shop plugin' });
    const memberKey = await createKey(member, { name: 'my script' });

    const memberList = (await member.agent.get('/api/keys').expect(200)).body.keys;
    expect(memberList.map((k: { id: string }) => k.id)).to.deep.equal([memberKey.id]);
    const ownerList = (await owner.agent.get('/api/keys').expect(200)).body.keys;
    expect(ownerList.map((k: { id: string }) => k.id)).to.have.members([ownerKey.id, memberKey.id]);

    expect((await member.agent.delete(`/api/keys/${ownerKey.id}`).expect(404)).body).to.deep.equal({ error: 'API key not found' });
    expect((await testKnex()('api_keys').where({ id: ownerKey.id }).first()).revoked_at).to.equal(null);
    await exchange(ownerKey.key);

    // The page form too: a member's revoke of the owner's key finds nothing.
    const csrf = await csrfOf(member.agent, '/api-keys');
    const page = await member.agent.get('/api-keys').expect(200);
    expect(page.text).to.contain('my script').and.not.to.contain('shop plugin');
    await member.agent.post(`/api-keys/${ownerKey.id}/revoke`).type('form').send({ _csrf: csrf });
    expect((await testKnex()('api_keys').where({ id: ownerKey.id }).first()).revoked_at).to.equal(null);

    await owner.agent.delete(`/api/keys/${memberKey.id}`).expect(204);
    expect((await testKnex()('api_keys').where({ id: memberKey.id }).first()).revoked_at).to.not.equal(null);
    await member.agent.delete(`/api/keys/${memberKey.id}`).expect(204);
  });
});

const SHOPIFY_FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-orders-create.json'), 'utf8'));
const WOO_FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'woocommerce-order.json'), 'utf8'));

type Shop = SignedIn & { workspaceId: string; storeId: string; secret: string };

async function storeShop(store: Record<string, unknown>): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  await openAllDay(s);
  const created = (await s.agent.post('/api/stores').send(store).expect(201)).body;
  return { ...s, workspaceId: s.workspaceId!, storeId: created.id, secret: created.secret ?? (store.secret as string) };
}

/** The exact bytes, with the signature they came with, under any topic header. */
function resend(s: Shop, raw: string, headers: Record<string, string>) {
  return request(appUrl())
    .post(`/hooks/stores/${s.storeId}`)
    .set({ 'Content-Type': 'application/json', ...headers })
    .send(raw);
}
const hmac = (secret: string, raw: string) => crypto.createHmac('sha256', secret).update(raw).digest('base64');
const storeOrder = (s: Shop) => testKnex()('orders').where({ store_connection_id: s.storeId }).first();
const operationsOf = (orderId: string) => testKnex()('operations').where({ order_id: orderId });

describe('a cancellation is taken from the signed body, not from the topic header (issue 37, item 5)', () => {
  it('Shopify: orders/create bytes resent as orders/cancelled → ignored_unchanged; the order stays pending and is still called; cancelled_at in the body cancels', async () => {
    const secret = 'shpss_replay';
    const s = await storeShop({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret });
    const raw = JSON.stringify({ ...SHOPIFY_FIXTURE, cancelled_at: null });
    const signature = hmac(secret, raw);
    const send = (topic: string) =>
      resend(s, raw, { 'X-Shopify-Topic': topic, 'X-Shopify-Webhook-Id': crypto.randomUUID(), 'X-Shopify-Hmac-Sha256': signature });
    expect((await send('orders/create').expect(200)).body.result).to.equal('created');
    expect((await send('orders/cancelled').expect(200)).body.result).to.equal('ignored_unchanged');
    const order = await storeOrder(s);
    expect(order.status).to.equal('pending');
    expect((await operationsOf(order.id)).map((op) => op.status)).to.deep.equal(['pending']);
    const events = await testKnex()('store_events').where({ connection_id: s.storeId }).orderBy('received_at');
    expect(events.map((e) => [e.topic, e.result])).to.deep.equal([
      ['orders/create', 'created'],
      ['orders/cancelled', 'ignored_unchanged'],
    ]);

    // A never-seen order under orders/cancelled with a body that does not cancel creates nothing.
    const other = JSON.stringify({ ...SHOPIFY_FIXTURE, id: 99887766, cancelled_at: null });
    const res = await resend(s, other, {
      'X-Shopify-Topic': 'orders/cancelled',
      'X-Shopify-Webhook-Id': crypto.randomUUID(),
      'X-Shopify-Hmac-Sha256': hmac(secret, other),
    });
    expect(res.body.result).to.equal('ignored_unchanged');
    expect(await testKnex()('orders').where({ store_connection_id: s.storeId })).to.have.length(1);

    const cancelled = JSON.stringify({ ...SHOPIFY_FIXTURE, cancelled_at: '2026-11-24T12:00:00+01:00' });
    const real = await resend(s, cancelled, {
      'X-Shopify-Topic': 'orders/cancelled',
      'X-Shopify-Webhook-Id': crypto.randomUUID(),
      'X-Shopify-Hmac-Sha256': hmac(secret, cancelled),
    });
    expect(real.body.result).to.equal('cancelled');
    expect((await storeOrder(s)).status).to.equal('unconfirmed');
  });

  it('WooCommerce: order.created bytes resent as order.deleted → ignored_unchanged; the real deletion ({"id": N}) still cancels; status cancelled cancels', async () => {
    const s = await storeShop({ kind: 'woocommerce', name: 'Boutique', shop: 'https://boutique.ma' });
    const raw = JSON.stringify(WOO_FIXTURE);
    const signature = hmac(s.secret, raw);
    const send = (topic: string) => resend(s, raw, { 'X-WC-Webhook-Topic': topic, 'X-WC-Webhook-Signature': signature });
    expect((await send('order.created').expect(200)).body.result).to.equal('created');
    expect((await send('order.deleted').expect(200)).body.result).to.equal('ignored_unchanged');
    const order = await storeOrder(s);
    expect(order.status).to.equal('pending');
    expect((await operationsOf(order.id)).map((op) => op.status)).to.deep.equal(['pending']);

    const deletion = JSON.stringify({ id: WOO_FIXTURE.id });
    const deleted = await resend(s, deletion, { 'X-WC-Webhook-Topic': 'order.deleted', 'X-WC-Webhook-Signature': hmac(s.secret, deletion) });
    expect(deleted.body.result).to.equal('cancelled');
    expect((await storeOrder(s)).status).to.equal('unconfirmed');

    const t = await storeShop({ kind: 'woocommerce', name: 'Boutique', shop: 'https://boutique.ma' });
    const created = JSON.stringify(WOO_FIXTURE);
    await resend(t, created, { 'X-WC-Webhook-Topic': 'order.created', 'X-WC-Webhook-Signature': hmac(t.secret, created) }).expect(200);
    const cancelled = JSON.stringify({ ...WOO_FIXTURE, status: 'cancelled', date_modified_gmt: '2030-01-01T00:00:00' });
    const res = await resend(t, cancelled, { 'X-WC-Webhook-Topic': 'order.updated', 'X-WC-Webhook-Signature': hmac(t.secret, cancelled) });
    expect(res.body.result).to.equal('cancelled');
  });
});

describe('the address guard and outbound paths (issue 37, item 7)', () => {
  it('refuses every IPv6 form that embeds a non-public IPv4 address; accepts those that embed a public one', async () => {
    const strict = { allowPrivateUrls: false, httpsOnly: true };
    for (const host of [
      '[::127.0.0.1]',
      '[::a9fe:a9fe]',
      '[::10.0.0.1]',
      '[::ffff:169.254.169.254]',
      '[::ffff:0:7f00:1]',
      '[64:ff9b::127.0.0.1]',
      '[64:ff9b::a9fe:a9fe]',
      '[64:ff9b:1::a00:1]',
      '[2002:7f00:1::]',
      '[2002:a9fe:a9fe::1]',
      '[2002:c0a8:101::]',
    ]) {
      const refused = await checkEndpointUrl(`https://${host}/x`, strict).catch((e) => e);
      expect(refused, host).to.be.instanceOf(UrlRefusedError);
    }
    for (const host of ['[64:ff9b::5db8:d822]', '[2002:5db8:d822::1]', '[2606:4700:4700::1111]']) {
      expect(await checkEndpointUrl(`https://${host}/x`, strict), host).to.match(/^https:\/\//);
    }
  });

  it('at connect time too: a name that resolves to an IPv4-mapped loopback is never called', async () => {
    const server = http.createServer((_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '::', resolve));
    const { port } = server.address() as AddressInfo;
    let hits = 0;
    server.on('request', () => {
      hits += 1;
    });
    const resolver = {
      lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
        options.all ? callback(null, [{ address: '::ffff:127.0.0.1', family: 6 }]) : callback(null, '::ffff:127.0.0.1', 6)) as never,
    };
    const sender = new SignedSender(false, 2000, resolver as never);
    try {
      const result = await sender.request({ method: 'POST', url: `http://mapped.example:${port}/x`, headers: {}, body: '{}' });
      expect(result.delivered).to.equal(false);
      expect(hits).to.equal(0);
    } finally {
      sender.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a WooCommerce shop URL with a user name or password → 400; nothing stored', async () => {
    const s = await signUp();
    for (const shop of ['https://user:password@boutique.ma', 'https://admin@boutique.ma']) {
      const res = await s.agent.post('/api/stores').send({ kind: 'woocommerce', name: 'B', shop }).expect(400);
      expect(res.body.fields).to.have.keys('shop');
    }
    const store = (await s.agent.post('/api/stores').send({ kind: 'woocommerce', name: 'B', shop: 'https://boutique.ma' }).expect(201)).body;
    await s.agent.put(`/api/stores/${store.id}`).send({ shop: 'https://u:p@boutique.ma' });
    expect((await testKnex()('store_connections').where({ workspace_id: s.workspaceId })).map((c) => c.shop)).to.deep.equal(['https://boutique.ma']);
  });

  it('a store order id of ".." never changes the write-back path: nothing is sent, the connection says why', async () => {
    const hits: string[] = [];
    const double = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => double.listen(0, '127.0.0.1', resolve));
    const shopUrl = `http://127.0.0.1:${(double.address() as AddressInfo).port}`;
    const services = createServices(testKnex(), loadConfig({ ...TEST_ENV }), new Jobs(testKnex()));
    const sender = new SignedSender(true);
    try {
      const s = await storeShop({ kind: 'woocommerce', name: 'B', shop: shopUrl, write_back: { consumer_key: 'ck_a', consumer_secret: 'cs_b' } });
      for (const id of ['..', '.', '%2e%2e']) {
        const raw = JSON.stringify({ ...WOO_FIXTURE, id });
        expect(
          (await resend(s, raw, { 'X-WC-Webhook-Topic': 'order.created', 'X-WC-Webhook-Signature': hmac(s.secret, raw) }).expect(200)).body.result,
        ).to.equal('created');
        const order = await testKnex()('orders').where({ store_connection_id: s.storeId, external_id: id }).first();
        await s.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed' }).expect(200);
        const result = await services.storeWriteBack.perform({ orderId: order.id, status: 'confirmed', attempt: 1 }, (r) => sender.request(r));
        if (id === '%2e%2e') {
          expect(result.result).to.equal('sent');
        } else {
          expect(result).to.deep.include({ result: 'failed' });
          expect((await testKnex()('store_connections').where({ id: s.storeId }).first()).write_back_error).to.match(/cannot be used in an address/);
        }
      }
      expect(hits).to.deep.equal(['/wp-json/wc/v3/orders/%252e%252e/notes']);
    } finally {
      sender.close();
      double.closeAllConnections();
      await new Promise<void>((resolve) => double.close(() => resolve()));
    }
  });
});
