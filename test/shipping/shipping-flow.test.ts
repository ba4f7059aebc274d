import { expect } from 'chai';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import type { Services } from '../../services';
import { hexSigned, ozonDouble, OZON_KEYS, senditDouble, SENDIT_KEYS, yalidineDouble, YALIDINE_KEYS } from '../helpers/carrier-doubles';
import { memberOf, signUp, TEST_ENV, testApp } from '../helpers/app';
import type { SignedIn } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { confirmedOrder, sendQueued } from '../helpers/shipping';
import { orderRow } from '../helpers/loop';
import request from 'supertest';

type Sendit = Awaited<ReturnType<typeof senditDouble>>;

/** The web app and the worker's services, both pointed at the carriers' doubles. */
function pointedAt(env: Record<string, string>) {
  const all = { ...TEST_ENV, ...env };
  return { app: testApp(env), services: createServices(testKnex(), loadConfig(all), new Jobs(testKnex())) };
}

/** A shop with a Yalidine account at the double (its pickup in Alger), the web app and the worker's services. */
async function yalidineShop(yalidine: { url: string }, env: Record<string, string> = {}) {
  const { app, services } = pointedAt({ YALIDINE_API_ORIGIN: yalidine.url, ...env });
  const shop = await signUp({ target: app });
  const created = await shop.agent
    .post('/api/carrier-accounts')
    .send({ kind: 'yalidine', name: 'Yalidine', credentials: YALIDINE_KEYS, pickup_city_id: '1601|Alger' })
    .expect(201);
  return { app, services, shop, accountId: created.body.id as string };
}

