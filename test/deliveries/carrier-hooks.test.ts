import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import { signedHeaders } from '../../integrations/signing';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { ORDER } from '../helpers/loop';

/**
 * Delivery news pushed to us (docs/delivery.md): carrier connections (/api/carriers, the
 * /deliveries page), the signed hook /hooks/carriers/:id, and Shopify's fulfillments through the
 * store connection.
 */

type Shop = SignedIn & { workspaceId: string };
const knex = () => testKnex();

async function shop(): Promise<Shop> {
  const user = await signUp();
  return { ...user, workspaceId: user.workspaceId! };
}

async function create(s: Shop, fields: object = {}): Promise<{ id: string }> {
  return (
    await s.agent
      .post('/api/orders')
      .send({ ...ORDER, ...fields })
      .expect(201)
  ).body;
}

async function carrier(s: Shop): Promise<{ id: string; secret: string; hook_url: string }> {
  return (await s.agent.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201)).body;
}

/** Posts a body to a carrier's hook, signed with `secret` (Standard Webhooks) unless headers are given. */
function push(id: string, body: unknown, secret: string, options: { messageId?: string; at?: Date; headers?: Record<string, string> } = {}) {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const headers = options.headers ?? signedHeaders(secret, options.messageId ?? `msg_${crypto.randomUUID()}`, raw, options.at);
  // As text: superagent would re-encode a Buffer sent as application/json.
  return request(appUrl()).post(`/hooks/carriers/${id}`).set(headers).set('Content-Type', 'application/json').send(raw.toString('utf8'));
}

const deliveryOf = async (id: string) => (await knex()('orders').where({ id }).first()).delivery_status as string | null;
const logOf = (connectionId: string) => knex()('carrier_events').where({ connection_id: connectionId }).orderBy('received_at');

describe('/api/carriers', () => {
  it('POST 201 with id, kind, name, hook_url and the secret once; GET lists without it; DELETE 204', async () => {
    const s = await shop();
    const res = await s.agent.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201);
    expect(Object.keys(res.body)).to.deep.equal(['id', 'kind', 'name', 'hook_url', 'created_at', 'secret']);
    expect(res.body.secret).to.match(/^whsec_/);
    expect(res.body.hook_url).to.match(new RegExp(`/hooks/carriers/${res.body.id}$`));
    expect(res.headers['cache-control']).to.equal('no-store');
    const list = (await s.agent.get('/api/carriers').expect(200)).body.carriers;
    expect(list).to.have.length(1);
    expect(list[0]).not.to.have.property('secret');
    await s.agent.delete(`/api/carriers/${res.body.id}`).expect(204);
    expect((await s.agent.get('/api/carriers').expect(200)).body.carriers).to.deep.equal([]);
  });

  it('400 for an unknown kind or a missing name; 403 for a member; 404 for another workspace’s connection', async () => {
    const owner = await shop();
    const bad = await owner.agent.post('/api/carriers').send({ kind: 'sendit', name: '' }).expect(400);
    expect(bad.body.fields).to.have.all.keys('kind', 'name');
    const member = await signUp({ invitedBy: owner });
    await member.agent.post('/api/carriers').send({ kind: 'custom', name: 'X' }).expect(403);
    const made = await carrier(owner);
    await member.agent.delete(`/api/carriers/${made.id}`).expect(403);
    expect((await member.agent.get('/api/carriers').expect(200)).body.carriers).to.have.length(1);
    const other = await shop();
    await other.agent.delete(`/api/carriers/${made.id}`).expect(404);
    await other.agent.get(`/api/carriers/${made.id}/events`).expect(404);
    await other.agent.delete('/api/carriers/nope').expect(404);
  });
});

