import { expect } from 'chai';
import { PDFDocument } from 'pdf-lib';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import type { Services } from '../../services';
import { csrfOf, signUp, TEST_ENV, testApp } from '../helpers/app';
import type { SignedIn } from '../helpers/app';
import { DIGYLOG_KEYS, digylogDouble, senditDouble, SENDIT_KEYS } from '../helpers/carrier-doubles';
import { testKnex } from '../helpers/db';
import { confirmedOrder as confirmed, sendQueued } from '../helpers/shipping';
import { orderRow } from '../helpers/loop';

/** This file's orders: the shared helper's, with Nadia Berrada's tajine. */
const confirmedOrder = (shop: SignedIn, fields: Record<string, unknown> = {}) =>
  confirmed(shop, { clientName: 'Nadia Berrada', phone: '0661234567', productsName: 'Tajine', totalAmount: '180.00', address: 'Derb 3', ...fields });

describe('shipping: the edges a person meets', function () {
  this.timeout(60_000);
  let sendit: Awaited<ReturnType<typeof senditDouble>>;
  let app: ReturnType<typeof testApp>;
  let services: Services;
  let shop: SignedIn;
  let accountId: string;

  beforeEach(async () => {
    sendit = await senditDouble();
    const env = { SENDIT_API_ORIGIN: sendit.url };
    app = testApp(env);
    services = createServices(testKnex(), loadConfig({ ...TEST_ENV, ...env }), new Jobs(testKnex()));
    shop = await signUp({ target: app });
    accountId = (
      await shop.agent.post('/api/carrier-accounts').send({ kind: 'sendit', name: 'Sendit', credentials: SENDIT_KEYS, pickup_city_id: '1' }).expect(201)
    ).body.id;
  });
  afterEach(() => sendit.close());

  it('an order missing both its amount and a known city gets the one, then the other, on the shipment’s page, and goes', async () => {
    const id = await confirmedOrder(shop, { totalAmount: null, city: 'Fes Medina' });
    const { body } = await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    const step1 = await shop.agent
      .post(`/api/shipments/${body.shipment_id}/cities`)
      .send({ amounts: { [id]: '220' } })
      .expect(200);
    expect(step1.body.parcels[0].state).to.equal('needs_city');
    const step2 = await shop.agent
      .post(`/api/shipments/${body.shipment_id}/cities`)
      .send({ cities: { [id]: '3' } })
      .expect(200);
    expect(step2.body.parcels[0].state).to.equal('queued');
    expect(await sendQueued(services, shop)).to.deep.equal(['sent']);
    expect(sendit.byReference(id)?.sent).to.deep.include({ amount: 220, district_id: 3 });
  });

  it('an account with parcels being sent is not removed (409); once they are sent it is', async () => {
    const id = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    const refused = await shop.agent.delete(`/api/carrier-accounts/${accountId}`).expect(409);
    expect(refused.body.code).to.equal('carrier_account_busy');
    expect(await testKnex()('parcels').where({ order_id: id })).to.have.length(1);
    await sendQueued(services, shop);
    await shop.agent.delete(`/api/carrier-accounts/${accountId}`).expect(204);
    // The order keeps its delivery, and is not shipped a second time.
    expect((await orderRow(id)).delivery_status).to.equal('shipped');
  });

  it('an order that already has a delivery is not shipped again (409), even without a live parcel', async () => {
    const id = await confirmedOrder(shop);
    await shop.agent.put(`/api/orders/${id}/delivery`).send({ status: 'shipped', carrier: 'Amana', trackingNumber: 'AM123' }).expect(200);
    const refused = await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(409);
    expect(refused.body.code).to.equal('already_shipped');
    expect(await testKnex()('parcels').where({ order_id: id })).to.have.length(0);
  });

  it('a parcel shipped again after a refusal is known to the carrier by a reference of its own', async () => {
    const id = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    await testKnex()('parcels').where({ order_id: id }).update({ state: 'failed', reason: 'Le numéro de téléphone est invalide.' });
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    const references = await testKnex()('parcels').where({ order_id: id }).orderBy('created_at').pluck('reference');
    expect(references).to.deep.equal([id, `${id}-2`]);
  });

  it('auto-ship waits while the account’s keys are refused, and ships once they work again', async () => {
    await shop.agent.put(`/api/carrier-accounts/${accountId}`).send({ auto_ship: true }).expect(200);
    await testKnex()('carrier_accounts').where({ id: accountId }).update({ state: 'credentials_refused', state_since: new Date() });
    const id = await confirmedOrder(shop);
    expect(await services.autoShipping.run()).to.deep.include({ shipped: 0 });
    expect(await testKnex()('auto_ship_orders').where({ order_id: id }).first()).to.include({ done_at: null });
    await shop.agent.put(`/api/carrier-accounts/${accountId}`).send({ credentials: SENDIT_KEYS }).expect(200);
    expect(await services.autoShipping.run()).to.deep.include({ shipped: 1 });
    expect(await sendQueued(services, shop)).to.deep.equal(['sent']);
  });

  it('a declined order’s uncertain parcel is not silently dropped: the page says to cancel it at the carrier', async () => {
    const id = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    await testKnex()('parcels').where({ order_id: id }).update({ state: 'uncertain' });
    await shop.agent.put(`/api/orders/${id}`).send({ status: 'unconfirmed' }).expect(200);
    await services.autoShipping.run();
    expect(await testKnex()('parcels').where({ order_id: id }).first()).to.include({ state: 'uncertain', cancel_at_carrier: true });
    const page = await shop.agent.get(`/orders/${id}`).expect(200);
    expect(page.text).to.include('role="note"');
  });

  it('"it was created" with another parcel’s tracking number is refused beside the field, never a 500', async () => {
    const [a, b] = [await confirmedOrder(shop), await confirmedOrder(shop, { phone: '0661234568' })];
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [a, b] })
      .expect(202);
    const sent = await testKnex()('parcels').where({ order_id: a }).first('id');
    await services.parcels.send(sent.id);
    const taken = (await orderRow(a)).delivery_tracking_number;
    await testKnex()('parcels').where({ order_id: b }).update({ state: 'uncertain' });
    const refused = await shop.agent.post(`/api/orders/${b}/parcel`).send({ action: 'created', tracking: taken }).expect(400);
    expect(refused.body.fields).to.have.property('tracking');
    expect(await testKnex()('parcels').where({ order_id: b }).first()).to.include({ state: 'uncertain' });
  });

  it('a label that cannot be fetched is named on a last page of the PDF, and counted in X-Labels-Missing', async () => {
    const ids = [await confirmedOrder(shop), await confirmedOrder(shop, { phone: '0661234570' })];
    const { body } = await shop.agent.post('/api/shipments').send({ accountId, orderIds: ids }).expect(202);
    await sendQueued(services, shop);
    // The carrier lost the second label.
    sendit.parcels.delete((await orderRow(ids[1])).delivery_tracking_number);
    const labels = await shop.agent
      .get(`/api/shipments/${body.shipment_id}/labels.pdf`)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(labels.headers['x-labels-missing']).to.equal('1');
    // One label page, then the page that names what is missing.
    expect((await PDFDocument.load(labels.body as Buffer)).getPageCount()).to.equal(2);
  });

  it('the order page cancels its parcel by hand: asked of the carrier within the minute pass, and said on the page', async () => {
    const id = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    await sendQueued(services, shop);
    const tracking = (await orderRow(id)).delivery_tracking_number;
    const page = await shop.agent.get(`/orders/${id}`).expect(200);
    expect(page.text).to.include('name="action" value="cancel"');
    const csrf = (/name="_csrf" value="([^"]+)"/.exec(page.text) ?? [])[1];
    await shop.agent.post(`/orders/${id}/parcel`).type('form').send({ _csrf: csrf, action: 'cancel' }).expect(303);
    expect((await shop.agent.get(`/orders/${id}`).expect(200)).text)
      .to.include('role="status"')
      .and.not.include('name="action" value="cancel"');
    expect(await services.autoShipping.run()).to.deep.include({ cancelled: 1 });
    expect(await testKnex()('parcels').where({ order_id: id }).first()).to.include({ state: 'cancelled' });
    expect(sendit.parcels.get(tracking)!.status).to.equal('CANCELED');
    // The carrier's calls of every process keep the account's pace: its next slot moved on.
    expect((await testKnex()('carrier_accounts').where({ id: accountId }).first()).next_call_at).to.be.instanceOf(Date);
  });

  it('the owner enters refused keys again on the accounts page; a selection of shipped orders prints its labels', async () => {
    await testKnex()('carrier_accounts').where({ id: accountId }).update({ state: 'credentials_refused', state_since: new Date() });
    const csrf = await csrfOf(shop.agent, '/deliveries/carriers');
    const page = await shop.agent.get('/deliveries/carriers').expect(200);
    expect(page.headers['cache-control']).to.include('no-store');
    expect(page.text).to.include(`action="/deliveries/carriers/accounts/${accountId}/keys"`);
    await shop.agent
      .post(`/deliveries/carriers/accounts/${accountId}/keys`)
      .type('form')
      .send({ _csrf: csrf, credential_public_key: SENDIT_KEYS.public_key, credential_secret_key: SENDIT_KEYS.secret_key })
      .expect(303);
    expect((await testKnex()('carrier_accounts').where({ id: accountId }).first()).state).to.equal('working');
    const ids = [await confirmedOrder(shop), await confirmedOrder(shop, { phone: '0661234569' })];
    await shop.agent.post('/api/shipments').send({ accountId, orderIds: ids }).expect(202);
    await sendQueued(services, shop);
    const labels = await shop.agent
      .get(`/orders/labels.pdf?ids=${ids.join('&ids=')}`)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect((await PDFDocument.load(labels.body as Buffer)).getPageCount()).to.equal(2);
  });
});