describe('shipping: confirmed orders become parcels at the carrier', function () {
  this.timeout(60_000);
  let sendit: Sendit;
  let app: ReturnType<typeof testApp>;
  let services: Services;
  let shop: SignedIn;
  let accountId: string;

  before(async () => {
    sendit = await senditDouble();
    ({ app, services } = pointedAt({ SENDIT_API_ORIGIN: sendit.url, DELIVERY_TIMEOUT_SECONDS: '1' }));
    shop = await signUp({ target: app });
  });
  after(() => sendit.close());

  it('an account is checked at the carrier first: wrong keys are a 400 naming the field, with the carrier’s words', async () => {
    sendit.switches.wrongCredentials = true;
    const refused = await shop.agent
      .post('/api/carrier-accounts')
      .send({ kind: 'sendit', name: 'Sendit Casa', credentials: SENDIT_KEYS, pickup_city_id: '1' })
      .expect(400);
    sendit.switches.wrongCredentials = false;
    expect(refused.body.error).to.be.a('string');
    expect(JSON.stringify(refused.body.details ?? refused.body)).to.match(/credentials\.(public_key|secret_key)/);
    expect(await testKnex()('carrier_accounts').where({ workspace_id: shop.workspaceId })).to.have.length(0);
  });

  it('a working account keeps its city list, never shows its keys, and stores them sealed', async () => {
    const created = await shop.agent
      .post('/api/carrier-accounts')
      .send({ kind: 'sendit', name: 'Sendit Casa', credentials: SENDIT_KEYS, pickup_city_id: '1' })
      .expect(201);
    accountId = created.body.id;
    expect(created.body).to.include({ kind: 'sendit', title: 'Sendit', name: 'Sendit Casa', state: 'working', cities: 7, allow_open: true, auto_ship: false });
    expect(created.body.push_url).to.equal(`http://127.0.0.1:3000/hooks/carrier-accounts/${accountId}`);
    const listed = await shop.agent.get('/api/carrier-accounts').expect(200);
    for (const text of [JSON.stringify(created.body), JSON.stringify(listed.body)]) {
      expect(text).to.not.include(SENDIT_KEYS.secret_key);
      expect(text).to.not.include(SENDIT_KEYS.public_key);
    }
    const row = await testKnex()('carrier_accounts').where({ id: accountId }).first();
    expect(row.credentials).to.not.include(SENDIT_KEYS.secret_key);
    expect(await testKnex()('carrier_cities').where({ account_id: accountId })).to.have.length(7);
  });

  it('every member reads the accounts; only the owner adds one; another workspace’s account is 404', async () => {
    const member = await memberOf(shop);
    await member.agent.get('/api/carrier-accounts').expect(200);
    await member.agent.post('/api/carrier-accounts').send({ kind: 'sendit', name: 'x', credentials: SENDIT_KEYS, pickup_city_id: '1' }).expect(403);
    const own = await member.agent.get(`/api/carrier-accounts/${accountId}`).expect(200);
    expect(own.body).to.not.have.property('push_url');
    const stranger = await signUp({ target: app });
    await stranger.agent.get(`/api/carrier-accounts/${accountId}`).expect(404);
    await stranger.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [await confirmedOrder(stranger)] })
      .expect(404);
  });

  it('one tap ships the confirmed orders: matched cities are queued, the others wait for a person or an amount', async () => {
    const casa = await confirmedOrder(shop, { city: 'الدار البيضاء' });
    const fes = await confirmedOrder(shop, { city: 'Fès' });
    const medina = await confirmedOrder(shop, { city: 'Fes Medina' });
    const noAmount = await confirmedOrder(shop, { totalAmount: null, city: 'Rabat' });
    const { body } = await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [casa, fes, medina, noAmount] })
      .expect(202);
    const before = await shop.agent.get(`/api/shipments/${body.shipment_id}`).expect(200);
    const state = (id: string, view = before.body) => view.parcels.find((p: { order_id: string }) => p.order_id === id);
    expect([state(casa).state, state(fes).state, state(medina).state, state(noAmount).state]).to.deep.equal(['queued', 'queued', 'needs_city', 'needs_amount']);
    expect([state(casa).city_id, state(fes).city_id]).to.deep.equal(['1', '3']);

    expect(await sendQueued(services, shop)).to.deep.equal(['sent', 'sent']);
    const after = await shop.agent.get(`/api/shipments/${body.shipment_id}`).expect(200);
    expect(after.body.counts).to.include({ sent: 2, needs_city: 1, needs_amount: 1, queued: 0 });
    const tracking = state(casa, after.body).tracking_number;
    expect(tracking).to.match(/^SD\d+$/);
    // What the carrier received: the spec's body, the phone in ten digits, the amount in whole dirhams.
    const made = sendit.parcels.get(tracking)!;
    expect(made.sent).to.deep.include({ district_id: 1, pickup_district_id: 1, phone: '0612345678', amount: 249, name: 'Amina Benali', reference: casa });
    // The delivery, written the one way delivery news is written.
    const order = await orderRow(casa);
    expect(order).to.include({ delivery_status: 'shipped', delivery_carrier: 'Sendit', delivery_tracking_number: tracking });
    const events = await testKnex()('delivery_events').where({ order_id: casa });
    expect(events.map((e) => [e.status, e.source, e.by])).to.deep.equal([['shipped', 'carrier', 'Sendit Casa']]);
    const api = await shop.agent.get(`/api/orders/${casa}`).expect(200);
    expect(api.body.delivery).to.include({ status: 'shipped', tracking_number: tracking });

    // The person's choice for "Fes Medina" sends it, and is remembered for the next order written so.
    await shop.agent
      .post(`/api/shipments/${body.shipment_id}/cities`)
      .send({ cities: { [medina]: '3' } })
      .expect(200);
    expect(await sendQueued(services, shop)).to.deep.equal(['sent']);
    // The order without an amount gets the cash to collect on the same page (the parcel's; the confirmed order is not edited).
    const bad = await shop.agent
      .post(`/api/shipments/${body.shipment_id}/cities`)
      .send({ amounts: { [noAmount]: 'deux cents' } })
      .expect(400);
    expect(bad.body.fields).to.have.property(`amount_${noAmount}`);
    expect((await orderRow(noAmount)).total_amount).to.equal(null);
    await shop.agent
      .post(`/api/shipments/${body.shipment_id}/cities`)
      .send({ amounts: { [noAmount]: '199,50' } })
      .expect(200);
    expect((await orderRow(noAmount)).total_amount).to.equal(null);
    expect(Number((await testKnex()('parcels').where({ order_id: noAmount }).first()).cod_amount)).to.equal(199.5);
    expect(await sendQueued(services, shop)).to.deep.equal(['sent']);
    expect(sendit.byReference(noAmount)?.sent).to.deep.include({ amount: 200, district_id: 2 });
    const next = await confirmedOrder(shop, { city: 'FES médina' });
    const again = await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [next] })
      .expect(202);
    const view = await shop.agent.get(`/api/shipments/${again.body.shipment_id}`).expect(200);
    expect(view.body.parcels[0]).to.include({ state: 'queued', city_id: '3' });
    await sendQueued(services, shop);
  });

  it('an order has one parcel: shipping it again is a 409 naming its tracking number; 20 parallel ships of 50 orders make 50 parcels', async () => {
    const once = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [once] })
      .expect(202);
    await sendQueued(services, shop);
    const { delivery_tracking_number } = await orderRow(once);
    const twice = await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [once] })
      .expect(409);
    expect(twice.body.error).to.include(delivery_tracking_number);

    const ids: string[] = [];
    for (let i = 0; i < 50; i += 1) ids.push(await confirmedOrder(shop, { phone: `06${String(10000000 + i)}` }));
    const made = sendit.parcels.size;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => request(app).post('/api/shipments').set('Cookie', shop.cookie).send({ accountId, orderIds: ids })),
    );
    expect(answers.map((a) => a.status).sort()).to.deep.equal([202, ...Array(19).fill(409)]);
    expect(await testKnex()('parcels').whereIn('order_id', ids)).to.have.length(50);
    await sendQueued(services, shop);
    expect(sendit.parcels.size - made).to.equal(50);
  });

  it('a lost answer never makes a second parcel: Sendit cannot be asked by our reference, so the order is uncertain and a person decides', async () => {
    const id = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    const parcelId = (await testKnex()('parcels').where({ order_id: id }).first('id')).id;
    const made = sendit.parcels.size;
    sendit.switches.loseCreateAnswer = true;
    expect(await services.parcels.send(parcelId)).to.equal('retry');
    sendit.switches.loseCreateAnswer = false;
    expect(await testKnex()('parcels').where({ id: parcelId }).first()).to.include({ state: 'queued', answer_lost: true });
    expect(sendit.parcels.size).to.equal(made + 1);
    expect(await services.parcels.send(parcelId)).to.equal('uncertain');
    expect(sendit.parcels.size).to.equal(made + 1);
    expect((await orderRow(id)).delivery_status).to.equal(null);
    // The person reads the tracking number in Sendit's portal: the parcel is the one that was made.
    const tracking = [...sendit.parcels.values()].find((p) => p.reference === id)!.tracking;
    await shop.agent.post(`/api/orders/${id}/parcel`).send({ action: 'created' }).expect(400);
    await shop.agent.post(`/api/orders/${id}/parcel`).send({ action: 'created', tracking }).expect(200, { state: 'sent' });
    expect(await orderRow(id)).to.include({ delivery_status: 'shipped', delivery_tracking_number: tracking });
    expect(await testKnex()('parcels').where({ id: parcelId }).first()).to.include({ state: 'sent', tracking });
    await shop.agent.post(`/api/orders/${id}/parcel`).send({ action: 'send_again' }).expect(404);
  });

  it('the carrier’s push is verified and written as delivery news; an unknown word changes the carrier’s words only and is counted', async () => {
    const id = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    await sendQueued(services, shop);
    const { delivery_tracking_number: code } = await orderRow(id);
    const push = (body: unknown, secret = SENDIT_KEYS.secret_key) => {
      const { raw, signature } = hexSigned(body, secret);
      return request(app)
        .post(`/hooks/carrier-accounts/${accountId}`)
        .set('content-type', 'application/json')
        .set('x-sendit-signature', signature)
        .send(raw.toString('utf8'));
    };
    const event = (newStatus: string) => ({
      event: 'delivery.status.update',
      data: { code, oldStatus: 'PENDING', newStatus, lastActionAt: new Date().toISOString(), message: '' },
    });
    await push(event('DELIVERED'), 'not-the-secret').expect(401);
    expect((await orderRow(id)).delivery_status).to.equal('shipped');
    await push(event('DISTRIBUTED')).expect(200);
    expect((await orderRow(id)).delivery_status).to.equal('out_for_delivery');
    await push(event('EN_ATTENTE_DOUANE')).expect(200);
    const unknown = await orderRow(id);
    expect(unknown).to.include({ delivery_status: 'out_for_delivery', delivery_carrier_status: 'EN_ATTENTE_DOUANE' });
    const account = await shop.agent.get(`/api/carrier-accounts/${accountId}`).expect(200);
    expect(account.body.unknown_words).to.deep.equal({ EN_ATTENTE_DOUANE: 1 });
    await push(event('DELIVERED')).expect(200);
    expect((await orderRow(id)).delivery_status).to.equal('delivered');
    await request(app).post('/hooks/carrier-accounts/00000000-0000-4000-8000-000000000000').send({}).expect(404);
  });

  it('credentials the carrier refuses stop the account; nothing is lost, the parcel waits', async () => {
    const id = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    sendit.expireTokens();
    sendit.switches.wrongCredentials = true;
    expect(await sendQueued(services, shop)).to.deep.equal(['waiting_for_credentials']);
    sendit.switches.wrongCredentials = false;
    const account = await shop.agent.get(`/api/carrier-accounts/${accountId}`).expect(200);
    expect(account.body.state).to.equal('credentials_refused');
    expect(await testKnex()('parcels').where({ order_id: id }).first()).to.include({ state: 'queued' });
    // The owner enters them again: the account works, and the parcel goes.
    await shop.agent.put(`/api/carrier-accounts/${accountId}`).send({ credentials: SENDIT_KEYS }).expect(200);
    expect(await sendQueued(services, shop)).to.deep.equal(['sent']);
  });
  it('auto-ship: an order confirmed by anyone is shipped by itself, once; a declined or deleted order’s parcel is cancelled at the carrier', async () => {
    await shop.agent.put(`/api/carrier-accounts/${accountId}`).send({ auto_ship: true }).expect(200);
    const id = await confirmedOrder(shop);
    expect(await testKnex()('auto_ship_orders').where({ order_id: id })).to.have.length(1);
    expect(await services.autoShipping.run()).to.deep.include({ shipped: 1 });
    expect(await sendQueued(services, shop)).to.deep.equal(['sent']);
    const { delivery_tracking_number: tracking } = await orderRow(id);
    expect(tracking).to.match(/^SD/);

    // Declined after its parcel was made: cancelled at Sendit while it still allows it.
    await shop.agent.put(`/api/orders/${id}`).send({ status: 'unconfirmed' }).expect(200);
    expect(await services.autoShipping.run()).to.deep.include({ cancelled: 1 });
    expect(await testKnex()('parcels').where({ order_id: id }).first()).to.include({ state: 'cancelled', cancel_at_carrier: false });
    expect(sendit.parcels.get(tracking)!.status).to.equal('CANCELED');
    // Confirmed again: not shipped a second time by itself.
    await shop.agent.put(`/api/orders/${id}`).send({ status: 'confirmed' }).expect(200);
    expect(await services.autoShipping.run()).to.deep.equal({ shipped: 0, cancelled: 0 });

    // A parcel already picked up cannot be cancelled through the API: the order says to cancel it at the carrier.
    const picked = await confirmedOrder(shop);
    await services.autoShipping.run();
    await sendQueued(services, shop);
    const pickedTracking = (await orderRow(picked)).delivery_tracking_number;

    sendit.parcels.get(pickedTracking)!.status = 'PICKEDUP';
    await shop.agent.delete(`/api/orders/${picked}`).expect(204);
    await services.autoShipping.run();
    const kept = await testKnex()('parcels').where({ tracking: pickedTracking, account_id: accountId }).first();
    expect(kept).to.include({ state: 'sent', cancel_at_carrier: true, order_id: null });
    expect(kept.reason).to.be.a('string');
    await shop.agent.put(`/api/carrier-accounts/${accountId}`).send({ auto_ship: false }).expect(200);
  });
});

