import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { ROOT } from '../../config';
import { rotateSecrets, SECRET_COLUMNS, WRITE_BACK_SECRETS } from '../../db/secrets-at-rest';
import { Secrets } from '../../integrations/secrets';
import { newMessageId, signedHeaders, verifySignature } from '../../integrations/signing';
import type { RunningWorker } from '../../worker';
import type { SignedIn } from '../helpers/app';
import { signUp, testApp } from '../helpers/app';
import { TEST_SECRETS_KEY, testKnex } from '../helpers/db';
import { agentDouble, humanShop, openAllDay, voiceShop, waitFor, testWorker } from '../helpers/loop';
import { testSecrets } from '../helpers/secrets';
import { graphDouble, sign, whatsappAgent } from '../helpers/whatsapp';

/**
 * Issue 58, item 1 (SECURITY.md, "Third-party secrets are encrypted at rest"): one secret of each
 * kind made through the API, the tables dumped, none of their bytes found; then a rotation to a new
 * key, and everything still works with it: store messages verified, a WhatsApp send with the right
 * token, call.requested and a webhook delivery signed with their secrets, a WooCommerce write-back
 * with its keys, carrier and Meta webhooks verified.
 */
const WOO_ORDER = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'woocommerce-order.json'), 'utf8'));
const SHOPIFY_ORDER = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-orders-create.json'), 'utf8'));
const CUSTOM_ORDER = {
  client_name: 'Karim Tazi',
  phone: '07 12 34 56 78',
  products_name: '1 × Théière',
  address: 'Bd Zerktouni, Casablanca',
  total_amount: '450',
};
const ORDER = { clientName: 'Amina Benali', phone: '0612345678', storeName: 'Atlas Shop', productsName: 'Argan oil x2' };

const random = (prefix: string) => `${prefix}${crypto.randomBytes(18).toString('hex')}`;

