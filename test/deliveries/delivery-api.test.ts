import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../../config';
import { messageBody } from '../../services/webhooks';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, signUp, TEST_ENV, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey, randomIp } from '../helpers/keys';
import { ORDER } from '../helpers/loop';

/**
 * An order's delivery (docs/delivery.md): set by a person (page, /api, Data API), on every
 * representation, its history, the list's filter and the order.delivery_updated webhook event.
 */

type Shop = SignedIn & { workspaceId: string };
const PUBLISHABLE_KEY = loadConfig(TEST_ENV).publishableKey;
let target: ReturnType<typeof testApp>;
before(() => {
  target = testApp({ TRUST_PROXY: '1', TOKEN_LIMIT_PER_IP: '1000', TOKEN_LIMIT_PER_KEY: '1000' });
});
const knex = () => testKnex();

async function shop(): Promise<Shop> {
  const user = await signUp({ target, name: 'Salma' });
  return { ...user, workspaceId: user.workspaceId! };
}

async function create(s: Shop, fields: object = {}): Promise<{ id: string; delivery: unknown }> {
  return (
    await s.agent
      .post('/api/orders')
      .send({ ...ORDER, ...fields })
      .expect(201)
  ).body;
}

describe('PUT /api/orders/:id/delivery', () => {
  it('200: the order with its delivery; null before; the history names the person', async () => {
    const s = await shop();
    const order = await create(s);
    expect(order.delivery).to.equal(null);
    const res = await s.agent
      .put(`/api/orders/${order.id}/delivery`)
      .send({ status: 'shipped', carrier: 'Ozon Express', trackingNumber: 'OZ123456789MA', carrierStatus: 'Ramassé', at: '2026-11-20T10:00:00Z' })
      .expect(200);
    expect(res.body.delivery).to.deep.equal({
      status: 'shipped',
      carrier: 'Ozon Express',
      tracking_number: 'OZ123456789MA',
      carrier_status: 'Ramassé',
      updated_at: '2026-11-20T10:00:00.000Z',
    });
    // snake_case is read too; the carrier and tracking number stay when not given again.
    const delivered = await s.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'delivered', carrier_status: 'Livré' }).expect(200);
    expect(delivered.body.delivery).to.include({ status: 'delivered', carrier: 'Ozon Express', tracking_number: 'OZ123456789MA', carrier_status: 'Livré' });
    expect((await s.agent.get(`/api/orders/${order.id}`).expect(200)).body.delivery.status).to.equal('delivered');
    const row = await knex()('orders').where({ id: order.id }).first();
    expect(row).to.include({ delivery_status: 'delivered', delivery_tracking_number: 'OZ123456789MA' });
    const events = (await s.agent.get(`/api/orders/${order.id}/delivery/events`).expect(200)).body.events;
    expect(events).to.have.length(2);
    expect(events[0]).to.deep.equal({ status: 'shipped', carrier_status: 'Ramassé', at: '2026-11-20T10:00:00.000Z', source: 'person', by: 'Salma' });
    expect(events[1]).to.include({ status: 'delivered', carrier_status: 'Livré', source: 'person', by: 'Salma' });
  });

  it('400 VALIDATION_ERROR naming each bad field: unknown status, too long, a future or bad `at`, nothing written', async () => {
    const s = await shop();
    const order = await create(s);
    const res = await s.agent
      .put(`/api/orders/${order.id}/delivery`)
      .send({ status: 'teleported', carrier: 'x'.repeat(101), trackingNumber: 't'.repeat(101), carrierStatus: 'w'.repeat(201), at: '2999-01-01T00:00:00Z' })
      .expect(400);
    expect(res.body.code).to.equal('VALIDATION_ERROR');
    expect(res.body.fields).to.have.all.keys('status', 'carrier', 'trackingNumber', 'carrierStatus', 'at');
    expect(res.body.fields.at).to.equal('at must not be in the future');
    const bad = await s.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'shipped', at: 'yesterday' }).expect(400);
    expect(bad.body.fields).to.have.all.keys('at');
    await s.agent.put(`/api/orders/${order.id}/delivery`).send({}).expect(400);
    await s.agent.put(`/api/orders/${order.id}/delivery`).send([1]).expect(400);
    expect(await knex()('delivery_events').where({ order_id: order.id })).to.have.length(0);
    expect((await knex()('orders').where({ id: order.id }).first()).delivery_status).to.equal(null);
  });

  it('400 for a tracking number another order of the workspace has; another workspace may use the same one', async () => {
    const s = await shop();
    const first = await create(s);
    const second = await create(s, { phone: '0698765432' });
    await s.agent.put(`/api/orders/${first.id}/delivery`).send({ status: 'shipped', trackingNumber: 'AMANA-1' }).expect(200);
    const res = await s.agent.put(`/api/orders/${second.id}/delivery`).send({ status: 'shipped', trackingNumber: 'AMANA-1' }).expect(400);
    expect(res.body.fields).to.deep.equal({ trackingNumber: 'This tracking number belongs to another order of the workspace' });
    expect(await knex()('delivery_events').where({ order_id: second.id })).to.have.length(0);
    const other = await shop();
    const theirs = await create(other);
    await other.agent.put(`/api/orders/${theirs.id}/delivery`).send({ status: 'shipped', trackingNumber: 'AMANA-1' }).expect(200);
  });

  it("404 for another workspace's order, an unknown id and a malformed one; nothing written", async () => {
    const a = await shop();
    const b = await shop();
    const theirs = await create(b);
    await a.agent.put(`/api/orders/${theirs.id}/delivery`).send({ status: 'delivered' }).expect(404);
    await a.agent.get(`/api/orders/${theirs.id}/delivery/events`).expect(404);
    await a.agent.put('/api/orders/00000000-0000-4000-8000-000000000000/delivery').send({ status: 'delivered' }).expect(404);
    await a.agent.put('/api/orders/nope/delivery').send({ status: 'delivered' }).expect(404);
    await a.agent.get('/api/orders/nope/delivery/events').expect(404);
    expect((await knex()('orders').where({ id: theirs.id }).first()).delivery_status).to.equal(null);
  });

  it('a person’s change always applies, even dated before the last one', async () => {
    const s = await shop();
    const order = await create(s);
    await s.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'delivered', at: '2026-11-20T10:00:00Z' }).expect(200);
    const res = await s.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'refused', at: '2026-11-19T10:00:00Z' }).expect(200);
    expect(res.body.delivery.status).to.equal('refused');
  });
});

