import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import { createServices } from '../../services';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey } from '../helpers/keys';
import { agentDouble, callsOf, createOrder, humanShop, voiceShop } from '../helpers/loop';

/**
 * Issue 37, item 1: no byte sequence a signed sender or a signed-in user can send reaches Postgres
 * as text it refuses. NUL and unpaired surrogates, at any depth, and bodies nested too deep, are
 * answered by kind of input, never with a 500.
 */
const NUL = '\u0000';
const LONE = '\ud800';

/** A JSON value nested `depth` levels deep around `inner`. */
function nested(depth: number, inner: unknown): unknown {
  let value = inner;
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
}

const ORDER = { clientName: 'Amina', phone: '0612345678', storeName: 'Atlas', productsName: 'Tajine' };
const ordersOf = (workspaceId: string) => testKnex()('orders').where({ workspace_id: workspaceId });

describe('NUL, unpaired surrogates and deep nesting: JSON API bodies → 400 naming the field', () => {
  it('POST /api/orders, PUT /api/stores/:id write_back, the Data API, a query string: 400 naming the field; nothing written', async () => {
    const s = await humanShop();
    for (const [body, field] of [
      [{ ...ORDER, clientName: `A${NUL}` }, 'clientName'],
      [{ ...ORDER, productsName: `Tajine ${LONE}` }, 'productsName'],
      [{ ...ORDER, extra: { deep: [1, { x: `y${NUL}` }] } }, 'extra.deep.1.x'],
      [{ ...ORDER, [`k${NUL}`]: 1 }, `k${NUL}`],
    ] as const) {
      const res = await s.agent.post('/api/orders').send(body).expect(400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
      expect(Object.keys(res.body.fields)).to.deep.equal([field]);
    }
    // Refused from its bytes, before it is parsed (a megabyte of `[[[[` takes JSON.parse most of a second).
    const deep = await s.agent
      .post('/api/orders')
      .send({ ...ORDER, extra: nested(500, 'x') })
      .expect(400);
    expect(deep.body.fields).to.deep.equal({ body: 'Must not nest more than 64 levels deep' });
    const shallow = await s.agent
      .post('/api/orders')
      .send({ ...ORDER, clientName: '[['.repeat(50), extra: nested(60, 'x') })
      .expect(201);
    await testKnex()('orders').where({ id: shallow.body.id }).del();
    expect(await ordersOf(s.workspaceId!)).to.have.length(0);

    const store = (await s.agent.post('/api/stores').send({ kind: 'woocommerce', name: 'B', shop: 'https://boutique.ma' }).expect(201)).body;
    const put = await s.agent
      .put(`/api/stores/${store.id}`)
      .send({ write_back: { consumer_key: 'ck_x', consumer_secret: `cs_SECRET${NUL}` } })
      .expect(400);
    expect(put.body.fields).to.have.keys('write_back.consumer_secret');
    expect((await testKnex()('store_connections').where({ id: store.id }).first()).write_back).to.equal(null);

    const { key } = await createKey(s);
    const token = (await request(appUrl()).post('/api/v1/token').set('Authorization', `Bearer ${key}`).expect(200)).body;
    const data = await request(appUrl())
      .post('/data/v1/orders')
      .set('apikey', token.publishable_key)
      .set('Authorization', `Bearer ${token.access_token}`)
      .send({ ...ORDER, address: `Rue ${NUL}` })
      .expect(400);
    expect(data.body.fields).to.have.keys('address');

    const query = await s.agent.get(`/api/orders?q=${encodeURIComponent(`A${NUL}`)}`).expect(400);
    expect(query.body.fields).to.have.keys('q');
    expect(await ordersOf(s.workspaceId!)).to.have.length(0);
  });
});

type Shop = SignedIn & { workspaceId: string; storeId: string; secret: string };

type Kind = 'shopify' | 'woocommerce' | 'youcan' | 'custom';

async function storeShop(kind: Kind): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  const secret = kind === 'custom' ? undefined : `secret-${crypto.randomUUID()}`;
  const shopField = kind === 'shopify' ? 'atlas.myshopify.com' : kind === 'woocommerce' ? 'https://boutique.ma' : undefined;
  const store = (
    await s.agent
      .post('/api/stores')
      .send({ kind, name: 'Atlas', ...(shopField ? { shop: shopField } : {}), ...(secret ? { secret } : {}) })
      .expect(201)
  ).body;
  return { ...s, workspaceId: s.workspaceId!, storeId: store.id, secret: secret ?? store.secret };
}