describe('a new kind of carrier is one adapter file (docs/delivery.md, For maintainers)', () => {
  it('the table takes any adapter-shaped kind without a migration; a connection of a kind without an adapter answers 401, never 5xx', async () => {
    const s = await shop();
    const [row] = await knex()('carrier_connections')
      .insert({ workspace_id: s.workspaceId, kind: 'sendit', name: 'Sendit', secret: `whsec_${Buffer.alloc(32, 2).toString('base64')}` })
      .returning(['id', 'secret']);
    const o = await create(s, { status: 'confirmed' });
    await push(row.id, { type: 'delivery.updated', data: { order_id: o.id, status: 'delivered' } }, row.secret).expect(401);
    expect(await deliveryOf(o.id)).to.equal(null);
    expect(await logOf(row.id)).to.have.length(0);
    // The kinds a person may make stay the adapters' own.
    await s.agent.post('/api/carriers').send({ kind: 'sendit', name: 'Sendit' }).expect(400);
    let refused: unknown = null;
    await knex()('carrier_connections')
      .insert({ workspace_id: s.workspaceId, kind: 'Not a kind!', name: 'X', secret: 'whsec_x' })
      .catch((err: unknown) => {
        refused = err;
      });
    expect(String(refused)).to.match(/carrier_connections_kind_check/);
  });
});