describe('the Data API: PUT /data/v1/orders/:id/delivery and its events', () => {
  it('sets and reads a delivery in the token owner’s workspace; 404 for another’s', async () => {
    const s = await shop();
    const { key } = await createKey(s);
    const token = (await request(target).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key}`).expect(200)).body
      .access_token;
    const order = await create(s);
    const res = await request(target)
      .put(`/data/v1/orders/${order.id}/delivery`)
      .set('apikey', PUBLISHABLE_KEY)
      .set('Authorization', `Bearer ${token}`)
      .send({ status: 'in_transit', carrier: 'Amana' })
      .expect(200);
    expect(res.body.delivery).to.include({ status: 'in_transit', carrier: 'Amana' });
    const events = await request(target)
      .get(`/data/v1/orders/${order.id}/delivery/events`)
      .set('apikey', PUBLISHABLE_KEY)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(events.body.events).to.have.length(1);
    // The Data API's order carries the delivery, and its list filters by it.
    const read = await request(target).get(`/data/v1/orders/${order.id}`).set('apikey', PUBLISHABLE_KEY).set('Authorization', `Bearer ${token}`).expect(200);
    expect(read.body.delivery).to.include({ status: 'in_transit', carrier: 'Amana', tracking_number: null });
    const listed = await request(target)
      .get('/data/v1/orders?delivery=in_transit')
      .set('apikey', PUBLISHABLE_KEY)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(listed.body.orders.map((o: { id: string }) => o.id)).to.deep.equal([order.id]);
    expect(listed.body.orders[0].delivery.status).to.equal('in_transit');
    const other = await shop();
    const theirs = await create(other);
    await request(target)
      .put(`/data/v1/orders/${theirs.id}/delivery`)
      .set('apikey', PUBLISHABLE_KEY)
      .set('Authorization', `Bearer ${token}`)
      .send({ status: 'delivered' })
      .expect(404);
  });
});

describe("another workspace's order: 404 on every delivery route, nothing written", () => {
  it('the session API, the Data API and the order page', async () => {
    const a = await shop();
    const b = await shop();
    const theirs = await create(b);
    await b.agent.put(`/api/orders/${theirs.id}/delivery`).send({ status: 'shipped', trackingNumber: 'B-1' }).expect(200);
    await a.agent.put(`/api/orders/${theirs.id}/delivery`).send({ status: 'delivered' }).expect(404);
    await a.agent.get(`/api/orders/${theirs.id}/delivery/events`).expect(404);
    const { key } = await createKey(a);
    const token = (await request(target).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key}`).expect(200)).body
      .access_token;
    const data = (method: 'get' | 'put', path: string) =>
      request(target)[method](`/data/v1${path}`).set('apikey', PUBLISHABLE_KEY).set('Authorization', `Bearer ${token}`);
    await data('put', `/orders/${theirs.id}/delivery`).send({ status: 'delivered' }).expect(404);
    await data('get', `/orders/${theirs.id}/delivery/events`).expect(404);
    await data('get', `/orders/${theirs.id}`).expect(404);
    // The order page and its delivery form.
    const page = (await a.agent.get('/orders').expect(200)).text;
    await a.agent.get(`/orders/${theirs.id}`).expect(404);
    await a.agent
      .post(`/orders/${theirs.id}/delivery`)
      .type('form')
      .send({ _csrf: csrfFrom(page), status: 'delivered', carrier: '', tracking_number: '', carrier_status: '' })
      .expect(404);
    // Their tracking number is theirs: a's list filter and search do not see it.
    expect((await a.agent.get('/api/orders?delivery=shipped').expect(200)).body.orders).to.deep.equal([]);
    expect((await knex()('orders').where({ id: theirs.id }).first()).delivery_status).to.equal('shipped');
    expect(await knex()('delivery_events').where({ order_id: theirs.id })).to.have.length(1);
  });
});

