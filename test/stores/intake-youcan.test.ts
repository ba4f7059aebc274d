import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/** A YouCan order.create body as PHP's json_encode writes it: `\/` and `\u00e8` escapes, which the signature covers. */
const RAW = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'youcan-order-create.json'));
const SECRET = 'youcan-client-secret-7f3a9c2e';

type Shop = SignedIn & { workspaceId: string; storeId: string };

async function shop(): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  const store = (await s.agent.post('/api/stores').send({ kind: 'youcan', name: 'Atlas YouCan', secret: SECRET }).expect(201)).body;
  return { ...s, workspaceId: s.workspaceId!, storeId: store.id };
}

const hexSignature = (raw: Buffer, secret = SECRET) => crypto.createHmac('sha256', secret).update(raw).digest('hex');

/** The body goes as its exact bytes (ASCII here: PHP escaped every non-ASCII character). */
function deliver(s: Shop, raw: Buffer, signature = hexSignature(raw)) {
  return request(appUrl())
    .post(`/hooks/stores/${s.storeId}`)
    .set('Content-Type', 'application/json')
    .set('x-youcan-signature', signature)
    .send(raw.toString('latin1'));
}

/** The fixture with some fields replaced, written back the way PHP writes it. */
function variant(change: (order: Record<string, unknown>) => void): Buffer {
  const order = JSON.parse(RAW.toString('utf8'));
  change(order);
  return Buffer.from(
    JSON.stringify(order)
      .replace(/\//g, '\\/')
      .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
}

const ordersOf = (s: Shop) => testKnex()('orders').where({ workspace_id: s.workspaceId });
const eventsOf = (s: Shop) => testKnex()('store_events').where({ connection_id: s.storeId }).orderBy('received_at');

describe('store intake: YouCan', () => {
  it('a signed order.create, verified over PHP’s escaped bytes → the order with every mapped field; again → duplicate', async () => {
    const s = await shop();
    expect(RAW.toString('latin1')).to.contain('\\/').and.contain('\\u00e8');
    expect((await deliver(s, RAW).expect(200)).body).to.deep.equal({ ok: true, result: 'created' });
    const [order] = await ordersOf(s);
    expect(order).to.include({
      client_name: 'Hélène Ouazzani',
      phone: '+212661234567',
      store_name: 'Atlas YouCan',
      products_name: '1 × Caftan brodé / taille M',
      address: 'Derb Sidi Bouloukat 7, Marrakech',
      source: 'youcan',
      store_connection_id: s.storeId,
      external_id: '9d2e7c1a-3b4f-4e5d-8a6b-7c8d9e0f1a2b',
      external_ref: 'YC-10024',
      total_amount: 289,
      currency: 'MAD',
      status: 'pending',
    });
    expect((await deliver(s, RAW).expect(200)).body.result).to.equal('duplicate');
    expect(await ordersOf(s)).to.have.length(1);
  });

  it('20 parallel deliveries → one order', async () => {
    const s = await shop();
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(s, RAW)));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(20).fill(200));
    expect(await ordersOf(s)).to.have.length(1);
  });

  it('a re-serialised body, a base64 or wrong signature → 401; unreadable → 400; unknown → 404; nothing recorded', async () => {
    const s = await shop();
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(RAW.toString('utf8'))));
    await deliver(s, reserialised, hexSignature(RAW)).expect(401);
    await deliver(s, RAW, crypto.createHmac('sha256', SECRET).update(RAW).digest('base64')).expect(401);
    await deliver(s, RAW, hexSignature(RAW, 'other')).expect(401);
    // Upper-case hex is the same signature.
    await deliver(s, Buffer.from('{"id":null}'), hexSignature(Buffer.from('{"id":null}')).toUpperCase()).expect(400);
    await request(appUrl()).post(`/hooks/stores/${crypto.randomUUID()}`).set('x-youcan-signature', hexSignature(RAW)).send(RAW.toString('latin1')).expect(404);
    expect(await ordersOf(s)).to.deep.equal([]);
    expect(await eventsOf(s)).to.deep.equal([]);
  });

  it('a paid order is ignored under cod_only; a non-Moroccan phone → 200 and rejected naming the phone', async () => {
    const s = await shop();
    const paid = variant((o) => {
      o.payment = { status: 'paid', method: 'credit_card' };
    });
    expect((await deliver(s, paid).expect(200)).body.result).to.equal('ignored_paid');
    const foreign = variant((o) => {
      o.id = crypto.randomUUID();
      (o.customer as Record<string, unknown>).phone = '+34 612 34 56 78';
    });
    expect((await deliver(s, foreign).expect(200)).body.result).to.equal('rejected');
    const events = await eventsOf(s);
    expect(events.map((e) => e.result)).to.deep.equal(['ignored_paid', 'rejected']);
    expect(events[1].reason).to.match(/Moroccan phone/);
    expect(await ordersOf(s)).to.deep.equal([]);
  });
});
