import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/** WooCommerce's order JSON (REST API v3), as its order webhooks send it. */
const FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'woocommerce-order.json'), 'utf8'));

type Shop = SignedIn & { workspaceId: string; storeId: string; secret: string };

/** A shop whose WooCommerce connection was added without a secret: it signs with the key we made. */
async function shop(): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  const store = (await s.agent.post('/api/stores').send({ kind: 'woocommerce', name: 'Boutique', shop: 'https://boutique.ma' }).expect(201)).body;
  return { ...s, workspaceId: s.workspaceId!, storeId: store.id, secret: store.secret };
}

function sign(raw: Buffer, secret: string): string {
  return crypto.createHmac('sha256', secret).update(raw).digest('base64');
}

/** Sends as WooCommerce does: JSON as its exact text, with a new delivery id every time. */
function deliver(s: Shop, body: unknown, options: { topic?: string; signature?: string } = {}) {
  const raw = Buffer.from(JSON.stringify(body));
  return request(appUrl())
    .post(`/hooks/stores/${s.storeId}`)
    .set('Content-Type', 'application/json')
    .set('X-WC-Webhook-Topic', options.topic ?? 'order.created')
    .set('X-WC-Webhook-Delivery-ID', crypto.randomUUID())
    .set('X-WC-Webhook-Signature', options.signature ?? sign(raw, s.secret))
    .send(raw.toString('utf8'));
}

const ordersOf = (s: Shop) => testKnex()('orders').where({ workspace_id: s.workspaceId });
const eventsOf = (s: Shop) => testKnex()('store_events').where({ connection_id: s.storeId }).orderBy('received_at');

describe('store intake: WooCommerce', () => {
  it('a signed order.created → the order with every mapped field; the same order again → duplicate; a later change of nothing we keep → ignored_unchanged', async () => {
    const s = await shop();
    expect((await deliver(s, FIXTURE).expect(200)).body).to.deep.equal({ ok: true, result: 'created' });
    const [order] = await ordersOf(s);
    expect(order).to.include({
      client_name: 'Youssef Alaoui',
      phone: '+212712345678',
      store_name: 'Boutique',
      products_name: "2 × Huile d'argan 250 ml, 1 × Savon noir",
      address: '12 Avenue Hassan II, Résidence Atlas, Fès',
      status: 'pending',
      source: 'woocommerce',
      store_connection_id: s.storeId,
      external_id: '727',
      external_ref: '727',
      total_amount: 430,
      currency: 'MAD',
    });
    // WooCommerce may send order.created then order.updated for one checkout: same id and date_modified.
    expect((await deliver(s, FIXTURE, { topic: 'order.updated' }).expect(200)).body.result).to.equal('duplicate');
    const later = { ...FIXTURE, date_modified: '2026-11-24T10:25:00', date_modified_gmt: '2026-11-24T09:25:00', customer_ip_address: '105.66.131.13' };
    expect((await deliver(s, later, { topic: 'order.updated' }).expect(200)).body.result).to.equal('ignored_unchanged');
    expect(await ordersOf(s)).to.have.length(1);
    expect((await eventsOf(s)).map((e) => e.result)).to.deep.equal(['created', 'duplicate', 'ignored_unchanged']);
  });

  it('20 parallel deliveries of one order → one order', async () => {
    const s = await shop();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => deliver(s, FIXTURE, { topic: i % 2 ? 'order.updated' : 'order.created' })));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(20).fill(200));
    expect(await ordersOf(s)).to.have.length(1);
    expect((await eventsOf(s)).filter((e) => e.result === 'created')).to.have.length(1);
  });

  it('the activation ping (unsigned webhook_id=N) → 200 and nothing recorded; a wrong signature → 401; unreadable → 400; unknown → 404', async () => {
    const s = await shop();
    const ping = await request(appUrl()).post(`/hooks/stores/${s.storeId}`).type('form').send('webhook_id=12').expect(200);
    expect(ping.body).to.deep.equal({ ok: true, result: 'ignored' });
    await deliver(s, FIXTURE, { signature: sign(Buffer.from(JSON.stringify(FIXTURE)), 'not the key') }).expect(401, { error: 'invalid_signature' });
    await deliver(s, { ...FIXTURE, date_modified: null, date_modified_gmt: null }).expect(400, { error: 'unreadable_body' });
    await request(appUrl()).post(`/hooks/stores/${crypto.randomUUID()}`).type('form').send('webhook_id=12').expect(404);
    expect(await ordersOf(s)).to.deep.equal([]);
    expect(await eventsOf(s)).to.deep.equal([]);
  });

  it('cod_only ignores an order paid online; a non-Moroccan phone is rejected with the reason; both answered 200', async () => {
    const s = await shop();
    expect((await deliver(s, { ...FIXTURE, payment_method: 'stripe' }).expect(200)).body.result).to.equal('ignored_paid');
    const foreign = { ...FIXTURE, id: 728, shipping: { ...FIXTURE.shipping, phone: '' }, billing: { ...FIXTURE.billing, phone: '+1 212 555 0100' } };
    expect((await deliver(s, foreign).expect(200)).body.result).to.equal('rejected');
    expect(await ordersOf(s)).to.deep.equal([]);
    const events = await eventsOf(s);
    expect(events.map((e) => e.result)).to.deep.equal(['ignored_paid', 'rejected']);
    expect(events[1].reason).to.match(/Moroccan phone/);
  });

  it('an update while pending changes the content; status cancelled upstream, or order.deleted, cancels the order', async () => {
    const s = await shop();
    await deliver(s, FIXTURE).expect(200);
    const changed = { ...FIXTURE, date_modified_gmt: '2026-11-24T09:30:00', total: '460.00', line_items: [{ ...FIXTURE.line_items[0], quantity: 3 }] };
    expect((await deliver(s, changed, { topic: 'order.updated' }).expect(200)).body.result).to.equal('updated');
    const [order] = await ordersOf(s);
    expect(order).to.include({ total_amount: 460, products_name: "3 × Huile d'argan 250 ml" });
    const cancelled = { ...changed, status: 'cancelled', date_modified_gmt: '2026-11-24T09:40:00' };
    expect((await deliver(s, cancelled, { topic: 'order.updated' }).expect(200)).body.result).to.equal('cancelled');
    expect((await ordersOf(s))[0].status).to.equal('unconfirmed');
    expect((await testKnex()('operations').where({ order_id: order.id }).first()).status).to.equal('cancelled');

    await deliver(s, { ...FIXTURE, id: 900 }).expect(200);
    expect((await deliver(s, { id: 900 }, { topic: 'order.deleted' }).expect(200)).body.result).to.equal('cancelled');
    expect(await ordersOf(s).where({ external_id: '900' }).first()).to.include({ status: 'unconfirmed' });
  });
});