describe('GET /api/orders?delivery=…', () => {
  it('filters by delivery status, several at once, and `none`; an unknown value is 400', async () => {
    const s = await shop();
    const delivered = await create(s, { phone: '0611111111' });
    const refused = await create(s, { phone: '0622222222' });
    const none = await create(s, { phone: '0633333333' });
    await s.agent.put(`/api/orders/${delivered.id}/delivery`).send({ status: 'delivered' }).expect(200);
    await s.agent.put(`/api/orders/${refused.id}/delivery`).send({ status: 'refused' }).expect(200);
    const ids = async (query: string) => (await s.agent.get(`/api/orders?${query}`).expect(200)).body.orders.map((o: { id: string }) => o.id);
    expect(await ids('delivery=delivered')).to.deep.equal([delivered.id]);
    expect(await ids('delivery=refused,delivered')).to.deep.equal([refused.id, delivered.id]);
    expect(await ids('delivery=none')).to.deep.equal([none.id]);
    expect(await ids('delivery=returned')).to.deep.equal([]);
    const bad = await s.agent.get('/api/orders?delivery=gone').expect(400);
    expect(bad.body.fields).to.have.key('delivery');
  });
});

describe('order.delivery_updated', () => {
  it('goes to endpoints that take it (and every event) with the order; no order.updated for a delivery change', async () => {
    const s = await shop();
    const all = (await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/all' }).expect(201)).body;
    expect(all.events).to.include('order.delivery_updated');
    const onlyCreated = (
      await s.agent
        .post('/api/webhooks')
        .send({ url: 'http://127.0.0.1:9/c', events: ['order.created'] })
        .expect(201)
    ).body;
    const order = await create(s);
    await s.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'shipped', trackingNumber: 'T-1' }).expect(200);
    const api = (await s.agent.get(`/api/orders/${order.id}`).expect(200)).body;
    // The same again changes nothing: no second event.
    await s.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'shipped' }).expect(200);
    const messages = await knex()('webhook_deliveries as d')
      .join('webhook_messages as m', 'm.id', 'd.message_id')
      .where('d.endpoint_id', all.id)
      .orderBy('m.created_at')
      .select('m.event_type', 'm.data', 'm.created_at');
    expect(messages.map((m) => m.event_type)).to.deep.equal(['order.created', 'order.delivery_updated']);
    const body = JSON.parse(messageBody(messages[1]));
    expect(body.type).to.equal('order.delivery_updated');
    expect(body.data.order.id).to.equal(order.id);
    expect(body.data.order.delivery).to.include({ status: 'shipped', tracking_number: 'T-1' });
    expect(Object.keys(body.data.order)).to.deep.equal(Object.keys(api));
    expect(body.data.order.delivery).to.deep.equal(api.delivery);
    const other = await knex()('webhook_deliveries').where({ endpoint_id: onlyCreated.id });
    expect(other).to.have.length(1);
  });
});

