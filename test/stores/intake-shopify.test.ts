import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp, unsetOrderHandler } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { waitFor } from '../helpers/loop';

/** Shopify's documented orders/create body, as a Moroccan COD shop receives it. */
const FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-orders-create.json'), 'utf8'));
const SECRET = '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';

type Shop = SignedIn & { workspaceId: string; storeId: string };

async function shop(options: { cod_only?: boolean; handler?: boolean } = {}): Promise<Shop> {
  const s = await signUp();
  if (options.handler !== false) await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  else await unsetOrderHandler(s);
  const store = (
    await s.agent
      .post('/api/stores')
      .send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: SECRET, cod_only: options.cod_only ?? true })
      .expect(201)
  ).body;
  return { ...s, workspaceId: s.workspaceId!, storeId: store.id };
}

interface Delivery {
  topic?: string;
  id?: string;
  secret?: string;
  signature?: string;
}

/** Signs the raw bytes as Shopify does: base64 HMAC-SHA256 with the shop's webhook key. */
function sign(raw: Buffer, secret = SECRET): string {
  return crypto.createHmac('sha256', secret).update(raw).digest('base64');
}

/**
 * Sends a delivery as Shopify does. JSON goes as its exact text; other bytes as they are (superagent
 * would re-encode a Buffer sent as application/json).
 */
function deliver(storeId: string, body: unknown, d: Delivery = {}) {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  const req = request(appUrl())
    .post(`/hooks/stores/${storeId}`)
    .set('X-Shopify-Topic', d.topic ?? 'orders/create')
    .set('X-Shopify-Webhook-Id', d.id ?? crypto.randomUUID())
    .set('X-Shopify-Hmac-Sha256', d.signature ?? sign(raw, d.secret));
  return Buffer.isBuffer(body) ? req.send(raw) : req.set('Content-Type', 'application/json').send(raw.toString('utf8'));
}

const ordersOf = (s: Shop) => testKnex()('orders').where({ workspace_id: s.workspaceId });
const eventsOf = (s: Shop) => testKnex()('store_events').where({ connection_id: s.storeId }).orderBy('received_at');
const operationsOf = (orderId: string) => testKnex()('operations').where({ order_id: orderId });

