import { expect } from 'chai';
import { PDFDocument } from 'pdf-lib';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import type { Services } from '../../services';
import { ozonDouble, OZON_KEYS, senditDouble, SENDIT_KEYS } from '../helpers/carrier-doubles';
import { csrfFrom, memberOf, signUp, TEST_ENV, testApp } from '../helpers/app';
import type { SignedIn } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { confirmedOrder as confirmed, sendQueued } from '../helpers/shipping';
import { orderRow } from '../helpers/loop';

type Sendit = Awaited<ReturnType<typeof senditDouble>>;

/** This file's orders: the shared helper's, with Khadija Alaoui's tajine to Fès. */
const confirmedOrder = (shop: SignedIn, fields: Record<string, unknown> = {}) =>
  confirmed(shop, {
    clientName: 'Khadija Alaoui',
    phone: '0661234567',
    productsName: 'Tajine',
    totalAmount: '180.00',
    city: 'Fès',
    address: 'Derb 3',
    ...fields,
  });

describe('shipping pages: the accounts, the ship page and a shipment, without JavaScript', function () {
  this.timeout(60_000);
  let sendit: Sendit;
  let ozon: Awaited<ReturnType<typeof ozonDouble>>;
  let app: ReturnType<typeof testApp>;
  let services: Services;
  let shop: SignedIn;

  before(async () => {
    [sendit, ozon] = await Promise.all([senditDouble(), ozonDouble()]);
    const env = { SENDIT_API_ORIGIN: sendit.url, OZON_API_ORIGIN: ozon.url };
    app = testApp(env);
    services = createServices(testKnex(), loadConfig({ ...TEST_ENV, ...env }), new Jobs(testKnex()));
    shop = await signUp({ target: app });
  });
  after(async () => {
    await sendit.close();
    await ozon.close();
  });

  it('the owner adds an account from its form: refused keys re-render the form with the carrier’s words beside the field, nothing typed secret echoed', async () => {
    const page = await shop.agent.get('/deliveries/carriers?kind=sendit').expect(200);
    expect(page.text).to.include('name="credential_public_key"').and.include('name="credential_secret_key"').and.include('name="pickup_city_id"');
    for (const kind of ['sendit', 'ozon_express', 'digylog', 'yalidine']) expect(page.text).to.include(`/deliveries/carriers?kind=${kind}`);
    sendit.switches.wrongCredentials = true;
    const refused = await shop.agent
      .post('/deliveries/carriers/accounts')
      .type('form')
      .send({
        _csrf: csrfFrom(page.text),
        kind: 'sendit',
        name: 'Sendit Fès',
        credential_public_key: SENDIT_KEYS.public_key,
        credential_secret_key: 'typed-secret-9f',
        pickup_city_id: '3',
      })
      .expect(400);
    sendit.switches.wrongCredentials = false;
    expect(refused.text).to.include('f-credential_secret_key-error').and.include('value="Sendit Fès"');
    expect(refused.text).to.not.include('typed-secret-9f');
    expect(await testKnex()('carrier_accounts').where({ workspace_id: shop.workspaceId })).to.have.length(0);

    const added = await shop.agent
      .post('/deliveries/carriers/accounts')
      .type('form')
      .send({
        _csrf: csrfFrom(page.text),
        kind: 'sendit',
        name: 'Sendit Fès',
        ...Object.fromEntries(Object.entries(SENDIT_KEYS).map(([k, v]) => [`credential_${k}`, v])),
        pickup_city_id: '3',
      })
      .expect(303);
    expect(added.headers.location).to.equal('/deliveries/carriers');
    const listed = await shop.agent.get('/deliveries/carriers').expect(200);
    expect(listed.text).to.include('Sendit Fès').and.include('/hooks/carrier-accounts/');
    expect(listed.text).to.not.include(SENDIT_KEYS.secret_key);
    const row = await testKnex()('carrier_accounts').where({ workspace_id: shop.workspaceId }).first();
    expect(row).to.include({ kind: 'sendit', name: 'Sendit Fès', pickup_city_id: '3', allow_open: false, auto_ship: false });
  });

  it('a pickup city the carrier does not list is refused, naming it', async () => {
    const page = await shop.agent.get('/deliveries/carriers?kind=sendit').expect(200);
    const refused = await shop.agent
      .post('/deliveries/carriers/accounts')
      .type('form')
      .send({
        _csrf: csrfFrom(page.text),
        kind: 'sendit',
        name: 'Sendit 2',
        ...Object.fromEntries(Object.entries(SENDIT_KEYS).map(([k, v]) => [`credential_${k}`, v])),
        pickup_city_id: 'Fes Medina',
      })
      .expect(400);
    expect(refused.text).to.include('f-pickup_city_id-error').and.include('Fes Medina');
    expect(await testKnex()('carrier_accounts').where({ workspace_id: shop.workspaceId })).to.have.length(1);
  });

  it('a member sees the accounts but no form, and no push URL', async () => {
    const member = await memberOf(shop);
    const page = await member.agent.get('/deliveries/carriers').expect(200);
    expect(page.text).to.include('Sendit Fès').and.not.include('name="credential_');
    expect(page.text).to.not.include('/hooks/carrier-accounts/');
  });

  it('the ship page preselects the confirmed orders; one button makes the shipment; its page refreshes until done, then prints the labels in one PDF', async () => {
    const fes = await confirmedOrder(shop);
    const rabat = await confirmedOrder(shop, { city: 'الرباط', clientName: 'Youssef Tazi' });
    const medina = await confirmedOrder(shop, { city: 'Fes Jdid', clientName: 'Sara Idrissi' });
    const page = await shop.agent.get('/orders/ship').expect(200);
    for (const id of [fes, rabat, medina]) expect(page.text).to.match(new RegExp(`value="${id}" id="o-${id}" checked`));
    const accountId = (await testKnex()('carrier_accounts').where({ workspace_id: shop.workspaceId }).first('id')).id;
    const shipped = await shop.agent
      .post('/orders/ship')
      .type('form')
      .send(`_csrf=${encodeURIComponent(csrfFrom(page.text))}&accountId=${accountId}&orderIds=${fes}&orderIds=${rabat}&orderIds=${medina}`)
      .expect(303);
    const shipmentPath = shipped.headers.location as string;
    expect(shipmentPath).to.match(/^\/shipments\/[0-9a-f-]{36}$/);
    const waiting = await shop.agent.get(shipmentPath).expect(200);
    expect(waiting.text).to.include('http-equiv="refresh"').and.include(`name="city_${medina}"`);
    await sendQueued(services, shop);
    // The person chooses Fès for "Fes Jdid" on the same page.
    await shop.agent
      .post(`${shipmentPath}/cities`)
      .type('form')
      .send({ _csrf: csrfFrom(waiting.text), [`city_${medina}`]: '3' })
      .expect(303);
    await sendQueued(services, shop);
    const done = await shop.agent.get(shipmentPath).expect(200);
    expect(done.text).to.not.include('http-equiv="refresh"');
    for (const id of [fes, rabat, medina]) expect(done.text).to.include((await orderRow(id)).delivery_tracking_number);
    const labels = await shop.agent
      .get(`${shipmentPath}/labels.pdf`)
      .buffer(true)
      .parse((res, callback) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => callback(null, Buffer.concat(chunks)));
      });
    expect(labels.status).to.equal(200);
    expect(labels.headers['content-type']).to.equal('application/pdf');
    expect((await PDFDocument.load(labels.body as Buffer)).getPageCount()).to.equal(3);
    const api = await shop.agent.get(`/api${shipmentPath}/labels.pdf`).expect(200);
    expect(api.headers['x-labels-missing']).to.equal('0');
  });

  it('the order page shows its parcel; an uncertain one is decided there by a person', async () => {
    const id = await confirmedOrder(shop, { city: 'Casablanca' });
    const accountId = (await testKnex()('carrier_accounts').where({ workspace_id: shop.workspaceId }).first('id')).id;
    await shop.agent
      .post('/api/shipments')
      .send({ accountId, orderIds: [id] })
      .expect(202);
    await testKnex()('parcels').where({ order_id: id }).update({ state: 'uncertain', reason: 'Sendit cannot be asked by our reference' });
    const page = await shop.agent.get(`/orders/${id}`).expect(200);
    expect(page.text).to.include('id="parcel-heading"').and.include(`action="/orders/${id}/parcel"`).and.include('Sendit cannot be asked by our reference');
    const missing = await shop.agent
      .post(`/orders/${id}/parcel`)
      .type('form')
      .send({ _csrf: csrfFrom(page.text), action: 'created', tracking: '' })
      .expect(303);
    expect(missing.headers.location).to.equal(`/orders/${id}`);
    expect((await orderRow(id)).delivery_status).to.equal(null);
    await shop.agent
      .post(`/orders/${id}/parcel`)
      .type('form')
      .send({ _csrf: csrfFrom(page.text), action: 'created', tracking: 'SD777777' })
      .expect(303);
    expect(await orderRow(id)).to.include({ delivery_status: 'shipped', delivery_tracking_number: 'SD777777' });
    const shown = await shop.agent.get(`/orders/${id}`).expect(200);
    expect(shown.text).to.include('SD777777').and.not.include('name="action" value="created"');
  });

  it('/orders filters by shipping: confirmed not shipped (with "Ship"), shipping failed, needs a city', async () => {
    const owner = await signUp({ target: app });
    const created = await owner.agent
      .post('/api/carrier-accounts')
      .send({ kind: 'sendit', name: 'Sendit', credentials: SENDIT_KEYS, pickup_city_id: '1' })
      .expect(201);
    const waiting = await confirmedOrder(owner, { clientName: 'Attend Expedition' });
    const medina = await confirmedOrder(owner, { clientName: 'Ville Inconnue', city: 'Fes Medina' });
    const refused = await confirmedOrder(owner, { clientName: 'Refus Transporteur', city: 'Casablanca' });
    await owner.agent
      .post('/api/shipments')
      .send({ accountId: created.body.id, orderIds: [medina, refused] })
      .expect(202);
    await testKnex()('parcels').where({ order_id: refused }).update({ state: 'failed', reason: 'Le numéro de téléphone est invalide.' });
    const names = async (delivery: string) => {
      const { body } = await owner.agent.get(`/api/orders?delivery=${delivery}`).expect(200);
      return (body.orders as Array<{ client_name: string }>).map((o) => o.client_name).sort();
    };
    expect(await names('unshipped')).to.deep.equal(['Attend Expedition', 'Refus Transporteur', 'Ville Inconnue']);
    expect(await names('ship_failed')).to.deep.equal(['Refus Transporteur']);
    expect(await names('needs_city')).to.deep.equal(['Ville Inconnue']);
    const page = await owner.agent.get('/orders?delivery=unshipped').expect(200);
    expect(page.text).to.include('href="/orders/ship"').and.include('Attend Expedition');
    expect((await owner.agent.get('/orders?delivery=needs_city').expect(200)).text)
      .to.include('Ville Inconnue')
      .and.not.include('Attend Expedition');
    expect(waiting).to.be.a('string');
  });

  it('a bad ship (no order ticked, an unconfirmed order) re-renders the page with the reason; nothing is queued', async () => {
    const page = await shop.agent.get('/orders/ship').expect(200);
    const accountId = (await testKnex()('carrier_accounts').where({ workspace_id: shop.workspaceId }).first('id')).id;
    const before = (await testKnex()('parcels').where({ workspace_id: shop.workspaceId })).length;
    const none = await shop.agent
      .post('/orders/ship')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), accountId })
      .expect(400);
    expect(none.text).to.include('role="alert"');
    const { body } = await shop.agent
      .post('/api/orders')
      .send({ clientName: 'Pending', phone: '0661234568', storeName: 'Atlas Shop', productsName: 'Tajine' })
      .expect(201);
    const pending = await shop.agent
      .post('/orders/ship')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), accountId, orderIds: body.id })
      .expect(400);
    expect(pending.text).to.include('role="alert"');
    expect(await testKnex()('parcels').where({ workspace_id: shop.workspaceId })).to.have.length(before);
  });

  it('labels: a carrier that gives none is named as missing', async () => {
    const owner = await signUp({ target: app });
    const created = await owner.agent.post('/api/carrier-accounts').send({ kind: 'ozon_express', name: 'Ozon', credentials: OZON_KEYS }).expect(201);
    const city = (await testKnex()('carrier_cities').where({ account_id: created.body.id }).first('city_id', 'name')) as { city_id: string; name: string };
    const id = await confirmedOrder(owner, { city: city.name });
    const shipped = await owner.agent
      .post('/api/shipments')
      .send({ accountId: created.body.id, orderIds: [id] })
      .expect(202);
    await sendQueued(services, owner);
    expect((await orderRow(id)).delivery_status).to.equal('shipped');
    const none = await owner.agent.get(`/api/shipments/${shipped.body.shipment_id}/labels.pdf`).expect(404);
    expect(none.body.missing).to.have.length(1);
  });
});