describe('shipping: a carrier that can be asked by our reference', function () {
  this.timeout(30_000);
  it('Yalidine: the parcel whose answer was lost is found by its order_id on the next try; one parcel at the carrier', async () => {
    const yalidine = await yalidineDouble();
    try {
      const { services, shop, accountId } = await yalidineShop(yalidine, { DELIVERY_TIMEOUT_SECONDS: '1' });
      const id = await confirmedOrder(shop, { city: 'Oran' });
      await shop.agent
        .post('/api/shipments')
        .send({ accountId, orderIds: [id] })
        .expect(202);
      const parcelId = (await testKnex()('parcels').where({ order_id: id }).first('id')).id;
      yalidine.switches.loseCreateAnswer = true;
      expect(await services.parcels.send(parcelId)).to.equal('retry');
      yalidine.switches.loseCreateAnswer = false;
      expect(yalidine.parcels.size).to.equal(1);
      expect(await services.parcels.send(parcelId)).to.equal('found');
      expect(yalidine.parcels.size).to.equal(1);
      const tracking = [...yalidine.parcels.keys()][0];
      expect(await orderRow(id)).to.include({ delivery_status: 'shipped', delivery_carrier: 'Yalidine', delivery_tracking_number: tracking });
    } finally {
      await yalidine.close();
    }
  });
});