interface Hit {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An HTTP double on 127.0.0.1 (a store's API, a webhook endpoint): records each request, answers 200 `{}`. */
async function double() {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id": 1}');
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

/** Every form a secret's bytes could be found in: as given, and for a `whsec_` key its bytes in base64, base64url and hex. */
function forms(secret: string): string[] {
  if (!secret.startsWith('whsec_')) return [secret];
  const bytes = Buffer.from(secret.slice(6), 'base64');
  return [secret, secret.slice(6), bytes.toString('base64url'), bytes.toString('hex')];
}

/** Every row of every table that holds a secret, as a dump would hold them. */
async function dump(): Promise<string> {
  const tables = await Promise.all(Object.keys(SECRET_COLUMNS).map((table) => testKnex().raw('SELECT * FROM ??', [table])));
  return JSON.stringify(tables.map((result) => result.rows));
}

/** Each sealed value of this workspace's rows, with the key id that sealed it. */
async function keyIdsOf(workspaceIds: string[]): Promise<string[]> {
  const ids: string[] = [];
  const take = (value: unknown) => {
    if (typeof value === 'string') ids.push(Secrets.isSealed(value) ? value.split(':')[1] : `plain:${value}`);
  };
  for (const [table, spec] of Object.entries(SECRET_COLUMNS)) {
    const rows =
      table === 'whatsapp_agents'
        ? await testKnex()('whatsapp_agents as w').join('agents as a', 'a.id', 'w.agent_id').whereIn('a.workspace_id', workspaceIds).select('w.*')
        : await testKnex()(table).whereIn('workspace_id', workspaceIds);
    for (const row of rows) {
      for (const column of spec.text) take(row[column]);
      for (const [column, fields] of Object.entries(spec.json ?? {})) for (const field of fields) take(row[column]?.[field]);
    }
  }
  return ids;
}

describe('third-party secrets encrypted at rest (issue 58)', () => {
  const NEW_KEY = Secrets.newKey();
  let storeApi: Awaited<ReturnType<typeof double>>;
  let endpoint: Awaited<ReturnType<typeof double>>;
  let voice: Awaited<ReturnType<typeof agentDouble>>;
  let graph: Awaited<ReturnType<typeof graphDouble>>;
  let worker: RunningWorker | undefined;
  let rotated = false;

  before(async () => {
    [storeApi, endpoint, voice, graph] = await Promise.all([double(), double(), agentDouble(), graphDouble()]);
  });
  after(async () => {
    await worker?.stop();
    // Back to the tests' key, for the files that run after this one.
    if (rotated) await rotateSecrets(testKnex(), new Secrets(TEST_SECRETS_KEY, [NEW_KEY]));
    await Promise.all([storeApi.close(), endpoint.close(), voice.close(), graph.close()]);
  });

  it('one secret of each kind, made through the API: a dump of the tables holds none of them; a rotation seals them all again, and everything still works', async function () {
    this.timeout(120_000);
    // Stores: each kind, with its signing key and write-back credentials.
    const stores = await humanShop();
    const wooSecret = random('woo_');
    const wooKeys = { consumer_key: random('ck_'), consumer_secret: random('cs_') };
    const shopifySecret = random('shpss_');
    const shopifyToken = random('shpat_');
    const youcanSecret = random('yc_');
    const custom = (await stores.agent.post('/api/stores').send({ kind: 'custom', name: 'Sheet' }).expect(201)).body;
    const woo = (
      await stores.agent
        .post('/api/stores')
        .send({ kind: 'woocommerce', name: 'Boutique', shop: storeApi.url, secret: wooSecret, write_back: { ...wooKeys, set_status: true } })
        .expect(201)
    ).body;
    const shopify = (
      await stores.agent
        .post('/api/stores')
        .send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: shopifySecret, write_back: { access_token: shopifyToken } })
        .expect(201)
    ).body;
    await stores.agent.post('/api/stores').send({ kind: 'youcan', name: 'You', secret: youcanSecret }).expect(201);
    // A voice agent, a webhook endpoint and a carrier connection.
    const calling = await voiceShop(voice.url);
    const hook = (await calling.agent.post('/api/webhooks').send({ url: endpoint.url }).expect(201)).body;
    const carrier = (await calling.agent.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201)).body;
    // A WhatsApp agent.
    const messaging = await signUp();
    const human = (await messaging.agent.post('/api/agents').send({ name: 'Salma' }).expect(201)).body;
    const accessToken = `EAAG${random('')}`;
    const appSecret = random('');
    // A number of its own: the worker may be sending other files' messages to the same double.
    const phoneNumberId = String(200_000_000_000_000 + crypto.randomInt(1_000_000_000));
    const whatsapp = (
      await messaging.agent
        .post('/api/agents')
        .send({ ...whatsappAgent(human.id), phoneNumberId, accessToken, appSecret })
        .expect(201)
    ).body;
    await openAllDay(messaging);

    const secrets = [
      custom.secret,
      wooSecret,
      ...Object.values(wooKeys),
      shopifySecret,
      shopifyToken,
      youcanSecret,
      calling.secret,
      hook.secret,
      carrier.secret,
      accessToken,
      appSecret,
      whatsapp.verify_token,
    ];
    for (const secret of secrets) expect(secret).to.be.a('string').with.length.above(15);
    const dumped = await dump();
    for (const secret of secrets) for (const form of forms(secret)) expect(dumped, 'a secret in the dump').not.to.contain(form);
    const workspaces = [stores.workspaceId!, calling.workspaceId!, messaging.workspaceId!];
    const before = await keyIdsOf(workspaces);
    expect(before).to.have.length(13);
    expect(new Set(before)).to.deep.equal(new Set([testSecrets.keyId]));

    // The rotation: the new key seals, the old one is still read.
    const next = new Secrets(NEW_KEY, [TEST_SECRETS_KEY]);
    rotated = true;
    const counts = await rotateSecrets(testKnex(), next, { batchSize: 7 });
    expect(counts.store_connections.resealed).to.be.at.least(4);
    expect(new Set(await keyIdsOf(workspaces))).to.deep.equal(new Set([next.keyId]));
    for (const count of Object.values(await rotateSecrets(testKnex(), next))) expect(count).to.include({ resealed: 0, changedMeanwhile: 0 });
    const redumped = await dump();
    for (const secret of secrets) for (const form of forms(secret)) expect(redumped, 'a secret in the dump').not.to.contain(form);

    // Everything still works, with the new key only sealing.
    const env = { SECRETS_KEY: NEW_KEY, SECRETS_OLD_KEYS: TEST_SECRETS_KEY, WHATSAPP_API_ORIGIN: graph.origin, WRITE_BACK_RETRY_SECONDS: '0.2' };
    const app: Express = testApp(env);
    worker = await testWorker(env);
    const api = (s: SignedIn, method: 'get' | 'post' | 'put', url: string) => request(app)[method](url).set('Cookie', s.cookie);

    // Store messages verified with each store's key.
    const customRaw = JSON.stringify({ type: 'order.created', data: { ...CUSTOM_ORDER, external_id: random('row-') } });
    const customAnswer = await request(app)
      .post(`/hooks/stores/${custom.id}`)
      .set(signedHeaders(custom.secret, newMessageId(), customRaw))
      .set('Content-Type', 'application/json')
      .send(customRaw)
      .expect(200);
    expect(customAnswer.body.result).to.equal('created');
    const shopifyRaw = JSON.stringify({ ...SHOPIFY_ORDER, id: 6_100_000_000 + crypto.randomInt(1_000_000) });
    await request(app)
      .post(`/hooks/stores/${shopify.id}`)
      .set({
        'Content-Type': 'application/json',
        'X-Shopify-Topic': 'orders/create',
        'X-Shopify-Webhook-Id': crypto.randomUUID(),
        'X-Shopify-Hmac-Sha256': crypto.createHmac('sha256', shopifySecret).update(shopifyRaw).digest('base64'),
      })
      .send(shopifyRaw)
      .expect(200);
    // WooCommerce: its message verified, then the outcome written back with its keys.
    const wooId = String(20_000 + crypto.randomInt(1_000_000));
    const wooRaw = JSON.stringify({ ...WOO_ORDER, id: Number(wooId), number: wooId, status: 'on-hold' });
    const wooAnswer = await request(app)
      .post(`/hooks/stores/${woo.id}`)
      .set({
        'Content-Type': 'application/json',
        'X-WC-Webhook-Topic': 'order.created',
        'X-WC-Webhook-Delivery-ID': crypto.randomUUID(),
        'X-WC-Webhook-Signature': crypto.createHmac('sha256', wooSecret).update(wooRaw).digest('base64'),
      })
      .send(wooRaw)
      .expect(200);
    expect(wooAnswer.body.result).to.equal('created');
    const wooOrder = await testKnex()('orders').where({ store_connection_id: woo.id, external_id: wooId }).first('id');
    await api(stores, 'put', `/api/orders/${wooOrder.id}`).send({ status: 'confirmed' }).expect(200);
    const written = await waitFor('the WooCommerce write-back', async () => storeApi.hits.find((hit) => hit.path.includes(`/orders/${wooId}`)));
    expect(written.headers.authorization).to.equal(`Basic ${Buffer.from(`${wooKeys.consumer_key}:${wooKeys.consumer_secret}`).toString('base64')}`);

    // The voice agent's call.requested, signed with its secret.
    await api(calling, 'post', '/api/orders').send(ORDER).expect(201);
    const requested = await waitFor('call.requested', async () => voice.received.find((r) => r.json.type === 'call.requested'));
    expect(verifySignature(calling.secret, Buffer.from(requested.body), requested.headers)).to.equal(true);

    // A webhook delivery, signed with the endpoint's secret.
    await api(calling, 'post', `/api/webhooks/${hook.id}/test`).expect(202);
    const delivered = await waitFor('the webhook.test delivery', async () => endpoint.hits.find((hit) => hit.body.includes('webhook.test')));
    expect(verifySignature(hook.secret, Buffer.from(delivered.body), delivered.headers)).to.equal(true);

    // The carrier's messages, verified with its secret.
    const carrierRaw = Buffer.from(JSON.stringify({ type: 'delivery.updated', data: { tracking_number: random('OZ-'), status: 'delivered' } }));
    await request(app)
      .post(`/hooks/carriers/${carrier.id}`)
      .set(signedHeaders(carrier.secret, `msg_${crypto.randomUUID()}`, carrierRaw))
      .set('Content-Type', 'application/json')
      .send(carrierRaw.toString('utf8'))
      .expect(200);

    // WhatsApp: the send carries the access token; Meta's webhook is verified with the app secret and the verify token.
    await api(messaging, 'post', '/api/orders').send(ORDER).expect(201);
    const sent = await waitFor('the WhatsApp send', async () => graph.received.find((r) => r.path.includes(`/${phoneNumberId}/messages`)));
    expect(sent.headers.authorization).to.equal(`Bearer ${accessToken}`);
    const challenge = { 'hub.mode': 'subscribe', 'hub.verify_token': whatsapp.verify_token, 'hub.challenge': '1158201444' };
    expect((await request(app).get(`/hooks/whatsapp/${whatsapp.id}`).query(challenge).expect(200)).text).to.equal('1158201444');
    const meta = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    await request(app)
      .post(`/hooks/whatsapp/${whatsapp.id}`)
      .set('X-Hub-Signature-256', sign(meta, appSecret))
      .set('Content-Type', 'application/json')
      .send(meta)
      .expect(200);
    await request(app)
      .post(`/hooks/whatsapp/${whatsapp.id}`)
      .set('X-Hub-Signature-256', sign(meta))
      .set('Content-Type', 'application/json')
      .send(meta)
      .expect(401);

    // What the owner reads back is the secret in clear.
    expect((await api(calling, 'get', `/webhooks/${hook.id}`).expect(200)).text).to.contain(hook.secret);
  });

  it('the migration seals the plain values stored before it, each opening to what it was; sealed values stay as they are', async () => {
    const s = await voiceShop('http://127.0.0.1:9/calls', 0);
    const endpointId = (await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hook' }).expect(201)).body.id;
    const carrierId = (await s.agent.post('/api/carriers').send({ kind: 'custom', name: 'Amana' }).expect(201)).body.id;
    const human = (await s.agent.post('/api/agents').send({ name: 'Salma' }).expect(201)).body;
    const whatsappId = (
      await s.agent
        .post('/api/agents')
        .send({ ...whatsappAgent(human.id), orderHandler: false })
        .expect(201)
    ).body.id;
    const storeId = (
      await s.agent
        .post('/api/stores')
        .send({
          kind: 'woocommerce',
          name: 'Boutique',
          shop: 'https://boutique.ma',
          secret: 'sealed-already',
          write_back: { consumer_key: 'ck_x', consumer_secret: 'cs_x' },
        })
        .expect(201)
    ).body.id;
    const sealedBefore = (await testKnex()('store_connections').where({ id: storeId }).first('secret')).secret;
    // As a row of before: every secret in clear (Shopify's legacy token too).
    const plain = {
      agent: random('whsec_'),
      endpoint: random('whsec_'),
      carrier: random('whsec_'),
      whatsapp: { access_token: random('EAAG'), app_secret: random(''), verify_token: random('') },
      writeBack: { consumer_key: random('ck_'), consumer_secret: random('cs_'), set_status: true },
    };
    await testKnex()('agents').where({ id: s.handlerId }).update({ secret: plain.agent });
    await testKnex()('webhook_endpoints').where({ id: endpointId }).update({ secret: plain.endpoint });
    await testKnex()('carrier_connections').where({ id: carrierId }).update({ secret: plain.carrier });
    await testKnex()('whatsapp_agents').where({ agent_id: whatsappId }).update(plain.whatsapp);
    await testKnex()('store_connections')
      .where({ id: storeId })
      .update({ write_back: JSON.stringify(plain.writeBack) });

    const migration = await import(path.join(ROOT, 'dist', 'db', 'migrations', '20261130_58_01_secrets_at_rest.js'));
    await migration.up(testKnex().withUserParams({ secretsKey: TEST_SECRETS_KEY }));

    const rows = {
      agent: await testKnex()('agents').where({ id: s.handlerId }).first('secret'),
      endpoint: await testKnex()('webhook_endpoints').where({ id: endpointId }).first('secret'),
      carrier: await testKnex()('carrier_connections').where({ id: carrierId }).first('secret'),
      whatsapp: await testKnex()('whatsapp_agents').where({ agent_id: whatsappId }).first('access_token', 'app_secret', 'verify_token'),
      store: await testKnex()('store_connections').where({ id: storeId }).first('secret', 'write_back'),
    };
    for (const value of [rows.agent.secret, rows.endpoint.secret, rows.carrier.secret, ...Object.values(rows.whatsapp), rows.store.write_back.consumer_key])
      expect(value).to.match(new RegExp(`^v1:${testSecrets.keyId}:`));
    expect(testSecrets.open(rows.agent.secret)).to.equal(plain.agent);
    expect(testSecrets.open(rows.endpoint.secret)).to.equal(plain.endpoint);
    expect(testSecrets.open(rows.carrier.secret)).to.equal(plain.carrier);
    expect(testSecrets.openFields(rows.whatsapp, SECRET_COLUMNS.whatsapp_agents.text)).to.deep.equal(plain.whatsapp);
    expect(testSecrets.openFields(rows.store.write_back, WRITE_BACK_SECRETS)).to.deep.equal(plain.writeBack);
    expect(rows.store.secret, 'sealed before: left as it was').to.equal(sealedBefore);
    // The service reads them as before: the owner's page shows the endpoint's secret.
    expect((await s.agent.get(`/webhooks/${endpointId}`).expect(200)).text).to.contain(plain.endpoint);
  });
});