describe('POST /hooks/carriers/:id', () => {
  it('200: a signed delivery.updated applies by tracking number, external_ref or order_id; the log says so', async () => {
    const s = await shop();
    const c = await carrier(s);
    const a = await create(s, { phone: '0611111111', status: 'confirmed' });
    await s.agent.put(`/api/orders/${a.id}/delivery`).send({ status: 'shipped', trackingNumber: 'OZ-1', at: '2026-11-01T10:00:00Z' }).expect(200);
    const b = await create(s, { phone: '0622222222', externalRef: '#1001', status: 'confirmed' });
    const d = await create(s, { phone: '0633333333', status: 'confirmed' });
    const res = await push(
      c.id,
      { type: 'delivery.updated', data: { tracking_number: 'OZ-1', status: 'delivered', carrier_status: 'Livré' } },
      c.secret,
    ).expect(200);
    expect(res.body).to.deep.equal({ ok: true, result: 'updated' });
    expect(await deliveryOf(a.id)).to.equal('delivered');
    await push(c.id, { type: 'delivery.updated', data: { external_ref: '1001', status: 'refused' } }, c.secret).expect(200);
    expect(await deliveryOf(b.id)).to.equal('refused');
    await push(c.id, { type: 'delivery.updated', data: { order_id: d.id, status: 'in_transit', at: '2026-11-02T08:00:00Z' } }, c.secret).expect(200);
    expect(await deliveryOf(d.id)).to.equal('in_transit');
    const events = (await s.agent.get(`/api/orders/${a.id}/delivery/events`).expect(200)).body.events;
    expect(events[1]).to.include({ status: 'delivered', source: 'carrier', by: 'Ozon Express', carrier_status: 'Livré' });
    const log = (await s.agent.get(`/api/carriers/${c.id}/events`).expect(200)).body.events;
    expect(log.map((e: { result: string }) => e.result)).to.deep.equal(['updated', 'updated', 'updated']);
  });

  it('an event older than the last one applied is kept in the history and changes nothing (unchanged)', async () => {
    const s = await shop();
    const c = await carrier(s);
    const o = await create(s, { status: 'confirmed' });
    await push(c.id, { type: 'delivery.updated', data: { order_id: o.id, status: 'delivered', at: '2026-11-10T10:00:00Z' } }, c.secret).expect(200);
    const late = await push(
      c.id,
      { type: 'delivery.updated', data: { order_id: o.id, status: 'out_for_delivery', at: '2026-11-09T10:00:00Z' } },
      c.secret,
    ).expect(200);
    expect(late.body.result).to.equal('unchanged');
    expect(await deliveryOf(o.id)).to.equal('delivered');
    const events = await knex()('delivery_events').where({ order_id: o.id }).orderBy('at');
    expect(events.map((e) => [e.status, e.applied])).to.deep.equal([
      ['out_for_delivery', false],
      ['delivered', true],
    ]);
  });

  it('401 for a wrong signature, a wrong key, an old timestamp (replay outside the window); nothing written', async () => {
    const s = await shop();
    const c = await carrier(s);
    const o = await create(s, { status: 'confirmed' });
    const body = { type: 'delivery.updated', data: { order_id: o.id, status: 'delivered' } };
    await push(c.id, body, `whsec_${Buffer.alloc(32, 1).toString('base64')}`).expect(401);
    await push(c.id, body, c.secret, { at: new Date(Date.now() - 10 * 60_000) }).expect(401);
    await push(c.id, body, c.secret, { headers: {} }).expect(401);
    expect(await deliveryOf(o.id)).to.equal(null);
    expect(await logOf(c.id)).to.have.length(0);
  });

  it('a replayed message (same webhook-id) is answered 200 duplicate and changes nothing', async () => {
    const s = await shop();
    const c = await carrier(s);
    const o = await create(s, { status: 'confirmed' });
    await push(c.id, { type: 'delivery.updated', data: { order_id: o.id, status: 'delivered' } }, c.secret, { messageId: 'msg_same' }).expect(200);
    await s.agent.put(`/api/orders/${o.id}/delivery`).send({ status: 'returned' }).expect(200);
    const again = await push(c.id, { type: 'delivery.updated', data: { order_id: o.id, status: 'delivered' } }, c.secret, { messageId: 'msg_same' }).expect(
      200,
    );
    expect(again.body.result).to.equal('duplicate');
    expect(await deliveryOf(o.id)).to.equal('returned');
    expect(await logOf(c.id)).to.have.length(1);
  });

  it('404 for an unknown or malformed connection id, before the body is read', async () => {
    await push('00000000-0000-4000-8000-000000000000', {}, '', { headers: {} }).expect(404);
    await push('not-a-uuid', {}, '', { headers: {} }).expect(404);
  });

  it('bad bodies never 5xx: not JSON, not an object, NUL, unknown status, another workspace’s order, too large', async () => {
    const s = await shop();
    const c = await carrier(s);
    const other = await shop();
    const theirs = await create(other, { status: 'confirmed' });
    await other.agent.put(`/api/orders/${theirs.id}/delivery`).send({ status: 'shipped', trackingNumber: 'THEIRS' }).expect(200);
    await push(c.id, 'not json', c.secret).expect(400);
    await push(c.id, '[1,2]', c.secret).expect(400);
    await push(c.id, { type: 'delivery.updated', data: 'x' }, c.secret).expect(400);
    await push(c.id, `${'['.repeat(100)}${']'.repeat(100)}`, c.secret).expect(400);
    // A NUL byte as it is in the body (not escaped): not JSON, 400.
    await push(c.id, Buffer.from('{"type":"delivery.updated","data":{"tracking_number":"A\u0000B","status":"delivered"}}'), c.secret).expect(400);
    const nulWords = await push(
      c.id,
      { type: 'delivery.updated', data: { tracking_number: 'A', status: 'delivered', carrier_status: 'Livr\u0000é' } },
      c.secret,
    ).expect(200);
    expect(nulWords.body.result).to.equal('rejected');
    const nul = await push(c.id, { type: 'delivery.updated', data: { tracking_number: 'A\u0000B', status: 'delivered' } }, c.secret).expect(200);
    expect(nul.body.result).to.equal('rejected');
    const unknown = await push(c.id, { type: 'delivery.updated', data: { tracking_number: 'A', status: 'teleported' } }, c.secret).expect(200);
    expect(unknown.body.result).to.equal('rejected');
    const future = await push(
      c.id,
      { type: 'delivery.updated', data: { tracking_number: 'A', status: 'delivered', at: '2999-01-01T00:00:00Z' } },
      c.secret,
    ).expect(200);
    expect(future.body.result).to.equal('rejected');
    const badId = await push(c.id, { type: 'delivery.updated', data: { order_id: 'x', status: 'delivered' } }, c.secret).expect(200);
    expect(badId.body.result).to.equal('rejected');
    const foreign = await push(c.id, { type: 'delivery.updated', data: { tracking_number: 'THEIRS', status: 'delivered' } }, c.secret).expect(200);
    expect(foreign.body.result).to.equal('unmatched');
    const byId = await push(c.id, { type: 'delivery.updated', data: { order_id: theirs.id, status: 'delivered' } }, c.secret).expect(200);
    expect(byId.body.result).to.equal('unmatched');
    expect(await deliveryOf(theirs.id)).to.equal('shipped');
    const otherType = await push(c.id, { type: 'parcel.weighed', data: {} }, c.secret).expect(200);
    expect(otherType.body.result).to.equal('ignored');
    await push(c.id, { type: 'delivery.updated', data: { tracking_number: 'x'.repeat(70_000), status: 'delivered' } }, c.secret).expect(413);
  });
});