describe('shipping: the carrier’s limits and silences', function () {
  this.timeout(60_000);

  it('Yalidine’s quota used up: the parcel waits, queued, for the next window (a job scheduled then), never sent into a 429', async () => {
    const yalidine = await yalidineDouble({ limits: { minute: 6 } });
    try {
      const { services, shop, accountId } = await yalidineShop(yalidine);
      const ids: string[] = [];
      for (let i = 0; i < 6; i += 1) ids.push(await confirmedOrder(shop, { city: 'Oran', phone: `06${String(20000000 + i)}` }));
      await shop.agent.post('/api/shipments').send({ accountId, orderIds: ids }).expect(202);
      const results = await sendQueued(services, shop);
      expect(results).to.include('sent').and.include('throttled');
      const waiting = await testKnex()('parcels').where({ workspace_id: shop.workspaceId, state: 'queued' }).pluck('id');
      expect(waiting.length).to.be.at.least(1);
      const jobs = await testKnex()('pgboss.job')
        .where({ name: 'ship-parcel' })
        .whereRaw("data->>'parcelId' = ?", [waiting[0]])
        .orderBy('created_on', 'desc')
        .select('start_after', 'created_on');
      // Not before the window the headers named (a second's, or the minute's when it is used up).
      expect(new Date(jobs[0].start_after).getTime() - new Date(jobs[0].created_on).getTime()).to.be.at.least(900);
      expect(yalidine.requests.filter((r) => r.method === 'POST')).to.have.length(results.filter((r) => r === 'sent').length);
    } finally {
      await yalidine.close();
    }
  });

  it('a carrier that does not answer for an hour: the parcel fails with "the carrier did not answer", the account says since when, and the order can be shipped again', async () => {
    const sendit = await senditDouble();
    const { app, services } = pointedAt({ SENDIT_API_ORIGIN: sendit.url });
    const shop = await signUp({ target: app });
    const created = await shop.agent
      .post('/api/carrier-accounts')
      .send({ kind: 'sendit', name: 'Sendit', credentials: SENDIT_KEYS, pickup_city_id: '1' })
      .expect(201);
    const id = await confirmedOrder(shop);
    await shop.agent
      .post('/api/shipments')
      .send({ accountId: created.body.id, orderIds: [id] })
      .expect(202);
    // The carrier is down: every connection is refused, so nothing can have been made there.
    await sendit.close();
    expect(await sendQueued(services, shop)).to.deep.equal(['retry']);
    const parcel = await testKnex()('parcels').where({ order_id: id }).first();
    expect(parcel).to.include({ state: 'queued', answer_lost: false });
    // An hour of tries later (its first try moved back, not waited for):
    await testKnex()('parcels')
      .where({ id: parcel.id })
      .update({ first_try_at: new Date(Date.now() - 61 * 60_000) });
    expect(await sendQueued(services, shop)).to.deep.equal(['failed']);
    expect(await testKnex()('parcels').where({ id: parcel.id }).first()).to.include({ state: 'failed', reason: 'The carrier did not answer' });
    const account = await shop.agent.get(`/api/carrier-accounts/${created.body.id}`).expect(200);
    expect(account.body.state).to.equal('unreachable');
    expect(account.body.state_since).to.be.a('string');
    // The order stays confirmed without a delivery, and can be shipped again.
    expect(await orderRow(id)).to.include({ status: 'confirmed', delivery_status: null });
    await shop.agent
      .post('/api/shipments')
      .send({ accountId: created.body.id, orderIds: [id] })
      .expect(202);
  });

  it('a carrier that answers 5xx may have made the parcel: after the hour it is uncertain, for a person, never sent twice', async () => {
    const yalidine = await yalidineDouble();
    try {
      const { services, shop, accountId } = await yalidineShop(yalidine);
      const id = await confirmedOrder(shop, { city: 'Oran' });
      await shop.agent
        .post('/api/shipments')
        .send({ accountId, orderIds: [id] })
        .expect(202);
      yalidine.switches.serverError = true;
      expect(await sendQueued(services, shop)).to.deep.equal(['retry']);
      // Its look-up is not answered either: asked again later, not decided.
      expect(await sendQueued(services, shop)).to.deep.equal(['retry']);
      await testKnex()('parcels')
        .where({ order_id: id })
        .update({ first_try_at: new Date(Date.now() - 61 * 60_000) });
      expect(await sendQueued(services, shop)).to.deep.equal(['uncertain']);
      expect(yalidine.requests.filter((r) => r.method === 'POST')).to.have.length(1);
    } finally {
      await yalidine.close();
    }
  });
});

