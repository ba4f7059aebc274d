import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../../config';
import { JOB_SCHEMA } from '../../db/jobs';
import { messageBody } from '../../services/webhooks';
import type { RunningWorker } from '../../worker';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, csrfOf, signUp, TEST_ENV, testApp, uniqueEmail } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey, randomIp } from '../helpers/keys';
import { agentDouble, grant, ORDER, openAllDay, testWorker, waitFor } from '../helpers/loop';

/**
 * Risky orders (docs/stores.md): `flags` set when an order is created, by one
 * rule whatever the path (form, /api, Data API, import); the block list and what it does to an
 * order; the flags as badges, links and filters.
 */

type Shop = SignedIn & { workspaceId: string };
type Order = { id: string; status: string; flags: string[]; operation_id: string; phone: string };

const PUBLISHABLE_KEY = loadConfig(TEST_ENV).publishableKey;
// Its own app, as test/http/data-api.test.ts: the token exchange counts per client address.
let target: ReturnType<typeof testApp>;
before(() => {
  target = testApp({ TRUST_PROXY: '1', TOKEN_LIMIT_PER_IP: '1000', TOKEN_LIMIT_PER_KEY: '1000' });
});
const knex = () => testKnex();

async function shop(options: { voiceUrl?: string } = {}): Promise<Shop> {
  const user = await signUp({ target });
  const handler = options.voiceUrl
    ? { name: 'Robot', kind: 'voice', endpointUrl: options.voiceUrl, orderHandler: true }
    : { name: 'Salma', orderHandler: true };
  await user.agent.post('/api/agents').send(handler).expect(201);
  await openAllDay(user);
  return { ...user, workspaceId: user.workspaceId! };
}

async function create(s: Shop, fields: object): Promise<Order> {
  return (
    await s.agent
      .post('/api/orders')
      .send({ ...ORDER, ...fields })
      .expect(201)
  ).body;
}

const orderRow = (id: string) => knex()('orders').where({ id }).first();
const operationOf = (orderId: string) => knex()('operations').where({ order_id: orderId }).first();
const jobsOf = (operationId: string) =>
  knex()
    .raw(`SELECT 1 FROM ${JOB_SCHEMA}.job WHERE name = 'operation-due' AND data->>'operationId' = ?`, [operationId])
    .then((r) => r.rows);