describe('the order pages', () => {
  it('the order page sets the delivery by its form and shows the history; the list shows it and filters by it', async () => {
    const s = await shop();
    const order = await create(s);
    const page = (await s.agent.get(`/orders/${order.id}`).expect(200)).text;
    expect(page).to.include(`action="/orders/${order.id}/delivery"`);
    await s.agent
      .post(`/orders/${order.id}/delivery`)
      .type('form')
      .send({ _csrf: csrfFrom(page), status: 'returned', carrier: 'Sendit', tracking_number: 'SD-9', carrier_status: 'Retour' })
      .expect(303);
    expect(await knex()('orders').where({ id: order.id }).first()).to.include({ delivery_status: 'returned', delivery_carrier: 'Sendit' });
    const shown = (await s.agent.get(`/orders/${order.id}`).expect(200)).text;
    expect(shown).to.include('badge-delivery-returned');
    expect(shown).to.include('Retour');
    const bad = await s.agent
      .post(`/orders/${order.id}/delivery`)
      .type('form')
      .send({ _csrf: csrfFrom(shown), status: 'flying', carrier: '', tracking_number: '', carrier_status: '' })
      .expect(400);
    expect(bad.text).to.include('f-delivery_status-error');
    const list = (await s.agent.get('/orders?delivery=returned').expect(200)).text;
    expect(list).to.include(`/orders/${order.id}`);
    expect((await s.agent.get('/orders?delivery=delivered').expect(200)).text).not.to.include(`/orders/${order.id}"`);
    await s.agent.get('/orders?delivery=gone').expect(400);
    const fr = (await s.agent.get(`/orders/${order.id}`).set('Accept-Language', 'fr').expect(200)).text;
    expect(fr).to.include('colis retourné');
    // The CSV export carries the delivery too.
    const csv = (await s.agent.get('/api/orders/export.csv').expect(200)).text;
    expect(csv.split('\r\n')[0]).to.match(/,delivery_status,carrier,tracking_number,carrier_status$/);
    expect(csv).to.include(',returned,Sendit,SD-9,Retour');
  });

  it('the list filtered by a delivery: its caption and pager agree on the count; an empty filter says so and offers any delivery', async () => {
    const s = await shop();
    const delivered = await create(s, { phone: '0611111111' });
    await create(s, { phone: '0622222222' });
    await s.agent.put(`/api/orders/${delivered.id}/delivery`).send({ status: 'delivered' }).expect(200);
    const caption = (html: string) => /<caption>([^<]*)<\/caption>/.exec(html)?.[1];
    const fr = (await s.agent.get('/orders?delivery=delivered').set('Accept-Language', 'fr').expect(200)).text;
    // Not "2 commandes": the workspace has two, the filter keeps one.
    expect(caption(fr)).to.equal('Commandes trouvées, les plus récentes en premier');
    expect(fr).to.include('1–1 sur 1');
    // The export link says it takes these orders, and its file holds only them.
    const exported = /<a href="([^"]+)" download>Exporter ces commandes en CSV<\/a>/.exec(fr);
    expect(exported?.[1]).to.equal('/api/orders/export.csv?delivery=delivered&amp;lang=fr');
    const file = (await s.agent.get('/api/orders/export.csv?delivery=delivered').expect(200)).text.trim().split(/\r?\n/);
    expect(file).to.have.length(2);
    expect(file[1]).to.include(delivered.id);
    // With a status chosen too, the caption does not count that status's orders regardless of the delivery.
    const both = (await s.agent.get('/orders?status=pending&delivery=delivered').expect(200)).text;
    expect(caption(both)).to.equal('Matching orders, newest first');
    expect(both).to.include('1–1 of 1');
    const none = (await s.agent.get('/orders?delivery=none').expect(200)).text;
    expect(caption(none)).to.equal('Matching orders, newest first');
    expect(none).to.include('1–1 of 1');
    const lost = (await s.agent.get('/orders?delivery=lost').set('Accept-Language', 'fr').expect(200)).text;
    expect(lost).not.to.include('<caption>');
    expect(lost).to.match(
      /Aucune commande dont la livraison est <span class="badge badge-delivery badge-delivery-lost">colis perdu<\/span>\s+pour ces filtres\./,
    );
    expect(lost).to.include('Voir les commandes quelle que soit leur livraison');
    const other = await shop();
    await create(other);
    const ar = (await other.agent.get('/orders?delivery=delivered').set('Accept-Language', 'ar').expect(200)).text;
    expect(ar).to.include('لا يوجد طلب حالة توصيله');
    const undelivered = (await other.agent.get('/orders?delivery=none').expect(200)).text;
    expect(undelivered).to.include('Matching orders, newest first');
  });
});
