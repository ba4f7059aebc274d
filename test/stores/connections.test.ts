import crypto from 'node:crypto';
import { expect } from 'chai';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { Secrets } from '../../integrations/secrets';
import { createServices } from '../../services';
import type { SignedIn } from '../helpers/app';
import { csrfOf, signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { opened, testSecrets } from '../helpers/secrets';

const KEYS = [
  'id',
  'kind',
  'name',
  'shop',
  'cod_only',
  'enabled',
  'pending',
  'disabled_reason',
  'connected_by',
  'intake_url',
  'write_back',
  'reconnect_needed',
  'reconnect_before',
  'created_at',
  'last_event_at',
  'counts',
];
const ABSENT_ID = '00000000-0000-4000-8000-000000000000';
const NOT_FOUND = { error: 'Store connection not found' };
const SHOPIFY = { kind: 'shopify', name: 'Atlas', shop: 'Atlas.myshopify.com', secret: 'shpss_0123456789abcdef' };

/** A connection's row, its signing key opened (sealed at rest). */
const connectionRow = async (id: string) => opened(await testKnex()('store_connections').where({ id }).first());

/** A member of the owner's workspace, who signed up through the owner's invitation link. */
const memberOf = (owner: SignedIn) => signUp({ invitedBy: owner });

async function connect(s: SignedIn, body: object = SHOPIFY) {
  return (await s.agent.post('/api/stores').send(body).expect(201)).body;
}

/** Log rows as the intake writes them (section 3 brings the intake itself). */
async function logEvents(connectionId: string, rows: Array<Record<string, unknown>>): Promise<void> {
  await testKnex()('store_events').insert(rows.map((row) => ({ connection_id: connectionId, topic: 'orders/create', result: 'created', ...row })));
}

describe('store connections: /api/stores', () => {
  it('201: a Shopify connection with its intake URL; the key is kept to verify and never answered', async () => {
    const s = await signUp();
    const store = await connect(s);
    expect(Object.keys(store)).to.deep.equal(KEYS);
    expect(store).to.deep.include({
      kind: 'shopify',
      name: 'Atlas',
      shop: 'atlas.myshopify.com',
      cod_only: true,
      enabled: true,
      intake_url: `${TEST_ENV.PUBLIC_BASE_URL}/hooks/stores/${store.id}`,
      write_back: { enabled: false, last_error: null },
      reconnect_needed: false,
      reconnect_before: null,
      last_event_at: null,
      counts: { created: 0, rejected: 0 },
    });
    expect(await connectionRow(store.id)).to.include({ workspace_id: s.workspaceId, secret: SHOPIFY.secret, write_back: null });
    const list = (await s.agent.get('/api/stores').expect(200)).body;
    expect(list).to.deep.equal({ stores: [store] });
    expect(JSON.stringify(list)).not.to.contain(SHOPIFY.secret);
  });

  it('custom, and WooCommerce without a secret: the key we made, in the 201 alone (no-store); WooCommerce keeps a pasted one', async () => {
    const s = await signUp();
    const res = await s.agent.post('/api/stores').send({ kind: 'custom', name: 'Sheet' }).expect(201);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.body.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect((await connectionRow(res.body.id)).secret).to.equal(res.body.secret);
    const woo = await connect(s, { kind: 'woocommerce', name: 'Woo', shop: 'https://boutique.ma/', cod_only: false });
    expect(woo.secret).to.match(/^[A-Za-z0-9_-]{32}$/);
    expect(woo).to.include({ shop: 'https://boutique.ma', cod_only: false });
    const pasted = await connect(s, { kind: 'woocommerce', name: 'Woo 2', secret: 'from-woo' });
    expect(pasted).not.to.have.property('secret');
    expect((await connectionRow(pasted.id)).secret).to.equal('from-woo');
    const listed = (await s.agent.get('/api/stores').expect(200)).body.stores;
    expect(listed.map((c: { name: string }) => c.name)).to.deep.equal(['Sheet', 'Woo', 'Woo 2']);
    for (const c of listed) expect(c).not.to.have.property('secret');
  });

  it('write_back: the credentials are stored, never shown; only Shopify and WooCommerce, with their shop', async () => {
    const s = await signUp();
    const store = await connect(s, { ...SHOPIFY, write_back: { access_token: 'shpat_secret_token' } });
    expect(store.write_back).to.deep.equal({ enabled: true, last_error: null });
    // Sealed with SECRETS_KEY: the row holds no token in clear.
    const stored = (await connectionRow(store.id)).write_back;
    expect(Object.keys(stored)).to.deep.equal(['access_token']);
    expect(stored.access_token).to.match(/^v1:[\w-]{8}:/);
    expect(new Secrets(TEST_ENV.SECRETS_KEY).open(stored.access_token)).to.equal('shpat_secret_token');
    expect(JSON.stringify((await s.agent.get('/api/stores').expect(200)).body)).not.to.contain('shpat_secret_token');
    const woo = await connect(s, {
      kind: 'woocommerce',
      name: 'W',
      shop: 'https://boutique.ma',
      write_back: { consumer_key: 'ck_1', consumer_secret: 'cs_1', set_status: true },
    });
    expect(woo.write_back).to.deep.equal({ enabled: true, last_error: null });
    // WooCommerce's keys sealed too, each on its own; `set_status` in clear.
    const wooStored = (await connectionRow(woo.id)).write_back;
    expect(wooStored.consumer_key).to.match(/^v1:[\w-]{8}:/);
    expect(wooStored.consumer_secret).to.match(/^v1:[\w-]{8}:/);
    expect(testSecrets.openFields(wooStored, ['consumer_key', 'consumer_secret'])).to.deep.equal({
      consumer_key: 'ck_1',
      consumer_secret: 'cs_1',
      set_status: true,
    });
    const removed = (await s.agent.put(`/api/stores/${woo.id}`).send({ write_back: null }).expect(200)).body;
    expect(removed.write_back).to.deep.equal({ enabled: false, last_error: null });
    expect((await connectionRow(woo.id)).write_back).to.equal(null);
  });

  it('400 VALIDATION_ERROR naming each bad field; nothing written', async () => {
    const s = await signUp();
    const cases: Array<[object, string[]]> = [
      [{}, ['kind', 'name']],
      [{ kind: 'etsy', name: 'A' }, ['kind']],
      [{ kind: 'youcan', name: 'x'.repeat(121), secret: 'k' }, ['name']],
      [{ kind: 'shopify', name: 'A' }, ['secret']],
      [{ kind: 'youcan', name: 'A' }, ['secret']],
      [{ ...SHOPIFY, shop: 'atlas.com' }, ['shop']],
      [{ kind: 'woocommerce', name: 'A', shop: 'ftp://boutique.ma' }, ['shop']],
      [{ kind: 'custom', name: 'A', secret: 'mine' }, ['secret']],
      [{ kind: 'youcan', name: 'A', secret: 'k', write_back: { access_token: 't' } }, ['write_back']],
      [{ kind: 'shopify', name: 'A', secret: 'k', write_back: { access_token: 't' } }, ['shop']],
      [{ ...SHOPIFY, write_back: { consumer_key: 'a', consumer_secret: 'b' } }, ['write_back']],
      [{ ...SHOPIFY, cod_only: 'yes' }, ['cod_only']],
    ];
    for (const [body, fields] of cases) {
      const res = await s.agent.post('/api/stores').send(body).expect(400);
      expect(res.body.code, JSON.stringify(body)).to.equal('VALIDATION_ERROR');
      expect(Object.keys(res.body.fields).sort(), JSON.stringify(body)).to.deep.equal(fields);
    }
    expect(await testKnex()('store_connections').whereIn('workspace_id', [s.workspaceId])).to.deep.equal([]);
  });

  it('409 TOO_MANY_STORES beyond 20, even when added side by side', async () => {
    const s = await signUp();
    const results = await Promise.all(Array.from({ length: 22 }, (_, i) => s.agent.post('/api/stores').send({ kind: 'custom', name: `S${i}` })));
    expect(results.filter((r) => r.status === 201)).to.have.length(20);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).to.have.length(2);
    expect(refused[0].body).to.deep.equal({ error: 'A workspace has at most 20 store connections', code: 'TOO_MANY_STORES' });
    expect(await testKnex()('store_connections').where({ workspace_id: s.workspaceId })).to.have.length(20);
  });

  it('PUT changes the name, key, cod_only and enabled; DELETE → 204, its log goes, its orders stay as they were', async () => {
    const s = await signUp();
    await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
    const store = await connect(s);
    const updated = (await s.agent.put(`/api/stores/${store.id}`).send({ name: 'Atlas 2', secret: 'rotated', cod_only: false, enabled: false }).expect(200))
      .body;
    expect(updated).to.include({ name: 'Atlas 2', cod_only: false, enabled: false });
    expect(await connectionRow(store.id)).to.include({ secret: 'rotated', name: 'Atlas 2' });
    expect((await s.agent.put(`/api/stores/${store.id}`).send({ name: '' }).expect(400)).body.fields).to.have.all.keys('name');
    const [order] = await testKnex()('orders')
      .insert({
        workspace_id: s.workspaceId,
        client_name: 'A',
        phone: '+212612345678',
        store_name: 'Atlas',
        products_name: 'P',
        status: 'pending',
        source: 'shopify',
        store_connection_id: store.id,
        external_id: '1',
      })
      .returning('id');
    await logEvents(store.id, [{ external_id: '1', order_id: order.id }]);
    await s.agent.delete(`/api/stores/${store.id}`).expect(204);
    expect(await connectionRow(store.id)).to.equal(undefined);
    expect(await testKnex()('store_events').where({ connection_id: store.id })).to.deep.equal([]);
    expect((await s.agent.get(`/api/orders/${order.id}`).expect(200)).body).to.include({ store_connection_id: store.id, source: 'shopify' });
    expect((await s.agent.get('/api/stores').expect(200)).body).to.deep.equal({ stores: [] });
  });

  it('404 for another workspace’s connection, an absent id and a non-UUID; the other connection is untouched', async () => {
    const [a, b] = [await signUp(), await signUp()];
    const theirs = await connect(b);
    for (const id of [theirs.id, ABSENT_ID, 'nope']) {
      expect((await a.agent.put(`/api/stores/${id}`).send({ name: 'Mine' }).expect(404)).body).to.deep.equal(NOT_FOUND);
      expect((await a.agent.delete(`/api/stores/${id}`).expect(404)).body).to.deep.equal(NOT_FOUND);
      expect((await a.agent.get(`/api/stores/${id}/events`).expect(404)).body).to.deep.equal(NOT_FOUND);
    }
    expect((await b.agent.get('/api/stores').expect(200)).body.stores).to.deep.equal([theirs]);
  });

  it('a member sees the list and the log, never a key; adding, changing and deleting are the owner’s (403, nothing changes)', async () => {
    const owner = await signUp();
    const store = await connect(owner);
    const member = await memberOf(owner);
    expect((await member.agent.get('/api/stores').expect(200)).body).to.deep.equal({ stores: [store] });
    await member.agent.get(`/api/stores/${store.id}/events`).expect(200);
    expect((await member.agent.post('/api/stores').send({ kind: 'custom', name: 'Mine' }).expect(403)).body).to.deep.equal({ error: 'Forbidden' });
    await member.agent.put(`/api/stores/${store.id}`).send({ name: 'Mine' }).expect(403);
    await member.agent.delete(`/api/stores/${store.id}`).expect(403);
    expect((await owner.agent.get('/api/stores').expect(200)).body).to.deep.equal({ stores: [store] });
    const page = await member.agent.get(`/stores/${store.id}`).expect(200);
    expect(page.text).not.to.contain(SHOPIFY.secret).and.not.to.contain('action="/stores/');
    const csrf = await csrfOf(member.agent, '/orders/new');
    await member.agent.post('/stores').type('form').send({ _csrf: csrf, kind: 'custom', name: 'Mine' }).expect(403);
    await member.agent.post(`/stores/${store.id}/delete`).type('form').send({ _csrf: csrf }).expect(403);
    expect(await connectionRow(store.id)).to.include({ name: 'Atlas' });
  });

  it('the event log: the last 200, newest first, with the documented fields; counts of the last 7 days and the last message', async () => {
    const s = await signUp();
    const store = await connect(s);
    const now = Date.now();
    await logEvents(
      store.id,
      Array.from({ length: 203 }, (_, i) => ({
        external_id: String(i),
        received_at: new Date(now - (203 - i) * 1000),
        result: i % 10 === 0 ? 'rejected' : 'created',
      })),
    );
    await logEvents(store.id, [
      { external_id: 'old', received_at: new Date(now - 8 * 86_400_000), result: 'created' },
      {
        external_id: 'bad',
        received_at: new Date(now),
        result: 'rejected',
        topic: 'orders/updated',
        reason: 'Enter a valid Moroccan phone number, e.g. 06 12 34 56 78',
        // The page shows it by its code, in the page's language (services/shared/messages).
        reason_codes: JSON.stringify([{ code: 'phoneInvalid', params: {} }]),
      },
    ]);
    const { events } = (await s.agent.get(`/api/stores/${store.id}/events`).expect(200)).body;
    expect(events).to.have.length(200);
    expect(events[0]).to.deep.equal({
      received_at: new Date(now).toISOString(),
      topic: 'orders/updated',
      external_id: 'bad',
      result: 'rejected',
      order_id: null,
      reason: 'Enter a valid Moroccan phone number, e.g. 06 12 34 56 78',
    });
    expect(events.slice(1, 4).map((e: { external_id: string }) => e.external_id)).to.deep.equal(['202', '201', '200']);
    const [listed] = (await s.agent.get('/api/stores').expect(200)).body.stores;
    expect(listed.counts).to.deep.equal({ created: 182, rejected: 22 });
    expect(listed.last_event_at).to.equal(new Date(now).toISOString());
    const page = await s.agent.get(`/stores/${store.id}`).expect(200);
    expect(page.text).to.contain('Enter a valid Moroccan phone number').and.contain('href="/orders/new">Create the order by hand');
  });
});