describe('possible_duplicate: the same phone and products within 48 hours', () => {
  it('flags the second order across phone forms, case, accents and spaces; other products or another phone are not flagged', async () => {
    const s = await shop();
    const first = await create(s, { phone: '0612345678', productsName: 'Crème éclat 50 ml' });
    expect(first.flags).to.deep.equal([]);
    const second = await create(s, { phone: '+212612345678', productsName: 'CREME ECLAT 50ML' });
    expect(second.flags).to.deep.equal(['possible_duplicate']);
    expect(second.status).to.equal('pending');
    const third = await create(s, { phone: '06 12 34 56 78', productsName: '  crème   Éclat 50 Ml ' });
    expect(third.flags).to.deep.equal(['possible_duplicate']);
    expect((await create(s, { phone: '0612345678', productsName: 'Crème éclat 100 ml' })).flags).to.deep.equal([]);
    expect((await create(s, { phone: '0698765432', productsName: 'Crème éclat 50 ml' })).flags).to.deep.equal([]);
    // Stored, as every representation shows it; the flagged order is still queued for its call.
    expect((await orderRow(second.id)).flags).to.deep.equal(['possible_duplicate']);
    expect(await operationOf(second.id)).to.include({ status: 'pending' });
    expect((await s.agent.get(`/api/orders/${second.id}`).expect(200)).body.flags).to.deep.equal(['possible_duplicate']);
  });

  it('not after an order that ended unconfirmed', async () => {
    const s = await shop();
    const declined = await create(s, { productsName: 'Babouches' });
    await s.agent.put(`/api/orders/${declined.id}`).send({ status: 'unconfirmed' }).expect(200);
    expect((await create(s, { productsName: 'babouches' })).flags).to.deep.equal([]);
  });

  it('not past 48 hours (still within 47)', async () => {
    const s = await shop();
    const old = await create(s, { productsName: 'Tajine' });
    await knex()('orders')
      .where({ id: old.id })
      .update({ created_at: knex().raw("now() - interval '49 hours'") });
    expect((await create(s, { productsName: 'Tajine' })).flags).to.deep.equal([]);
    const recent = await create(s, { phone: '0611111111', productsName: 'Tajine' });
    await knex()('orders')
      .where({ id: recent.id })
      .update({ created_at: knex().raw("now() - interval '47 hours'") });
    expect((await create(s, { phone: '0611111111', productsName: 'Tajine' })).flags).to.deep.equal(['possible_duplicate']);
  });

  it('an imported file with the same order twice: the second row is flagged (and a row matching an earlier order)', async () => {
    const s = await shop();
    await create(s, { phone: '0622222222', productsName: 'Argan oil' });
    const csv = 'client_name,phone,store_name,products_name\nA,0633333333,S,Savon noir\nA,+212633333333,S,SAVON NOIR\nB,06 22 22 22 22,S,argan  OIL\n';
    const res = await s.agent.post('/api/orders/import').set('Content-Type', 'text/csv').send(csv).expect(200);
    expect(res.body.imported).to.equal(3);
    const rows = await knex()('orders').where({ workspace_id: s.workspaceId }).orderBy('created_at').select('phone', 'flags');
    expect(rows.map((r) => r.flags)).to.deep.equal([[], [], ['possible_duplicate'], ['possible_duplicate']]);
  });

  it('another workspace’s orders never make a duplicate', async () => {
    const a = await shop();
    const b = await shop();
    await create(a, { productsName: 'Henna' });
    expect((await create(b, { productsName: 'Henna' })).flags).to.deep.equal([]);
  });

  it('the order page and the call page link the other order; a caller cancels one of the two from there', async () => {
    const s = await shop();
    // Created confirmed, it is never offered to the queue: the flagged order is the next call.
    const first = await create(s, { productsName: 'Argan oil', status: 'confirmed' });
    const second = await create(s, { productsName: 'argan oil' });
    const page = (await s.agent.get(`/orders/${second.id}`).expect(200)).text;
    expect(page).to.include('badge-possible_duplicate');
    expect(page).to.include(`href="/orders/${first.id}"`);
    expect(page).to.include(`action="/orders/${first.id}/status"`);
    // The earlier order's page shows the later one too.
    expect((await s.agent.get(`/orders/${first.id}`).expect(200)).text).to.include(`href="/orders/${second.id}"`);

    const next = await s.agent
      .post('/calls/next')
      .type('form')
      .send({ _csrf: csrfFrom((await s.agent.get('/calls').expect(200)).text) })
      .expect(303);
    const callPage = (await s.agent.get(next.headers.location).expect(200)).text;
    expect(callPage).to.include('badge-possible_duplicate');
    expect(callPage).to.include(`href="/orders/${first.id}"`);
    const cancelled = await s.agent
      .post(`/orders/${first.id}/status`)
      .type('form')
      .send({ _csrf: csrfFrom(callPage), status: 'unconfirmed', back: next.headers.location })
      .expect(303);
    expect(cancelled.headers.location).to.equal(next.headers.location);
    expect((await orderRow(first.id)).status).to.equal('unconfirmed');
    expect((await orderRow(second.id)).status).to.equal('calling');
    // An address of elsewhere is never where it sends back.
    const elsewhere = await s.agent
      .post(`/orders/${first.id}/status`)
      .type('form')
      .send({ _csrf: csrfFrom(callPage), status: 'unconfirmed', back: 'https://evil.example/orders/x' })
      .expect(303);
    expect(elsewhere.headers.location).to.equal(`/orders/${first.id}`);
  });

  it('the duplicate probe is one range of the phone index (EXPLAIN): its cost does not grow with the workspace', async () => {
    const s = await shop();
    // 5,000 orders of 1,000 customers and fresh statistics, rolled back afterwards: the plan Postgres
    // picks for a workspace at scale (on a nearly empty table any index will do).
    const rollback = new Error('rollback');
    let plan = '';
    await knex()
      .transaction(async (trx) => {
        await trx.raw("SET LOCAL statement_timeout = '60s'");
        await trx.raw(
          `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, created_at)
         SELECT ?, 'Client ' || g, '+2126' || lpad((g % 1000)::text, 8, '0'), 'Bulk', 'Item ' || (g % 7), now() - g * interval '5 minutes'
           FROM generate_series(1, 5000) g`,
          [s.workspaceId],
        );
        await trx.raw('ANALYZE orders');
        // The trigger's probe (orders_flag_risky in the risky_orders migration), as it runs for an order.
        const { rows } = await trx.raw(
          `EXPLAIN SELECT 1 FROM orders o
          WHERE o.workspace_id = ? AND o.phone = ?
            AND o.created_at BETWEEN ?::timestamptz - interval '48 hours' AND ?::timestamptz + interval '48 hours'
            AND o.status <> 'unconfirmed'
            AND order_products_key(o.products_name) = order_products_key(?) LIMIT 1`,
          [s.workspaceId, '+212600000042', new Date(), new Date(), 'Item 0'],
        );
        plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
        throw rollback;
      })
      .catch((err) => {
        if (err !== rollback) throw err;
      });
    expect(plan).to.match(/Index Scan using orders_workspace_phone_idx|Bitmap Index Scan on orders_workspace_phone_idx/);
    expect(plan).to.match(/Index Cond: \(\(workspace_id = .*phone = .*created_at >= .*created_at <= /s);
    expect(plan).not.to.match(/Seq Scan/);
  });
});

/** An access token of the shop's owner for the Data API. */
async function dataToken(s: Shop): Promise<string> {
  const { key } = await createKey(s);
  return (await request(target).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key}`).expect(200)).body.access_token;
}

/** One order for `phone` through each path a shop creates orders by; their ids. */
async function byEveryPath(s: Shop, phone: string): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  const csrf = await csrfOf(s.agent, '/orders/new');
  await s.agent
    .post('/orders')
    .type('form')
    .send({ _csrf: csrf, client_name: 'Form', phone, store_name: 'S', products_name: 'Form item', address: '' })
    .expect(303);
  ids.form = (await knex()('orders').where({ workspace_id: s.workspaceId, client_name: 'Form' }).first('id')).id;
  ids.api = (await create(s, { clientName: 'Api', phone, productsName: 'Api item' })).id;
  const token = await dataToken(s);
  ids.data = (
    await request(target)
      .post('/data/v1/orders')
      .set('apikey', PUBLISHABLE_KEY)
      .set('Authorization', `Bearer ${token}`)
      .send({ ...ORDER, clientName: 'Data', phone, productsName: 'Data item' })
      .expect(201)
  ).body.id;
  await s.agent
    .post('/api/orders/import')
    .set('Content-Type', 'text/csv')
    .send(`client_name,phone,store_name,products_name\nImport,"${phone}",S,Import item\n`)
    .expect(200);
  ids.import = (await knex()('orders').where({ workspace_id: s.workspaceId, client_name: 'Import' }).first('id')).id;
  return ids;
}

async function expectBlocked(ids: Record<string, string>): Promise<void> {
  for (const [path, id] of Object.entries(ids)) {
    const order = await orderRow(id);
    expect(order, path).to.include({ status: 'unconfirmed' });
    expect(order.flags, path).to.deep.equal(['blocked_phone']);
    const operation = await operationOf(id);
    expect(operation, path).to.include({ status: 'cancelled', next_attempt_at: null });
    expect(await jobsOf(operation.id), path).to.have.length(0);
    expect(await knex()('calls').where({ operation_id: operation.id }), path).to.have.length(0);
  }
}

describe('the block list', () => {
  it('GET/POST/DELETE /api/settings/blocked-phones: normalised, 400 naming phone, 409 twice, 404 when absent', async () => {
    const s = await shop();
    const added = await s.agent.post('/api/settings/blocked-phones').send({ phone: '06 12 34 56 78', reason: ' Refused delivery twice ' }).expect(201);
    expect(added.body).to.include({ phone: '+212612345678', reason: 'Refused delivery twice' });
    await s.agent.post('/api/settings/blocked-phones').send({ phone: '0698765432' }).expect(201);
    const list = (await s.agent.get('/api/settings/blocked-phones').expect(200)).body;
    expect(list.blocked_phones.map((e: { phone: string; reason: string | null }) => [e.phone, e.reason])).to.deep.equal([
      ['+212698765432', null],
      ['+212612345678', 'Refused delivery twice'],
    ]);

    const bad = await s.agent.post('/api/settings/blocked-phones').send({ phone: '12345' }).expect(400);
    expect(bad.body).to.include({ code: 'VALIDATION_ERROR' });
    expect(bad.body.fields).to.have.keys('phone');
    expect((await s.agent.post('/api/settings/blocked-phones').send({}).expect(400)).body.fields).to.have.keys('phone');
    expect((await s.agent.post('/api/settings/blocked-phones').send({ phone: '+212612345678' }).expect(409)).body.code).to.equal('PHONE_ALREADY_BLOCKED');

    await s.agent.delete('/api/settings/blocked-phones/%2B212612345678').expect(204);
    await s.agent.delete(`/api/settings/blocked-phones/${encodeURIComponent('06 98 76 54 32')}`).expect(204);
    await s.agent.delete('/api/settings/blocked-phones/0612345678').expect(404);
    await s.agent.delete('/api/settings/blocked-phones/not-a-phone').expect(404);
    expect(await knex()('blocked_phones').where({ workspace_id: s.workspaceId })).to.have.length(0);
  });

  it('a blocked number through every path (form, API, Data API, import): unconfirmed, operation cancelled, nothing in the human queue', async () => {
    const s = await shop();
    await s.agent.post('/api/settings/blocked-phones').send({ phone: '0611223344', reason: 'fake orders' }).expect(201);
    const ids = await byEveryPath(s, '06 11 22 33 44');
    await expectBlocked(ids);
    expect((await s.agent.get(`/api/orders/${ids.data}`).expect(200)).body).to.include({ status: 'unconfirmed' });
    await s.agent.post('/api/calls/next').expect(204);
  });

  describe('with a voice agent', function () {
    this.timeout(90_000);
    let worker: RunningWorker;
    before(async () => {
      worker = await testWorker();
    });
    after(async () => {
      await worker.stop();
    });

    it('never dispatched to the voice agent, no credit spent; another number of the same shop is', async () => {
      const agent = await agentDouble();
      try {
        const s = await shop({ voiceUrl: agent.url });
        await grant(s, 10);
        await s.agent.post('/api/settings/blocked-phones').send({ phone: '+212 6 11 22 33 44' }).expect(201);
        const ids = await byEveryPath(s, '00212611223344');
        const control = await create(s, { phone: '0655555555' });
        const sent = await waitFor('the other number dispatched', async () => agent.received[0]);
        await expectBlocked(ids);
        expect(sent.json.data.order.id).to.equal(control.id);
        expect(agent.received.map((r) => r.json.data.order.phone)).to.not.include('+212611223344');
        expect((await s.agent.get('/api/credits').expect(200)).body).to.include({ credits: 10, totalSpent: 0 });
      } finally {
        await agent.close();
      }
    });
  });

  it('“Call anyway”: the order page says why, and Call again queues a call that is offered', async () => {
    const s = await shop();
    await s.agent.post('/api/settings/blocked-phones').send({ phone: '0611223344', reason: 'refused twice' }).expect(201);
    const order = await create(s, { phone: '0611223344' });
    const page = (await s.agent.get(`/orders/${order.id}`).expect(200)).text;
    expect(page).to.include('badge-blocked_phone');
    expect(page).to.include('is on the block list (refused twice)');
    expect(page).to.include('Call anyway');
    await s.agent
      .post(`/orders/${order.id}/operations`)
      .type('form')
      .send({ _csrf: csrfFrom(page) })
      .expect(303);
    expect((await orderRow(order.id)).status).to.equal('pending');
    expect((await s.agent.post('/api/calls/next').expect(200)).body.order.id).to.equal(order.id);
  });

  it('removed from the list, the number’s new orders are normal again', async () => {
    const s = await shop();
    await s.agent.post('/api/settings/blocked-phones').send({ phone: '0611223344' }).expect(201);
    expect((await create(s, { phone: '0611223344', productsName: 'One' })).flags).to.deep.equal(['blocked_phone']);
    await s.agent.delete('/api/settings/blocked-phones/0611223344').expect(204);
    const after = await create(s, { phone: '0611223344', productsName: 'Two' });
    expect(after).to.include({ status: 'pending' });
    expect(after.flags).to.deep.equal([]);
    expect(await operationOf(after.id)).to.include({ status: 'pending' });
    expect((await s.agent.post('/api/calls/next').expect(200)).body.order.id).to.equal(after.id);
  });

  it('per workspace: another workspace’s entries never match, are never listed, and deleting one is 404 and removes nothing; flags are never a client’s', async () => {
    const a = await shop();
    const b = await shop();
    await a.agent.post('/api/settings/blocked-phones').send({ phone: '0611223344' }).expect(201);
    // Nor can a client set flags of its own.
    const order = await create(b, { phone: '0611223344', flags: ['blocked_phone'] });
    expect(order).to.include({ status: 'pending' });
    expect(order.flags).to.deep.equal([]);
    expect((await b.agent.get('/api/settings/blocked-phones').expect(200)).body).to.deep.equal({ blocked_phones: [] });
    await b.agent.delete('/api/settings/blocked-phones/%2B212611223344').expect(404);
    expect(await knex()('blocked_phones').where({ workspace_id: a.workspaceId, phone: '+212611223344' })).to.have.length(1);
    expect((await create(a, { phone: '0611223344' })).flags).to.deep.equal(['blocked_phone']);
  });

  it('the /settings page: a member adds (errors beside the field, input kept) and removes numbers', async () => {
    const owner = await shop();
    const member = await signUp({ target, email: uniqueEmail('member'), invitedBy: owner });
    expect(member.workspaceId).to.equal(owner.workspaceId);
    const csrf = await csrfOf(member.agent, '/settings');

    const bad = await member.agent.post('/settings/blocked-phones').type('form').send({ _csrf: csrf, phone: '0612', reason: 'fake' }).expect(400);
    expect(bad.text).to.match(/id="f-phone-error">Enter a valid Moroccan phone number/);
    expect(bad.text).to.include('value="0612"');
    expect(bad.text).to.include('value="fake"');
    await member.agent.post('/settings/blocked-phones').type('form').send({ _csrf: csrf, phone: '06 11 22 33 44', reason: 'fake orders' }).expect(303);
    const page = (await member.agent.get('/settings').expect(200)).text;
    expect(page).to.include('+212611223344');
    expect(page).to.include('fake orders');
    const again = await member.agent.post('/settings/blocked-phones').type('form').send({ _csrf: csrf, phone: '0611223344', reason: '' }).expect(409);
    expect(again.text).to.match(/id="f-phone-error">This number is on the block list already/);
    expect((await owner.agent.get('/api/settings/blocked-phones').expect(200)).body.blocked_phones).to.have.length(1);

    await member.agent.post('/settings/blocked-phones/delete').type('form').send({ _csrf: csrf, phone: '+212611223344' }).expect(303);
    expect(await knex()('blocked_phones').where({ workspace_id: owner.workspaceId })).to.have.length(0);
    await member.agent.post('/settings/blocked-phones/delete').type('form').send({ _csrf: csrf, phone: '+212611223344' }).expect(404);
  });
});

describe('flags in every representation', () => {
  it('the order.created webhook and the CSV export carry them', async () => {
    const s = await shop();
    await s.agent
      .post('/api/webhooks')
      .send({ url: 'http://127.0.0.1:9/hooks', events: ['order.created'] })
      .expect(201);
    await s.agent.post('/api/settings/blocked-phones').send({ phone: '0611223344' }).expect(201);
    const order = await create(s, { phone: '0611223344' });
    const message = await knex()('webhook_messages').where({ workspace_id: s.workspaceId, event_type: 'order.created' }).first();
    expect(JSON.parse(messageBody(message)).data.order).to.deep.include({ id: order.id, status: 'unconfirmed', flags: ['blocked_phone'] });
    const csv = (await s.agent.get('/api/orders/export.csv?flag=blocked_phone').expect(200)).text
      .replace(/^\ufeff/, '')
      .trim()
      .split('\r\n');
    const flagsAt = csv[0].split(',').indexOf('flags');
    expect(flagsAt).to.be.above(0);
    expect(csv.slice(1)).to.have.length(1);
    expect(csv[1].startsWith(order.id) && csv[1].split(',')[flagsAt] === 'blocked_phone').to.equal(true);
  });
});

describe('flag= filter and badges', () => {
  async function flaggedShop() {
    const s = await shop();
    await s.agent.post('/api/settings/blocked-phones').send({ phone: '0611223344' }).expect(201);
    const plain = await create(s, { clientName: 'Plain', productsName: 'Soap' });
    const duplicate = await create(s, { clientName: 'Twice', productsName: 'soap' });
    const blocked = await create(s, { clientName: 'Blocked', phone: '0611223344' });
    return { s, plain, duplicate, blocked };
  }
  const ids = (body: { orders: Array<{ id: string }> }) => body.orders.map((o) => o.id);

  it('GET /api/orders and the Data API: flag=possible_duplicate, flag=blocked_phone, both, and 400 naming flag for another', async () => {
    const { s, duplicate, blocked } = await flaggedShop();
    expect(ids((await s.agent.get('/api/orders?flag=possible_duplicate').expect(200)).body)).to.deep.equal([duplicate.id]);
    expect(ids((await s.agent.get('/api/orders?flag=blocked_phone').expect(200)).body)).to.deep.equal([blocked.id]);
    expect(ids((await s.agent.get('/api/orders?flag=possible_duplicate,blocked_phone').expect(200)).body)).to.deep.equal([blocked.id, duplicate.id]);
    expect(ids((await s.agent.get('/api/orders?flag=possible_duplicate&status=unconfirmed').expect(200)).body)).to.deep.equal([]);
    const bad = await s.agent.get('/api/orders?flag=fraud').expect(400);
    expect(bad.body.fields).to.have.keys('flag');

    const token = await dataToken(s);
    const data = (path: string) => request(target).get(`/data/v1${path}`).set('apikey', PUBLISHABLE_KEY).set('Authorization', `Bearer ${token}`);
    expect(ids((await data('/orders?flag=blocked_phone').expect(200)).body)).to.deep.equal([blocked.id]);
    expect((await data('/orders?flag=fraud').expect(400)).body.fields).to.have.keys('flag');
  });

  it('the /orders page: badges on the list, the flag filter, and 400 for an unknown flag', async () => {
    const { s } = await flaggedShop();
    const names = (html: string) => [...html.matchAll(/<a href="\/orders\/[\w-]+"><bdi>([^<]+)<\/bdi>/g)].map((m) => m[1]);
    const all = (await s.agent.get('/orders').expect(200)).text;
    expect(names(all)).to.deep.equal(['Blocked', 'Twice', 'Plain']);
    expect(all).to.include('<span class="badge badge-flag badge-possible_duplicate">possible duplicate</span>');
    expect(all).to.include('<span class="badge badge-flag badge-blocked_phone">blocked number</span>');
    expect(names((await s.agent.get('/orders?flag=possible_duplicate').expect(200)).text)).to.deep.equal(['Twice']);
    expect(names((await s.agent.get('/orders?flag=blocked_phone').expect(200)).text)).to.deep.equal(['Blocked']);
    await s.agent.get('/orders?flag=fraud').expect(400);
  });
});