describe('the /deliveries page', () => {
  it('the owner makes a connection and sees its key once; a member sees the list without the form', async () => {
    const owner = await shop();
    const page = (await owner.agent.get('/deliveries').expect(200)).text;
    expect(page).to.include('action="/deliveries/carriers"');
    const made = await owner.agent
      .post('/deliveries/carriers')
      .type('form')
      .send({ _csrf: csrfFrom(page), name: 'Amana' })
      .expect(201);
    expect(made.text).to.include('whsec_');
    const bad = await owner.agent
      .post('/deliveries/carriers')
      .type('form')
      .send({ _csrf: csrfFrom(page), name: '' })
      .expect(400);
    expect(bad.text).to.include('f-name-error');
    const list = (await owner.agent.get('/deliveries').expect(200)).text;
    expect(list).to.include('Amana');
    expect(list).not.to.include('whsec_');
    const member = await signUp({ invitedBy: owner });
    const seen = (await member.agent.get('/deliveries').expect(200)).text;
    expect(seen).to.include('Amana');
    expect(seen).not.to.include('action="/deliveries/carriers"');
    const [row] = await knex()('carrier_connections').where({ workspace_id: owner.workspaceId });
    // Another workspace's owner cannot remove it: 404, as for an unknown one.
    const stranger = await shop();
    const theirPage = (await stranger.agent.get('/deliveries').expect(200)).text;
    await stranger.agent
      .post(`/deliveries/carriers/${row.id}/delete`)
      .type('form')
      .send({ _csrf: csrfFrom(theirPage) })
      .expect(404);
    expect(theirPage).not.to.include('Amana');
    await member.agent
      .post(`/deliveries/carriers/${row.id}/delete`)
      .type('form')
      .send({ _csrf: csrfFrom(seen) })
      .expect(403);
    await owner.agent
      .post(`/deliveries/carriers/${row.id}/delete`)
      .type('form')
      .send({ _csrf: csrfFrom(list) })
      .expect(303);
    expect(await knex()('carrier_connections').where({ workspace_id: owner.workspaceId })).to.have.length(0);
  });
});

/** Shopify's fulfillments through the store connection. */
const FIXTURE = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-orders-create.json'), 'utf8'));
const SECRET = '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';

function shopify(storeId: string, topic: string, body: unknown, id: string = crypto.randomUUID()) {
  const raw = Buffer.from(JSON.stringify(body));
  return request(appUrl())
    .post(`/hooks/stores/${storeId}`)
    .set('X-Shopify-Topic', topic)
    .set('X-Shopify-Webhook-Id', id)
    .set('X-Shopify-Hmac-Sha256', crypto.createHmac('sha256', SECRET).update(raw).digest('base64'))
    .set('Content-Type', 'application/json')
    .send(raw.toString('utf8'));
}