/** Sends the exact JSON text, signed as each kind signs. */
function deliver(kind: Kind, s: Shop, text: string, topic?: string) {
  const raw = Buffer.from(text);
  const hmac = (encoding: 'base64' | 'hex') => crypto.createHmac('sha256', s.secret).update(raw).digest(encoding);
  const req = request(appUrl()).post(`/hooks/stores/${s.storeId}`).set('Content-Type', 'application/json');
  if (kind === 'shopify') {
    req.set({ 'X-Shopify-Topic': topic ?? 'orders/create', 'X-Shopify-Webhook-Id': crypto.randomUUID(), 'X-Shopify-Hmac-Sha256': hmac('base64') });
  } else if (kind === 'woocommerce') {
    req.set({ 'X-WC-Webhook-Topic': topic ?? 'order.created', 'X-WC-Webhook-Signature': hmac('base64') });
  } else if (kind === 'youcan') {
    req.set({ 'x-youcan-signature': hmac('hex') });
  } else {
    req.set(signedHeaders(s.secret, newMessageId(), text));
  }
  return req.send(text);
}

const SHOPIFY_ORDER = {
  id: 5678901234,
  name: '#1001',
  financial_status: 'pending',
  shipping_address: { first_name: 'Amina', last_name: 'Benali', phone: '0612345678', city: 'Casablanca' },
  line_items: [{ quantity: 1, name: 'Tajine' }],
  total_price: '349.00',
  currency: 'MAD',
};
const WOO_ORDER = {
  id: 727,
  number: '727',
  status: 'processing',
  date_modified_gmt: '2026-11-24T10:00:00',
  payment_method: 'cod',
  shipping: { first_name: 'Youssef', last_name: 'Alaoui', phone: '0712345678', city: 'Fès' },
  line_items: [{ quantity: 2, name: 'Savon noir' }],
  total: '430.00',
  currency: 'MAD',
};
const YOUCAN_ORDER = {
  id: 'yc-1',
  ref: 'R1',
  customer: { first_name: 'Sara', last_name: 'B', phone: '0612345678' },
  variants: [{ quantity: 1, name: 'Huile' }],
};
const CUSTOM_ORDER = { external_id: 'c-1', client_name: 'Nadia', phone: '0612345678', products_name: 'Tajine' };

describe('NUL and unpaired surrogates in a signed store message → 200 and a rejected event (after the signature)', () => {
  const cases: Array<{ kind: Kind; label: string; text: string; topic?: string }> = [
    { kind: 'shopify', label: 'orders/create {"id":"\\u0000"}', text: '{"id":"\\u0000"}' },
    { kind: 'shopify', label: 'a NUL in a line item', text: JSON.stringify({ ...SHOPIFY_ORDER, line_items: [{ quantity: 1, name: `Taj${NUL}ine` }] }) },
    { kind: 'shopify', label: 'an unpaired surrogate deep in the customer', text: JSON.stringify({ ...SHOPIFY_ORDER, customer: { note: { x: LONE } } }) },
    { kind: 'woocommerce', label: 'order.deleted {"id":"\\u0000"}', text: '{"id":"\\u0000"}', topic: 'order.deleted' },
    { kind: 'woocommerce', label: 'a NUL in date_modified_gmt', text: JSON.stringify({ ...WOO_ORDER, date_modified_gmt: `2026${NUL}` }) },
    { kind: 'youcan', label: 'order.create {"id":"\\u0000"}', text: '{"id":"\\u0000"}' },
    {
      kind: 'youcan',
      label: 'a NUL in the customer’s name',
      text: JSON.stringify({ ...YOUCAN_ORDER, customer: { ...YOUCAN_ORDER.customer, first_name: `S${NUL}` } }),
    },
    { kind: 'custom', label: 'order.created with a NUL id', text: JSON.stringify({ type: 'order.created', data: { ...CUSTOM_ORDER, external_id: NUL } }) },
    { kind: 'custom', label: 'order.cancelled with a NUL id', text: JSON.stringify({ type: 'order.cancelled', data: { external_id: `x${NUL}` } }) },
  ];
  for (const c of cases) {
    it(`${c.kind}: ${c.label}`, async () => {
      const s = await storeShop(c.kind);
      const res = await deliver(c.kind, s, c.text, c.topic).expect(200);
      expect(res.body).to.deep.equal({ ok: true, result: 'rejected' });
      const events = await testKnex()('store_events').where({ connection_id: s.storeId });
      expect(events).to.have.length(1);
      expect(events[0]).to.include({ result: 'rejected', order_id: null, external_id: null });
      expect(events[0].reason).to.match(/NUL characters or unpaired surrogates/);
      expect(await ordersOf(s.workspaceId)).to.have.length(0);
    });
  }

  it('a signed body nested deeper than 64 levels is unreadable: 400 before it is parsed, nothing recorded', async () => {
    const s = await storeShop('shopify');
    const deep = JSON.stringify({ ...SHOPIFY_ORDER, note_attributes: nested(200, 1) });
    expect((await deliver('shopify', s, deep, 'orders/updated').expect(400)).body).to.deep.equal({ error: 'unreadable_body' });
    const megabyte = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
    expect((await deliver('shopify', s, megabyte).expect(400)).body).to.deep.equal({ error: 'unreadable_body' });
    expect(await testKnex()('store_events').where({ connection_id: s.storeId })).to.have.length(0);
    expect(await ordersOf(s.workspaceId)).to.have.length(0);
  });

  it('the same bytes with a wrong signature: 401 and nothing recorded (the signature is checked first)', async () => {
    const s = await storeShop('shopify');
    await request(appUrl())
      .post(`/hooks/stores/${s.storeId}`)
      .set({ 'Content-Type': 'application/json', 'X-Shopify-Topic': 'orders/create', 'X-Shopify-Webhook-Id': 'w1', 'X-Shopify-Hmac-Sha256': 'AAAA' })
      .send('{"id":"\\u0000"}')
      .expect(401);
    expect(await testKnex()('store_events').where({ connection_id: s.storeId })).to.have.length(0);
  });
});