describe('store intake: Shopify', () => {
  it('a signed orders/create → 200 created: the order with every mapped field, its operation, and the event', async () => {
    const s = await shop();
    const id = crypto.randomUUID();
    const res = await deliver(s.storeId, FIXTURE, { id }).expect(200);
    expect(res.body).to.deep.equal({ ok: true, result: 'created' });
    const [order] = await ordersOf(s);
    expect(order).to.include({
      client_name: 'Amina Benali',
      // The shipping address's phone comes first.
      phone: '+212612345678',
      store_name: 'Atlas',
      products_name: '2 × Babouches - 40, 1 × Tajine',
      address: 'Rue 12, Maarif, Appartement 4, Casablanca',
      status: 'pending',
      source: 'shopify',
      store_connection_id: s.storeId,
      external_id: '5678901234',
      external_ref: '#1001',
      total_amount: 349,
      currency: 'MAD',
    });
    const [operation] = await operationsOf(order.id);
    expect(operation).to.include({ id: order.operation_id, status: 'pending', direction: 'outbound' });
    const api = (await s.agent.get(`/api/orders/${order.id}`).expect(200)).body;
    expect(api).to.include({ total_amount: '349.00', source: 'shopify', external_ref: '#1001' });
    const events = (await s.agent.get(`/api/stores/${s.storeId}/events`).expect(200)).body.events;
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ topic: 'orders/create', external_id: '5678901234', result: 'created', order_id: order.id, reason: null });
    const [listed] = (await s.agent.get('/api/stores').expect(200)).body.stores;
    expect(listed.last_event_at).to.equal(new Date((await eventsOf(s))[0].received_at).toISOString());
  });

  it('the same message again → duplicate; a second message for the same order → ignored_unchanged; nothing more is created', async () => {
    const s = await shop();
    const id = crypto.randomUUID();
    await deliver(s.storeId, FIXTURE, { id }).expect(200);
    expect((await deliver(s.storeId, FIXTURE, { id }).expect(200)).body).to.deep.equal({ ok: true, result: 'duplicate' });
    expect((await deliver(s.storeId, FIXTURE, { topic: 'orders/updated' }).expect(200)).body.result).to.equal('ignored_unchanged');
    const orders = await ordersOf(s);
    expect(orders).to.have.length(1);
    expect(await operationsOf(orders[0].id)).to.have.length(1);
    expect((await eventsOf(s)).map((e) => e.result)).to.deep.equal(['created', 'duplicate', 'ignored_unchanged']);
  });

  it('20 parallel deliveries of one order (retries of one message and other messages) → one order, one operation', async () => {
    const s = await shop();
    const retried = crypto.randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        deliver(s.storeId, FIXTURE, { id: i % 2 === 0 ? retried : crypto.randomUUID(), topic: i % 4 === 1 ? 'orders/updated' : 'orders/create' }),
      ),
    );
    expect(answers.map((a) => a.status)).to.deep.equal(Array(20).fill(200));
    const orders = await ordersOf(s);
    expect(orders).to.have.length(1);
    expect(await operationsOf(orders[0].id)).to.have.length(1);
    const results = (await eventsOf(s)).map((e) => e.result);
    expect(results.filter((r) => r === 'created')).to.have.length(1);
    expect(results.filter((r) => r === 'duplicate')).to.have.length(9);
    expect(results.filter((r) => r === 'ignored_unchanged')).to.have.length(10);
  });

  it('a new order is written in one go: order, operation, dispatch job, status count, order.created and the log row; when the order gives way to a parallel one, none of it stays', async () => {
    const s = await shop();
    await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201);
    const knex = testKnex();
    const written = async () => {
      const orders = await ordersOf(s);
      const operations = await knex('operations').whereIn(
        'order_id',
        orders.map((o) => o.id),
      );
      return {
        orders: orders.length,
        operations: operations.length,
        jobs: (
          await knex('pgboss.job')
            .where({ name: 'operation-due' })
            .whereRaw("data->>'operationId' = ANY(?)", [operations.map((o) => o.id)])
        ).length,
        pending: Number((await knex('order_status_counts').where({ workspace_id: s.workspaceId, status: 'pending' }).sum('n as n').first())?.n ?? 0),
        created: (await knex('webhook_messages').where({ workspace_id: s.workspaceId, event_type: 'order.created' })).length,
        events: (await eventsOf(s)).map((e) => [e.result, e.order_id]),
      };
    };
    expect((await deliver(s.storeId, FIXTURE).expect(200)).body.result).to.equal('created');
    const [order] = await ordersOf(s);
    expect(await written()).to.deep.equal({ orders: 1, operations: 1, jobs: 1, pending: 1, created: 1, events: [['created', order.id]] });

    // Another order of the store, committed by someone else between the statement's look and its
    // insert: our order gives way, the claim names an order that is not there, and the statement
    // fails whole; the message then finds the order and follows it.
    const other = { ...FIXTURE, id: 5678900001, name: '#1002' };
    const parallel = await knex.transaction();
    try {
      await parallel('orders').insert({
        ...Object.fromEntries(Object.entries(order).filter(([k]) => !['id', 'created_at', 'flags', 'operation_id', 'status', 'search_text'].includes(k))),
        external_id: '5678900001',
        external_ref: '#1002',
        client_name: 'Typed elsewhere',
        status: 'pending',
      });
      const answer = deliver(s.storeId, other).then((res) => res);
      await waitFor('the message waits on the parallel order', async () => {
        const { rows } = await knex.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        return rows[0].n >= 1;
      });
      await parallel.commit();
      const res = await answer;
      expect(res.status).to.equal(200);
      expect(res.body.result).to.equal('updated');
    } catch (err) {
      if (!parallel.isCompleted()) await parallel.rollback();
      throw err;
    }
    const theirs = await ordersOf(s).where({ external_id: '5678900001' }).first();
    expect(theirs.client_name).to.equal('Amina Benali');
    const after = await written();
    expect(after.orders).to.equal(2);
    // Only the first order has an operation and a job (the one inserted by hand has none), and one
    // order.created each: the failed statement left nothing behind.
    expect(after).to.deep.include({ operations: 1, jobs: 1, pending: 2, created: 2 });
    expect(after.events).to.deep.equal([
      ['created', order.id],
      ['updated', theirs.id],
    ]);
  });

  it('401 for a wrong, missing or other key’s signature, and nothing is recorded', async () => {
    const s = await shop();
    const raw = Buffer.from(JSON.stringify(FIXTURE));
    const tampered = Buffer.from(JSON.stringify({ ...FIXTURE, total_price: '1.00' }));
    for (const signature of [sign(raw, 'another key'), '', 'not base64!', sign(raw).slice(0, 20), sign(raw).toLowerCase()]) {
      expect((await deliver(s.storeId, raw, { signature }).expect(401)).body).to.deep.equal({ error: 'invalid_signature' });
    }
    await deliver(s.storeId, tampered, { signature: sign(raw) }).expect(401);
    await request(appUrl()).post(`/hooks/stores/${s.storeId}`).set('X-Shopify-Topic', 'orders/create').send(raw).expect(401);
    expect(await ordersOf(s)).to.deep.equal([]);
    expect(await eventsOf(s)).to.deep.equal([]);
    expect((await s.agent.get('/api/stores').expect(200)).body.stores[0].last_event_at).to.equal(null);
  });

  it('404 for an unknown, malformed, deleted or disabled connection', async () => {
    const s = await shop();
    await deliver(crypto.randomUUID(), FIXTURE).expect(404, { error: 'not_found' });
    await deliver('not-a-uuid', FIXTURE).expect(404, { error: 'not_found' });
    await s.agent.put(`/api/stores/${s.storeId}`).send({ enabled: false }).expect(200);
    await deliver(s.storeId, FIXTURE).expect(404);
    await s.agent.delete(`/api/stores/${s.storeId}`).expect(204);
    await deliver(s.storeId, FIXTURE).expect(404);
    expect(await ordersOf(s)).to.deep.equal([]);
  });

  it('400 for a signed body we cannot read (not JSON, no order id, no webhook id); 413 over 1 MB; nothing recorded', async () => {
    const s = await shop();
    await deliver(s.storeId, Buffer.from('id=5678901234')).expect(400, { error: 'unreadable_body' });
    await deliver(s.storeId, { ...FIXTURE, id: null }).expect(400);
    await deliver(s.storeId, [FIXTURE]).expect(400);
    const raw = Buffer.from(JSON.stringify(FIXTURE));
    await request(appUrl())
      .post(`/hooks/stores/${s.storeId}`)
      .set('X-Shopify-Topic', 'orders/create')
      .set('X-Shopify-Hmac-Sha256', sign(raw))
      .send(raw)
      .expect(400);
    const huge = Buffer.from(JSON.stringify({ ...FIXTURE, note: 'x'.repeat(1024 * 1024) }));
    expect((await deliver(s.storeId, huge).expect(413)).body.code).to.equal('PAYLOAD_TOO_LARGE');
    expect(await ordersOf(s)).to.deep.equal([]);
    expect(await eventsOf(s)).to.deep.equal([]);
  });

  it('other topics → 200 ignored, nothing recorded', async () => {
    const s = await shop();
    expect((await deliver(s.storeId, { id: 1 }, { topic: 'customers/create' }).expect(200)).body).to.deep.equal({ ok: true, result: 'ignored' });
    expect(await eventsOf(s)).to.deep.equal([]);
  });

  it('cod_only: an order paid online is ignored_paid; without cod_only it is created', async () => {
    const paid = { ...FIXTURE, financial_status: 'paid', payment_gateway_names: ['shopify_payments'] };
    const s = await shop();
    expect((await deliver(s.storeId, paid).expect(200)).body.result).to.equal('ignored_paid');
    expect(await ordersOf(s)).to.deep.equal([]);
    const all = await shop({ cod_only: false });
    expect((await deliver(all.storeId, paid).expect(200)).body.result).to.equal('created');
    // "COD" in any case counts as cash on delivery, even once Shopify marks it paid.
    const cod = await shop();
    expect((await deliver(cod.storeId, { ...paid, payment_gateway_names: ['cod'] }).expect(200)).body.result).to.equal('created');
  });

  it('a phone we cannot read as Moroccan, or no handler → 200 and a rejected event saying why; no order', async () => {
    const s = await shop();
    const foreign = { ...FIXTURE, shipping_address: { ...FIXTURE.shipping_address, phone: '+33 6 12 34 56 78' } };
    expect((await deliver(s.storeId, foreign).expect(200)).body.result).to.equal('rejected');
    const [event] = await eventsOf(s);
    expect(event).to.include({ result: 'rejected', external_id: '5678901234', order_id: null });
    expect(event.reason).to.match(/Moroccan phone/);
    expect(await ordersOf(s)).to.deep.equal([]);
    const lonely = await shop({ handler: false });
    expect((await deliver(lonely.storeId, FIXTURE).expect(200)).body.result).to.equal('rejected');
    expect((await eventsOf(lonely))[0].reason).to.equal('Set an agent as order handler before creating orders');
    const page = await s.agent.get(`/stores/${s.storeId}`).expect(200);
    expect(page.text).to.contain('Moroccan phone').and.contain('Create the order by hand');
  });

  it('orders/updated while pending changes the content; after a final status it does not', async () => {
    const s = await shop();
    await deliver(s.storeId, FIXTURE).expect(200);
    const changed = {
      ...FIXTURE,
      total_price: '378.00',
      current_total_price: '378.00',
      updated_at: '2026-11-24T10:30:00+01:00',
      shipping_address: { ...FIXTURE.shipping_address, address2: null, city: 'Rabat' },
      line_items: [{ ...FIXTURE.line_items[0], quantity: 3, current_quantity: 3 }],
    };
    expect((await deliver(s.storeId, changed, { topic: 'orders/updated' }).expect(200)).body.result).to.equal('updated');
    const [order] = await ordersOf(s);
    expect(order).to.include({ address: 'Rue 12, Maarif, Rabat', products_name: '3 × Babouches - 40', total_amount: 378, status: 'pending' });
    await s.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed' }).expect(200);
    const later = { ...changed, total_price: '10.00' };
    expect((await deliver(s.storeId, later, { topic: 'orders/updated' }).expect(200)).body.result).to.equal('ignored_unchanged');
    expect((await ordersOf(s))[0]).to.include({ total_amount: 378, status: 'confirmed' });
  });

  it('orders/cancelled cancels the open operation and makes the order unconfirmed; a confirmed order stays confirmed', async () => {
    const s = await shop();
    await deliver(s.storeId, FIXTURE).expect(200);
    const cancelled = { ...FIXTURE, cancelled_at: '2026-11-24T11:00:00+01:00', cancel_reason: 'customer' };
    expect((await deliver(s.storeId, cancelled, { topic: 'orders/cancelled' }).expect(200)).body.result).to.equal('cancelled');
    const [order] = await ordersOf(s);
    expect(order.status).to.equal('unconfirmed');
    expect((await operationsOf(order.id))[0].status).to.equal('cancelled');

    const kept = await shop();
    await deliver(kept.storeId, FIXTURE).expect(200);
    const [mine] = await ordersOf(kept);
    await kept.agent.put(`/api/orders/${mine.id}`).send({ status: 'confirmed' }).expect(200);
    expect((await deliver(kept.storeId, cancelled, { topic: 'orders/cancelled' }).expect(200)).body.result).to.equal('ignored_unchanged');
    expect((await ordersOf(kept))[0].status).to.equal('confirmed');
    expect((await eventsOf(kept))[1].reason).to.equal('Cancelled in the store, but already confirmed here: left as it is');
  });

  it('fuzz: random bodies and headers never answer 5xx and never create an order without a valid signature', async () => {
    const s = await shop();
    const headerNames = ['x-shopify-topic', 'x-shopify-hmac-sha256', 'x-shopify-webhook-id', 'content-type'];
    const pick = <T>(values: T[]) => values[crypto.randomInt(values.length)];
    for (let i = 0; i < 60; i += 1) {
      const body = pick([
        crypto.randomBytes(crypto.randomInt(200)),
        Buffer.from(JSON.stringify({ ...FIXTURE, id: crypto.randomInt(1e9) })),
        Buffer.from('{"id":'),
      ]);
      const req = request(appUrl()).post(`/hooks/stores/${s.storeId}`);
      for (const name of headerNames) {
        if (crypto.randomInt(3) > 0)
          req.set(name, pick(['orders/create', crypto.randomBytes(24).toString('base64'), 'application/json', sign(crypto.randomBytes(8)), '']));
      }
      const res = await req.send(body);
      expect(res.status, `${res.status} ${res.text}`).to.be.below(500);
    }
    expect(await ordersOf(s)).to.deep.equal([]);
  });
});
