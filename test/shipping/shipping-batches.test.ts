import { expect } from 'chai';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import { signUp, TEST_ENV, testApp } from '../helpers/app';
import type { SignedIn } from '../helpers/app';
import { senditDouble, SENDIT_KEYS, yalidineDouble, YALIDINE_KEYS } from '../helpers/carrier-doubles';
import { testKnex } from '../helpers/db';

type Yalidine = Awaited<ReturnType<typeof yalidineDouble>>;

/**
 * A Yalidine shop whose `n` confirmed orders (imported, then confirmed) are shipped in one tap:
 * the web app, the worker's services, and the parcels queued, in the order of the shipment.
 */
async function shipped(carrier: { url: string }, n: number, env: Record<string, string> = {}, kind: 'yalidine' | 'sendit' = 'yalidine') {
  const origin: Record<string, string> = kind === 'yalidine' ? { YALIDINE_API_ORIGIN: carrier.url } : { SENDIT_API_ORIGIN: carrier.url };
  const app = testApp({ ...origin, ...env });
  const services = createServices(testKnex(), loadConfig({ ...TEST_ENV, ...origin, ...env }), new Jobs(testKnex()));
  const shop = await signUp({ target: app });
  const account = await shop.agent
    .post('/api/carrier-accounts')
    .send(
      kind === 'yalidine'
        ? { kind, name: 'Yalidine', credentials: YALIDINE_KEYS, pickup_city_id: '1601|Alger' }
        : { kind, name: 'Sendit', credentials: SENDIT_KEYS, pickup_city_id: '1' },
    )
    .expect(201);
  const city = kind === 'yalidine' ? 'Oran' : 'Casa';
  const rows = Array.from({ length: n }, (_, i) => `Client ${i},06${String(30000000 + i)},Atlas Shop,Babouches,249,${city},Rue ${i}`);
  await shop.agent
    .post('/api/orders/import')
    .set('Content-Type', 'text/csv')
    .send(`client_name,phone,store_name,products_name,total_amount,city,address\n${rows.join('\n')}\n`)
    .expect(200);
  const ids: string[] = await testKnex()('orders').where({ workspace_id: shop.workspaceId }).orderBy('created_at').pluck('id');
  expect(ids).to.have.length(n);
  await testKnex()('orders').whereIn('id', ids).update({ status: 'confirmed' });
  await shop.agent.post('/api/shipments').send({ accountId: account.body.id, orderIds: ids }).expect(202);
  const parcels: string[] = await testKnex()('parcels').where({ workspace_id: shop.workspaceId, state: 'queued' }).orderBy(['created_at', 'id']).pluck('id');
  expect(parcels).to.have.length(n);
  return { services, shop, accountId: account.body.id as string, parcels };
}

/** The shop's parcels by state, and its orders by delivery status. */
async function where(shop: SignedIn) {
  const parcels = await testKnex()('parcels')
    .where({ workspace_id: shop.workspaceId })
    .select('id', 'order_id', 'state', 'tracking', 'reason', 'answer_lost', 'reference');
  const orders = await testKnex()('orders').where({ workspace_id: shop.workspaceId }).select('id', 'status', 'delivery_status', 'delivery_tracking_number');
  return { parcels, orders };
}

/** Quotas no test but the quotas' comes near (the second's 5 would depend on how fast the machine runs the test). */
const ROOMY = { limits: { second: 1000, minute: 1000 } };

const creates = (yalidine: Yalidine) => yalidine.requests.filter((r) => r.method === 'POST' && r.path === '/parcels');