describe('Shopify fulfillments/create and fulfillments/update', () => {
  async function shopifyOrder(): Promise<{ s: Shop; storeId: string; orderId: string; externalId: string }> {
    const s = await shop();
    const store = (
      await s.agent.post('/api/stores').send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: SECRET, cod_only: false }).expect(201)
    ).body;
    await shopify(store.id, 'orders/create', FIXTURE).expect(200);
    const order = await knex()('orders').where({ workspace_id: s.workspaceId }).first();
    return { s, storeId: store.id, orderId: order.id, externalId: order.external_id };
  }
  const fulfillment = (orderId: string, extra: object = {}) => ({
    id: 255858046,
    order_id: orderId,
    status: 'success',
    tracking_company: 'Amana',
    tracking_number: 'AM123456789MA',
    shipment_status: null,
    created_at: '2026-11-20T10:00:00+01:00',
    updated_at: '2026-11-20T10:00:00+01:00',
    ...extra,
  });

  it('Shopify’s documented fulfillment payload (a Moroccan shop’s, delivered), signed over its own bytes: the delivery with its carrier and tracking number', async () => {
    const { s, storeId, orderId } = await shopifyOrder();
    const raw = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-fulfillments-update.json'));
    const res = await request(appUrl())
      .post(`/hooks/stores/${storeId}`)
      .set('X-Shopify-Topic', 'fulfillments/update')
      .set('X-Shopify-Webhook-Id', crypto.randomUUID())
      .set('X-Shopify-Hmac-Sha256', crypto.createHmac('sha256', SECRET).update(raw).digest('base64'))
      .set('Content-Type', 'application/json')
      .send(raw.toString('utf8'))
      .expect(200);
    expect(res.body.result).to.equal('updated');
    const order = (await s.agent.get(`/api/orders/${orderId}`).expect(200)).body;
    expect(order.delivery).to.include({ status: 'delivered', carrier: 'Amana', tracking_number: 'RR123456789MA', carrier_status: 'delivered' });
    const row = await knex()('orders').where({ id: orderId }).first('delivery_status', 'delivery_tracking_number');
    expect(row).to.deep.equal({ delivery_status: 'delivered', delivery_tracking_number: 'RR123456789MA' });
  });

  it('fulfillments/create: carrier and tracking number, status shipped', async () => {
    const { s, storeId, orderId, externalId } = await shopifyOrder();
    const res = await shopify(storeId, 'fulfillments/create', fulfillment(externalId)).expect(200);
    expect(res.body).to.deep.equal({ ok: true, result: 'updated' });
    const order = (await s.agent.get(`/api/orders/${orderId}`).expect(200)).body;
    expect(order.delivery).to.include({ status: 'shipped', carrier: 'Amana', tracking_number: 'AM123456789MA' });
    const events = (await s.agent.get(`/api/orders/${orderId}/delivery/events`).expect(200)).body.events;
    expect(events[0]).to.include({ source: 'store', by: 'Atlas' });
  });

  const mapped: Array<[string, string]> = [
    ['in_transit', 'in_transit'],
    ['out_for_delivery', 'out_for_delivery'],
    ['delivered', 'delivered'],
    ['failure', 'refused'],
    ['picked_up', 'delivered'],
    ['carrier_picked_up', 'in_transit'],
  ];
  for (const [shipment, ours] of mapped) {
    it(`fulfillments/update with shipment_status ${shipment} → ${ours}`, async () => {
      const { storeId, orderId, externalId } = await shopifyOrder();
      await shopify(storeId, 'fulfillments/create', fulfillment(externalId)).expect(200);
      await shopify(storeId, 'fulfillments/update', fulfillment(externalId, { shipment_status: shipment, updated_at: '2026-11-21T10:00:00+01:00' })).expect(
        200,
      );
      expect(await knex()('orders').where({ id: orderId }).first()).to.include({ delivery_status: ours, delivery_carrier_status: shipment });
    });
  }

  // A first fulfillment may already say where the parcel is: fulfillments/create for each shipment_status.
  const onCreate: Array<[string | null, string]> = [
    [null, 'shipped'],
    ['in_transit', 'in_transit'],
    ['out_for_delivery', 'out_for_delivery'],
    ['delivered', 'delivered'],
    ['failure', 'refused'],
    ['picked_up', 'delivered'],
    ['carrier_picked_up', 'in_transit'],
    ['attempted_delivery', 'shipped'],
    ['label_printed', 'shipped'],
    ['label_purchased', 'shipped'],
    ['confirmed', 'shipped'],
    ['ready_for_pickup', 'shipped'],
    ['delayed', 'shipped'],
    // Not one of Shopify's words, nor a name our table might inherit: the carrier's words only.
    ['constructor', 'shipped'],
  ];
  for (const [shipment, ours] of onCreate) {
    it(`fulfillments/create with shipment_status ${shipment} → ${ours}, with the carrier and tracking number`, async () => {
      const { storeId, orderId, externalId } = await shopifyOrder();
      const res = await shopify(storeId, 'fulfillments/create', fulfillment(externalId, { shipment_status: shipment })).expect(200);
      expect(res.body.result).to.equal('updated');
      expect(await knex()('orders').where({ id: orderId }).first()).to.include({
        delivery_status: ours,
        delivery_carrier: 'Amana',
        delivery_tracking_number: 'AM123456789MA',
        delivery_carrier_status: shipment,
      });
    });
  }

  it('attempted_delivery is an attempt in the history (issue 53): shipped first when the order had no delivery, then the attempt', async () => {
    const { storeId, orderId, externalId } = await shopifyOrder();
    await shopify(storeId, 'fulfillments/create', fulfillment(externalId, { shipment_status: 'attempted_delivery' })).expect(200);
    await shopify(storeId, 'fulfillments/update', fulfillment(externalId, { shipment_status: 'in_transit', updated_at: '2026-11-21T10:00:00+01:00' })).expect(
      200,
    );
    await shopify(
      storeId,
      'fulfillments/update',
      fulfillment(externalId, { shipment_status: 'attempted_delivery', updated_at: '2026-11-22T10:00:00+01:00' }),
    ).expect(200);
    const events = await knex()('delivery_events').where({ order_id: orderId }).orderBy('received_at').select('status', 'carrier_status', 'source');
    expect(events.map((e) => [e.status, e.carrier_status])).to.deep.equal([
      ['shipped', null],
      ['attempted', 'attempted_delivery'],
      ['in_transit', 'in_transit'],
      ['attempted', 'attempted_delivery'],
    ]);
    expect(await knex()('orders').where({ id: orderId }).first()).to.include({ delivery_status: 'in_transit', delivery_carrier_status: 'attempted_delivery' });
  });

  for (const shipment of ['attempted_delivery', 'label_printed', 'label_purchased', 'confirmed', 'ready_for_pickup', 'delayed']) {
    it(`fulfillments/update with shipment_status ${shipment} changes only the carrier's words`, async () => {
      const { storeId, orderId, externalId } = await shopifyOrder();
      await shopify(storeId, 'fulfillments/create', fulfillment(externalId, { shipment_status: 'in_transit' })).expect(200);
      await shopify(storeId, 'fulfillments/update', fulfillment(externalId, { shipment_status: shipment, updated_at: '2026-11-21T10:00:00+01:00' })).expect(
        200,
      );
      expect(await knex()('orders').where({ id: orderId }).first()).to.include({ delivery_status: 'in_transit', delivery_carrier_status: shipment });
    });
  }

  it('a fulfillment of an order we do not have, a replay, and an older update change nothing', async () => {
    const { storeId, orderId, externalId } = await shopifyOrder();
    const unknown = await shopify(storeId, 'fulfillments/create', fulfillment('99999999999999999')).expect(200);
    expect(unknown.body.result).to.equal('ignored_unchanged');
    await shopify(
      storeId,
      'fulfillments/update',
      fulfillment(externalId, { shipment_status: 'delivered', updated_at: '2026-11-22T10:00:00+01:00' }),
      'same',
    ).expect(200);
    const replay = await shopify(storeId, 'fulfillments/update', fulfillment(externalId, { shipment_status: 'failure' }), 'same').expect(200);
    expect(replay.body.result).to.equal('duplicate');
    await shopify(storeId, 'fulfillments/update', fulfillment(externalId, { shipment_status: 'in_transit', updated_at: '2026-11-21T10:00:00+01:00' })).expect(
      200,
    );
    expect((await knex()('orders').where({ id: orderId }).first()).delivery_status).to.equal('delivered');
  });
});