describe('shipping: a carrier without a push is asked, every 30 minutes at most', function () {
  this.timeout(60_000);
  it('Digylog: a parcel due is asked its status and the news written; one not due, or changed over 30 days ago, is not asked', async () => {
    const digylog = await digylogDouble();
    try {
      const env = { DIGYLOG_API_ORIGIN: digylog.url };
      const app = testApp(env);
      const services = createServices(testKnex(), loadConfig({ ...TEST_ENV, ...env }), new Jobs(testKnex()));
      const shop = await signUp({ target: app });
      const accountId = (await shop.agent.post('/api/carrier-accounts').send({ kind: 'digylog', name: 'Digylog', credentials: DIGYLOG_KEYS }).expect(201)).body
        .id;
      const [due, later, stale] = [
        await confirmedOrder(shop, { city: 'Fès' }),
        await confirmedOrder(shop, { city: 'Fès', phone: '0661234568' }),
        await confirmedOrder(shop, { city: 'Fès', phone: '0661234569' }),
      ];
      await shop.agent
        .post('/api/shipments')
        .send({ accountId, orderIds: [due, later, stale] })
        .expect(202);
      expect(await sendQueued(services, shop)).to.deep.equal(['sent', 'sent', 'sent']);
      const parcels = await testKnex()('parcels').where({ account_id: accountId }).select('id', 'order_id', 'tracking', 'next_poll_at');
      // Made just now: each asked again in 30 minutes, not before.
      for (const p of parcels) expect(new Date(p.next_poll_at).getTime()).to.be.greaterThan(Date.now() + 25 * 60_000);
      for (const p of parcels) digylog.parcels.get(p.tracking)!.status = 'Livré';
      const byOrder = (id: string) => parcels.find((p) => p.order_id === id)!;
      await testKnex()('parcels')
        .where({ id: byOrder(due).id })
        .update({ next_poll_at: new Date(Date.now() - 60_000) });
      // The double dates its news 2026-11-27 15:02: the order's own news must be older for it to apply.
      await testKnex()('orders')
        .where({ id: due })
        .update({ delivery_at: new Date('2026-11-20T10:00:00Z'), delivery_carrier_status_at: null });
      await testKnex()('parcels')
        .where({ id: byOrder(stale).id })
        .update({ next_poll_at: new Date(Date.now() - 60_000), last_news_at: new Date(Date.now() - 31 * 86_400_000) });
      const asked = digylog.requests.length;
      expect(await services.carrierNews.poll()).to.equal(1);
      expect(digylog.requests.slice(asked).filter((r) => r.path.endsWith('/infos'))).to.have.length(1);
      expect((await orderRow(due)).delivery_status).to.equal('delivered');
      expect((await orderRow(later)).delivery_status).to.equal('shipped');
      expect((await orderRow(stale)).delivery_status).to.equal('shipped');
      expect(
        await testKnex()('parcels')
          .where({ id: byOrder(stale).id })
          .first(),
      ).to.include({ next_poll_at: null });
      // Delivered is final: no more questions.
      expect(
        await testKnex()('parcels')
          .where({ id: byOrder(due).id })
          .first(),
      ).to.include({ next_poll_at: null });
    } finally {
      await digylog.close();
    }
  });
});