describe('NUL in a voice agent’s report → 400 after the signature', () => {
  it('call.ended with a NUL in its summary or deep in data: 400 naming the field; the call stays open; unsigned: 401', async () => {
    const services = createServices(testKnex(), loadConfig({ ...TEST_ENV }), new Jobs(testKnex()));
    const agent = await agentDouble();
    try {
      const shop = await voiceShop(agent.url, 10);
      const order = await createOrder(shop, ORDER);
      expect(await services.calls.dispatch(order.operation_id!)).to.equal('dispatched');
      const [call] = await callsOf(order.operation_id!);
      const post = (payload: object, secret = shop.secret) => {
        const body = JSON.stringify(payload);
        return request(appUrl())
          .post(`/hooks/calls/${call.id}`)
          .set(signedHeaders(secret, newMessageId(), body))
          .set('Content-Type', 'application/json')
          .send(body);
      };
      const ended = { type: 'call.ended', data: { call_id: call.id, outcome: 'confirmed', duration_seconds: 3 } };
      const bad = await post({ ...ended, data: { ...ended.data, summary: `ok${NUL}` } }).expect(400);
      expect(bad.body.fields).to.have.keys('data.summary');
      const deep = await post({ ...ended, meta: { a: [LONE] } }).expect(400);
      expect(deep.body.fields).to.have.keys('meta.a.0');
      await post({ ...ended, data: { ...ended.data, summary: `ok${NUL}` } }, `whsec_${Buffer.alloc(32, 9).toString('base64')}`).expect(401);
      const [after] = await callsOf(order.operation_id!);
      expect(after.ended_at).to.equal(null);
      expect(await testKnex()('call_reports').where({ call_id: call.id })).to.have.length(0);
    } finally {
      await agent.close();
    }
  });
});

describe('NUL in an import row → the row is skipped and listed, as a bad phone is', () => {
  it('POST /api/orders/import: the good rows imported, the NUL row listed by line and field', async () => {
    const s = await humanShop();
    const file = `name,phone,store,product\nA,0612345678,S,P\nB${NUL},0612345679,S,P\nC,06,S,P\nD,0612345670,S,P${LONE}x\n`;
    const res = await s.agent.post('/api/orders/import').set('Content-Type', 'text/csv').send(file).expect(200);
    expect(res.body.imported).to.equal(2);
    expect(res.body.skipped).to.equal(2);
    expect(res.body.errors.map((e: { line: number; fields: object }) => [e.line, Object.keys(e.fields)])).to.deep.equal([
      [3, ['clientName']],
      [4, ['phone']],
    ]);
    expect((await ordersOf(s.workspaceId!)).map((o) => o.client_name).sort()).to.deep.equal(['A', 'D']);
  });

  it('a NUL in the header is binary data: 400, nothing written', async () => {
    const s = await humanShop();
    const res = await s.agent.post('/api/orders/import').set('Content-Type', 'text/csv').send(`na${NUL}me,phone,store,product\nA,0612345678,S,P\n`).expect(400);
    expect(res.body.fields.file).to.match(/binary/);
    expect(await ordersOf(s.workspaceId!)).to.have.length(0);
  });
});
