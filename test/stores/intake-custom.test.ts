import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

type Shop = SignedIn & { workspaceId: string; storeId: string; secret: string };

const ORDER = {
  external_id: 'row-17',
  external_ref: 'Ligne 17',
  client_name: 'Karim Tazi',
  phone: '07 12 34 56 78',
  products_name: '1 × Théière en argent',
  address: 'Bd Zerktouni, Casablanca',
  total_amount: '450',
};

/** A shop with a custom connection: the sender signs with the key we made (shown once). */
async function shop(): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  const store = (await s.agent.post('/api/stores').send({ kind: 'custom', name: 'Feuille Google' }).expect(201)).body;
  return { ...s, workspaceId: s.workspaceId!, storeId: store.id, secret: store.secret };
}

function deliver(s: Shop, body: object, options: { id?: string; secret?: string; at?: Date } = {}) {
  const raw = JSON.stringify(body);
  return request(appUrl())
    .post(`/hooks/stores/${s.storeId}`)
    .set(signedHeaders(options.secret ?? s.secret, options.id ?? newMessageId(), raw, options.at ?? new Date()))
    .set('Content-Type', 'application/json')
    .send(raw);
}

const ordersOf = (s: Shop) => testKnex()('orders').where({ workspace_id: s.workspaceId });
const eventsOf = (s: Shop) => testKnex()('store_events').where({ connection_id: s.storeId }).orderBy('received_at');

describe('store intake: custom, Standard Webhooks', () => {
  it('order.created → the order with every field; the same webhook-id again → duplicate; another message → ignored_unchanged', async () => {
    const s = await shop();
    const id = newMessageId();
    expect((await deliver(s, { type: 'order.created', data: ORDER }, { id }).expect(200)).body).to.deep.equal({ ok: true, result: 'created' });
    const [order] = await ordersOf(s);
    expect(order).to.include({
      client_name: 'Karim Tazi',
      phone: '+212712345678',
      store_name: 'Feuille Google',
      products_name: '1 × Théière en argent',
      address: 'Bd Zerktouni, Casablanca',
      source: 'custom',
      store_connection_id: s.storeId,
      external_id: 'row-17',
      external_ref: 'Ligne 17',
      total_amount: 450,
      currency: 'MAD',
    });
    expect((await deliver(s, { type: 'order.created', data: ORDER }, { id }).expect(200)).body.result).to.equal('duplicate');
    expect((await deliver(s, { type: 'order.updated', data: ORDER }).expect(200)).body.result).to.equal('ignored_unchanged');
    expect(await ordersOf(s)).to.have.length(1);
  });

  it('20 parallel deliveries of one order → one order', async () => {
    const s = await shop();
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(s, { type: 'order.created', data: ORDER })));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(20).fill(200));
    expect(await ordersOf(s)).to.have.length(1);
  });

  it('401 for another key or a stale timestamp; 400 unreadable; 404 unknown; nothing recorded', async () => {
    const s = await shop();
    const other = `whsec_${crypto.randomBytes(32).toString('base64')}`;
    await deliver(s, { type: 'order.created', data: ORDER }, { secret: other }).expect(401);
    await deliver(s, { type: 'order.created', data: ORDER }, { at: new Date(Date.now() - 10 * 60_000) }).expect(401);
    await deliver(s, { type: 'order.created', data: { ...ORDER, external_id: '' } }).expect(400);
    await deliver({ ...s, storeId: crypto.randomUUID() }, { type: 'order.created', data: ORDER }).expect(404);
    expect(await ordersOf(s)).to.deep.equal([]);
    expect(await eventsOf(s)).to.deep.equal([]);
  });

  it('paid → ignored_paid; a non-Moroccan phone → rejected with the reason; order.cancelled cancels', async () => {
    const s = await shop();
    expect((await deliver(s, { type: 'order.created', data: { ...ORDER, paid: true } }).expect(200)).body.result).to.equal('ignored_paid');
    expect((await deliver(s, { type: 'order.created', data: { ...ORDER, external_id: 'row-18', phone: '555-0100' } }).expect(200)).body.result).to.equal(
      'rejected',
    );
    expect((await eventsOf(s))[1].reason).to.match(/Moroccan phone/);
    await deliver(s, { type: 'order.created', data: ORDER }).expect(200);
    expect((await deliver(s, { type: 'order.cancelled', data: { external_id: 'row-17' } }).expect(200)).body.result).to.equal('cancelled');
    expect((await ordersOf(s))[0].status).to.equal('unconfirmed');
  });
});