describe('shipping: parcels in batches (Yalidine takes 50 a call)', function () {
  this.timeout(90_000);
  let yalidine: Yalidine;
  afterEach(() => yalidine.close());

  it('the worker’s fetch of 50 jobs is one call of 50, each parcel read by its order_id: each order shipped with its own tracking number', async () => {
    yalidine = await yalidineDouble(ROOMY);
    const { services, shop, parcels } = await shipped(yalidine, 50);
    const results = await services.parcels.sendMany(parcels);
    expect([...results.values()].every((r) => r === 'sent')).to.equal(true);
    expect(creates(yalidine)).to.have.length(1);
    const sent = creates(yalidine)[0].json as Array<{ order_id: string }>;
    expect(sent).to.have.length(50);
    const after = await where(shop);
    expect(after.parcels.map((p) => p.state)).to.deep.equal(Array(50).fill('sent'));
    // Each parcel holds the tracking number the carrier gave its order_id, and its order says so.
    for (const parcel of after.parcels) {
      expect(yalidine.byReference(parcel.reference)?.tracking).to.equal(parcel.tracking);
      expect(after.orders.find((o) => o.id === parcel.order_id)).to.include({ delivery_status: 'shipped', delivery_tracking_number: parcel.tracking });
    }
    expect(new Set(after.parcels.map((p) => p.tracking)).size).to.equal(50);
    expect(sent.map((p) => p.order_id)).to.have.members(after.parcels.map((p) => p.reference));
    const events = await testKnex()('delivery_events').whereIn(
      'order_id',
      after.orders.map((o) => o.id),
    );
    expect(events).to.have.length(50);
    // Sending them again makes nothing more.
    expect([...(await services.parcels.sendMany(parcels)).values()].every((r) => r === 'nothing_to_do')).to.equal(true);
    expect(creates(yalidine)).to.have.length(1);
  });

  it('a call where some parcels are refused: those fail with the carrier’s words and their orders stay confirmed, the others are shipped', async () => {
    yalidine = await yalidineDouble(ROOMY);
    const { services, shop, accountId, parcels } = await shipped(yalidine, 6);
    // Two parcels are addressed to a commune the carrier does not know.
    await testKnex()('carrier_cities').insert({ account_id: accountId, city_id: '9999|Nowhere', name: 'Nulle part' });
    const refused = [parcels[1], parcels[4]];
    await testKnex()('parcels').whereIn('id', refused).update({ city_id: '9999|Nowhere' });
    const results = await services.parcels.sendMany(parcels);
    expect(parcels.map((id) => results.get(id))).to.deep.equal(['sent', 'failed', 'sent', 'sent', 'failed', 'sent']);
    expect(creates(yalidine)).to.have.length(1);
    expect(creates(yalidine)[0].json).to.have.length(6);
    const after = await where(shop);
    for (const parcel of after.parcels) {
      const order = after.orders.find((o) => o.id === parcel.order_id);
      if (refused.includes(parcel.id)) {
        expect(parcel).to.include({ state: 'failed', reason: 'to_commune_name est invalide', tracking: null });
        expect(order).to.include({ status: 'confirmed', delivery_status: null });
      } else {
        expect(parcel.state).to.equal('sent');
        expect(order).to.include({ delivery_status: 'shipped', delivery_tracking_number: parcel.tracking });
      }
    }
    expect(yalidine.parcels.size).to.equal(4);
  });

  it('a call of many whose answer was lost: every parcel is asked about by its order_id before another try, found, and never made twice', async () => {
    yalidine = await yalidineDouble(ROOMY);
    const { services, shop, parcels } = await shipped(yalidine, 5, { DELIVERY_TIMEOUT_SECONDS: '1' });
    yalidine.switches.loseCreateAnswer = true;
    const lost = await services.parcels.sendMany(parcels);
    expect([...lost.values()]).to.deep.equal(Array(5).fill('retry'));
    yalidine.switches.loseCreateAnswer = false;
    // The carrier made all five; we know none of their numbers yet.
    expect(yalidine.parcels.size).to.equal(5);
    const waiting = await where(shop);
    for (const parcel of waiting.parcels) expect(parcel).to.include({ state: 'queued', answer_lost: true, tracking: null });
    expect(waiting.orders.every((o) => o.delivery_status === null)).to.equal(true);

    const found = await services.parcels.sendMany(parcels);
    expect([...found.values()]).to.deep.equal(Array(5).fill('found'));
    expect(creates(yalidine)).to.have.length(1);
    expect(yalidine.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/parcels?order_id='))).to.have.length(5);
    expect(yalidine.parcels.size).to.equal(5);
    const after = await where(shop);
    for (const parcel of after.parcels) {
      expect(parcel).to.include({ state: 'sent', answer_lost: false, tracking: yalidine.byReference(parcel.reference)?.tracking });
      expect(after.orders.find((o) => o.id === parcel.order_id)).to.include({ delivery_status: 'shipped', delivery_tracking_number: parcel.tracking });
    }
  });

  it('the quotas across calls: once an answer’s headers say the minute is used up, the next calls wait for the next minute, queued, never sent into a 429', async () => {
    // The account's check and city list take 4 of the minute's 6: two calls are left.
    yalidine = await yalidineDouble({ limits: { second: 1000, minute: 6 } });
    const { services, shop, parcels } = await shipped(yalidine, 130);
    const t0 = Date.now();
    const results = await services.parcels.sendMany(parcels);
    expect(parcels.slice(0, 100).map((id) => results.get(id))).to.deep.equal(Array(100).fill('sent'));
    expect(parcels.slice(100).map((id) => results.get(id))).to.deep.equal(Array(30).fill('throttled'));
    // Two calls of 50, the second answered "0 left this minute"; the third was never sent.
    expect(creates(yalidine).map((r) => r.json.length)).to.deep.equal([50, 50]);
    expect(yalidine.windows.minute.left).to.equal(0);
    const after = await where(shop);
    expect(after.parcels.filter((p) => p.state === 'sent')).to.have.length(100);
    const waiting = after.parcels.filter((p) => p.state === 'queued');
    expect(waiting.map((p) => p.id)).to.have.members(parcels.slice(100));
    for (const parcel of waiting) expect(parcel).to.include({ answer_lost: false, tracking: null });
    // Each waits for a job of its own, made by this run, not before the minute has passed.
    const jobs = await testKnex()('pgboss.job').where({ name: 'ship-parcel' }).where('created_on', '>=', new Date(t0)).select('start_after', 'data');
    expect(jobs.map((job) => job.data.parcelId)).to.have.members(waiting.map((p) => p.id));
    expect(jobs).to.have.length(30);
    for (const job of jobs) expect(new Date(job.start_after).getTime() - t0).to.be.at.least(55_000);
    expect(after.orders.filter((o) => o.delivery_status === 'shipped')).to.have.length(100);
  });
});

describe('shipping: a carrier that takes one parcel a call (Sendit), 4 calls at once', function () {
  this.timeout(60_000);
  let sendit: Awaited<ReturnType<typeof senditDouble>>;
  afterEach(() => sendit.close());

  it('a fetch of jobs goes in 4 lanes: never more than 4 calls at once at the carrier, every parcel made once', async () => {
    sendit = await senditDouble({ latencyMs: 300 });
    const { services, shop, parcels } = await shipped(sendit, 12, {}, 'sendit');
    const results = await services.parcels.sendMany(parcels);
    expect([...results.values()]).to.deep.equal(Array(12).fill('sent'));
    // Side by side (4 on a quiet machine; a lane may start late on a busy one), never more than 4.
    expect(sendit.maxInFlight).to.be.within(2, 4);
    const made = sendit.requests.filter((r) => r.method === 'POST' && r.path === '/deliveries');
    expect(made).to.have.length(12);
    const after = await where(shop);
    expect(new Set(after.parcels.map((p) => p.tracking)).size).to.equal(12);
    for (const parcel of after.parcels) {
      expect(parcel.state).to.equal('sent');
      expect(sendit.parcels.get(parcel.tracking)?.reference).to.equal(parcel.reference);
      expect(after.orders.find((o) => o.id === parcel.order_id)).to.include({ delivery_status: 'shipped', delivery_tracking_number: parcel.tracking });
    }
  });

  it('while another process has the account’s 4 calls under way, nothing is sent: each parcel waits a second for a job of its own', async () => {
    sendit = await senditDouble();
    const { services, shop, parcels } = await shipped(sendit, 8, {}, 'sendit');
    // Four of them are being sent by another worker (taken, their answers not yet come).
    const elsewhere = parcels.slice(0, 4);
    await testKnex()('parcels').whereIn('id', elsewhere).update({ state: 'sending', updated_at: testKnex().fn.now() });
    const t0 = Date.now();
    const results = await services.parcels.sendMany(parcels.slice(4));
    expect([...results.values()]).to.deep.equal(Array(4).fill('busy'));
    expect(sendit.requests.filter((r) => r.method === 'POST' && r.path === '/deliveries')).to.have.length(0);
    const after = await where(shop);
    expect(after.parcels.filter((p) => parcels.slice(4).includes(p.id)).map((p) => p.state)).to.deep.equal(Array(4).fill('queued'));
    const jobs = await testKnex()('pgboss.job').where({ name: 'ship-parcel' }).where('created_on', '>=', new Date(t0)).select('start_after', 'data');
    expect(jobs.map((job) => job.data.parcelId)).to.have.members(parcels.slice(4));
    for (const job of jobs) expect(new Date(job.start_after).getTime() - t0).to.be.at.least(900);
  });

  it('while another process has 2 of the account’s calls under way, this one makes 2 at once at most; what it cannot take waits a second, untried', async () => {
    sendit = await senditDouble({ latencyMs: 200 });
    const { services, parcels } = await shipped(sendit, 10, {}, 'sendit');
    const elsewhere = parcels.slice(0, 2);
    await testKnex()('parcels').whereIn('id', elsewhere).update({ state: 'sending', updated_at: testKnex().fn.now() });
    const t0 = Date.now();
    const results = await services.parcels.sendMany(parcels.slice(2));
    expect(sendit.maxInFlight).to.be.within(1, 2);
    const sent = parcels.slice(2).filter((id) => results.get(id) === 'sent');
    const busy = parcels.slice(2).filter((id) => results.get(id) === 'busy');
    expect(sent.length).to.be.at.least(2);
    expect(sent.length + busy.length).to.equal(8);
    expect(sendit.requests.filter((r) => r.method === 'POST' && r.path === '/deliveries')).to.have.length(sent.length);
    const rows = await testKnex()('parcels').whereIn('id', parcels.slice(2)).select('id', 'state', 'tries', 'first_try_at');
    for (const row of rows) {
      if (sent.includes(row.id)) expect(row).to.include({ state: 'sent', tries: 1 });
      else expect(row).to.include({ state: 'queued', tries: 0, first_try_at: null });
    }
    const jobs = await testKnex()('pgboss.job').where({ name: 'ship-parcel' }).where('created_on', '>=', new Date(t0)).select('start_after', 'data');
    expect(jobs.map((job) => job.data.parcelId)).to.have.members(busy);
    for (const job of jobs) expect(new Date(job.start_after).getTime() - t0).to.be.at.least(900);
  });

  it('a call claimed while the one before it was at the carrier, not made because the carrier stopped answering, goes back untried', async () => {
    sendit = await senditDouble({ latencyMs: 300 });
    const { services, parcels } = await shipped(sendit, 8, {}, 'sendit');
    sendit.switches.serverError = true;
    const t0 = Date.now();
    const results = await services.parcels.sendMany(parcels);
    expect([...results.values()]).to.deep.equal(Array(8).fill('retry'));
    const rows = await testKnex()('parcels').whereIn('id', parcels).select('id', 'state', 'tries', 'first_try_at', 'answer_lost');
    // Nothing is left taken: the parcels tried wait for their backoff, the ones claimed ahead were never tried.
    expect(rows.map((row) => row.state)).to.deep.equal(Array(8).fill('queued'));
    const tried = rows.filter((row) => row.tries === 1);
    const untried = rows.filter((row) => row.tries === 0);
    expect(tried.length + untried.length).to.equal(8);
    expect(tried.length).to.be.within(1, 4);
    for (const row of untried) expect(row).to.include({ first_try_at: null, answer_lost: false });
    for (const row of tried) expect(row.first_try_at).to.be.instanceOf(Date);
    // Every one of them comes back after the backoff of a carrier that did not answer (30 s).
    const jobs = await testKnex()('pgboss.job').where({ name: 'ship-parcel' }).where('created_on', '>=', new Date(t0)).select('start_after', 'data');
    expect(jobs.map((job) => job.data.parcelId)).to.have.members(parcels);
    for (const job of jobs) expect(new Date(job.start_after).getTime() - t0).to.be.at.least(25_000);
  });
});