describe('the event log’s housekeeping', () => {
  it('keeps the last 7 days and each connection’s newest 200; deletes the rest', async () => {
    const s = await signUp();
    const [busy, quiet] = [await connect(s), await connect(s, { kind: 'custom', name: 'Sheet' })];
    const day = 86_400_000;
    const now = Date.now();
    await logEvents(
      busy.id,
      Array.from({ length: 250 }, (_, i) => ({ external_id: `old-${i}`, received_at: new Date(now - 30 * day - i * 1000) })),
    );
    await logEvents(busy.id, [{ external_id: 'recent', received_at: new Date(now - 6 * day) }]);
    await logEvents(quiet.id, [{ external_id: 'lonely', received_at: new Date(now - 300 * day) }]);
    const done = await createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex())).housekeeping();
    expect(done.storeLog).to.be.at.least(50);
    const left = await testKnex()('store_events').where({ connection_id: busy.id }).orderBy('received_at', 'desc').pluck('external_id');
    expect(left).to.have.length(200);
    expect(left.slice(0, 2)).to.deep.equal(['recent', 'old-0']);
    expect(await testKnex()('store_events').where({ connection_id: quiet.id }).pluck('external_id')).to.deep.equal(['lonely']);
  });
});

describe('the /stores pages', () => {
  it('adding a store: a guide per kind with the admin’s menu names; the list; a custom key shown once', async () => {
    const s = await signUp();
    const shopify = await s.agent.get('/stores/new').expect(200);
    expect(shopify.text).to.contain('Settings → Notifications → Webhooks').and.contain('Create webhook').and.contain('Your webhooks will be signed with');
    const woo = await s.agent.get('/stores/new?kind=woocommerce').expect(200);
    expect(woo.text).to.contain('WooCommerce → Settings → Advanced → Webhooks').and.contain('Add webhook').and.contain('WP REST API Integration v3');
    const youcan = await s.agent.get('/stores/new?kind=youcan').expect(200);
    // YouCan has no webhook screen for shops: no manual way, and the page says so (without the app
    // set up on this server, YouCan cannot be connected at all: the page says that, issue 53).
    expect(youcan.text).to.contain('YouCan cannot be connected to this service yet').and.not.contain('action="/stores"');
    const custom = await s.agent.get('/stores/new?kind=custom').expect(200);
    expect(custom.text, 'the Google Sheets example is named').to.contain('<code>examples/google-sheets/</code>');
    const csrf = await csrfOf(s.agent, '/stores/new');
    const bad = await s.agent.post('/stores').type('form').send({ _csrf: csrf, kind: 'shopify', name: 'Atlas', shop: 'atlas.com' }).expect(400);
    expect(bad.text).to.contain('id="f-shop-error"').and.contain('id="f-secret-error"');
    const created = await s.agent.post('/stores').type('form').send({ _csrf: csrf, kind: 'custom', name: 'Sheet' }).expect(200);
    expect(created.headers['cache-control']).to.equal('no-store');
    const row = opened((await testKnex()('store_connections').where({ workspace_id: s.workspaceId }))[0]);
    expect(row).to.include({ kind: 'custom', name: 'Sheet', cod_only: false });
    expect(created.text).to.contain(row.secret).and.contain(`/hooks/stores/${row.id}`);
    const again = await s.agent.get(`/stores/${row.id}`).expect(200);
    expect(again.text).not.to.contain(row.secret);
    expect(again.text).to.contain(`/hooks/stores/${row.id}`);
    const list = await s.agent.get('/stores').expect(200);
    expect(list.text).to.contain(`href="/stores/${row.id}"`).and.contain('href="/stores/new"').and.contain('href="/stores"');
  });

  it('the owner disables, enables and deletes a connection from its page', async () => {
    const s = await signUp();
    const store = await connect(s, { kind: 'youcan', name: 'You', secret: crypto.randomUUID() });
    const csrf = await csrfOf(s.agent, `/stores/${store.id}`);
    await s.agent.post(`/stores/${store.id}/enabled`).type('form').send({ _csrf: csrf, enabled: 'false' }).expect(303);
    expect(await connectionRow(store.id)).to.include({ enabled: false });
    expect((await s.agent.get(`/stores/${store.id}`).expect(200)).text).to.contain('This connection is disabled');
    await s.agent.post(`/stores/${store.id}/enabled`).type('form').send({ _csrf: csrf, enabled: 'true' }).expect(303);
    expect(await connectionRow(store.id)).to.include({ enabled: true });
    await s.agent.get(`/stores/${store.id}/delete`).expect(200);
    const res = await s.agent.post(`/stores/${store.id}/delete`).type('form').send({ _csrf: csrf }).expect(303);
    expect(res.headers.location).to.equal('/stores');
    expect(await connectionRow(store.id)).to.equal(undefined);
  });
});