describe('shipping: a carrier that does not sign pushes to a URL with a long random token', function () {
  this.timeout(30_000);
  it('Ozon Express: the token of the URL is the proof; a wrong one is 401 and the request log never shows it', async () => {
    const ozon = await ozonDouble();
    try {
      const { app, services } = pointedAt({ OZON_API_ORIGIN: ozon.url });
      const shop = await signUp({ target: app });
      const created = await shop.agent.post('/api/carrier-accounts').send({ kind: 'ozon_express', name: 'Ozon', credentials: OZON_KEYS }).expect(201);
      const pushUrl = new URL(created.body.push_url);
      expect(pushUrl.pathname).to.match(new RegExp(`^/hooks/carrier-accounts/${created.body.id}/[A-Za-z0-9_-]{43}$`));
      const order = await confirmedOrder(shop, { city: 'Casablanca' });
      const shipped = await shop.agent
        .post('/api/shipments')
        .send({ accountId: created.body.id, orderIds: [order] })
        .expect(202);
      const view = await shop.agent.get(`/api/shipments/${shipped.body.shipment_id}`).expect(200);
      if (view.body.parcels[0].state === 'needs_city') {
        const city = (await testKnex()('carrier_cities').where({ account_id: created.body.id }).first('city_id')).city_id;
        await shop.agent
          .post(`/api/shipments/${shipped.body.shipment_id}/cities`)
          .send({ cities: { [order]: city } })
          .expect(200);
      }
      expect(await sendQueued(services, shop)).to.deep.equal(['sent']);
      const { delivery_tracking_number } = await orderRow(order);
      const news = { 'TRACKING-NUMBER': delivery_tracking_number, orderStatus: 'DELIVERED', situation: 'Livré', note: '' };
      await request(app).post(`/hooks/carrier-accounts/${created.body.id}/wrong-token`).send(news).expect(401);
      await request(app).post(`/hooks/carrier-accounts/${created.body.id}`).send(news).expect(401);
      await request(app).post(pushUrl.pathname).send(news).expect(200);
      expect((await orderRow(order)).delivery_status).to.equal('delivered');
    } finally {
      await ozon.close();
    }
  });
});
