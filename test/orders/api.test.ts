import { expect } from 'chai';
import knexFactory from 'knex';
import request from 'supertest';
import { createApp } from '../../app';
import { loadConfig } from '../../config';
import { ORDER_STATUSES } from '../../services/orders';
import type { Order } from '../../services/orders';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp, silentLogger, TEST_ENV, unsetOrderHandler } from '../helpers/app';
import { testDatabaseUrl, testKnex, testSessionPool } from '../helpers/db';

const ORDER = { clientName: 'Amina Benali', phone: '0612345678', storeName: 'Atlas Shop', productsName: 'Argan oil x2' };
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ABSENT_ID = '00000000-0000-4000-8000-000000000000';
const NOT_FOUND = { error: 'Order not found' };

type Shop = SignedIn & { workspaceId: string; handlerId: string };

/** A fresh user and workspace whose order handler is set, so orders can be created. */
async function shopWithHandler(): Promise<Shop> {
  const shop = await signUp();
  const res = await shop.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
  return { ...shop, workspaceId: shop.workspaceId!, handlerId: res.body.id };
}

async function createOrder(shop: SignedIn, body: object = ORDER): Promise<Order> {
  return (await shop.agent.post('/api/orders').send(body).expect(201)).body;
}

const orderRow = (id: string) => testKnex()('orders').where({ id }).first();
const ordersOf = (workspaceId: string) => testKnex()('orders').where({ workspace_id: workspaceId });
const operationsOf = (workspaceId: string) => testKnex()('operations').where({ workspace_id: workspaceId });

/** An order of another workspace, to check that nothing reaches or changes it. */
async function foreignOrder(): Promise<{ order: Order; before: unknown }> {
  const other = await shopWithHandler();
  const order = await createOrder(other, { ...ORDER, clientName: 'Other shop client' });
  return { order, before: await orderRow(order.id) };
}

describe('GET /api/orders', () => {
  it('200: the workspace’s orders only, newest first, each with its operation_id', async () => {
    const shop = await shopWithHandler();
    const { order: foreign } = await foreignOrder();
    const first = await createOrder(shop, { ...ORDER, clientName: 'First' });
    const second = await createOrder(shop, { ...ORDER, clientName: 'Second' });
    const third = await createOrder(shop, { ...ORDER, clientName: 'Third' });
    const res = await shop.agent.get('/api/orders').expect(200);
    expect(res.body.orders.map((o: Order) => o.id)).to.deep.equal([third.id, second.id, first.id]);
    expect(res.body.orders.map((o: Order) => o.id)).not.to.include(foreign.id);
    expect(res.body.orders[2]).to.deep.equal(first);
    const operations = await operationsOf(shop.workspaceId);
    for (const order of res.body.orders) {
      expect(operations.find((op) => op.id === order.operation_id)).to.include({ order_id: order.id });
    }
  });

  it('200: one query whatever the number of orders (no N+1), served by the workspace index', async () => {
    const shop = await shopWithHandler();
    for (let i = 0; i < 12; i++) await createOrder(shop);
    const queries: Array<{ sql: string; bindings: unknown[] }> = [];
    const record = (q: { sql: string; bindings: unknown[] }) => queries.push(q);
    testKnex().on('query', record);
    try {
      const res = await shop.agent.get('/api/orders').expect(200);
      expect(res.body.orders).to.have.length(12);
    } finally {
      testKnex().removeListener('query', record);
    }
    expect(queries, queries.map((q) => q.sql).join('\n')).to.have.length(1);
    const plan = await testKnex().transaction(async (trx) => {
      await trx.raw('SET LOCAL enable_seqscan = off');
      const { rows } = await trx.raw(`EXPLAIN ${queries[0].sql.replace(/\$\d+/g, '?')}`, queries[0].bindings as never[]);
      return rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
    });
    // A workspace-scoped index: ordered (newest first) or, for a small workspace, a bitmap then a sort.
    expect(plan).to.match(/orders_workspace_(status_)?newest_idx/);
  });

  it('200: orders created in the same instant keep one deterministic order', async () => {
    const shop = await shopWithHandler();
    const a = await createOrder(shop);
    const b = await createOrder(shop);
    await testKnex()('orders').whereIn('id', [a.id, b.id]).update({ created_at: '2026-11-22T01:22:01.123Z' });
    const expected = [a.id, b.id].sort().reverse();
    for (let i = 0; i < 3; i++) {
      const res = await shop.agent.get('/api/orders').expect(200);
      expect(res.body.orders.map((o: Order) => o.id)).to.deep.equal(expected);
      expect(res.body.orders[0].created_at).to.equal('2026-11-22T01:22:01.123Z');
    }
  });

  it('200: an empty list for a workspace with no orders', async () => {
    const shop = await signUp();
    expect((await shop.agent.get('/api/orders').expect(200)).body).to.deep.equal({ orders: [] });
  });

  it('401 without a session', async () => {
    const res = await request(appUrl()).get('/api/orders').expect(401);
    expect(res.body).to.deep.equal({ error: 'Unauthorized' });
  });

  it('403 for a user with no workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    expect((await agent.get('/api/orders').expect(403)).body).to.deep.equal({ error: 'No workspace found' });
  });

  it('500 when the orders cannot be loaded, with no detail', async () => {
    // Its own app whose queries give up after 200 ms waiting for a lock that this test holds.
    const knex = knexFactory({
      client: 'pg',
      connection: { connectionString: testDatabaseUrl(), options: '-c lock_timeout=200' },
      pool: { min: 0, max: 2 },
    });
    try {
      const target = createApp({ config: loadConfig(TEST_ENV), knex, sessionPool: testSessionPool(), logger: silentLogger });
      const shop = await signUp({ target });
      await testKnex().transaction(async (trx) => {
        await trx.raw('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
        const res = await shop.agent.get('/api/orders').expect(500);
        expect(res.body).to.deep.equal({ error: 'Internal server error' });
      });
      expect((await shop.agent.get('/api/orders').expect(200)).body).to.deep.equal({ orders: [] });
    } finally {
      await knex.destroy();
    }
  });
});

describe('POST /api/orders', () => {
  it('201: the order with its operation, both stored; the operation is pending, outbound, for the handler', async () => {
    const shop = await shopWithHandler();
    const res = await shop.agent
      .post('/api/orders')
      .send({ ...ORDER, address: '12 Rue Atlas, Casablanca' })
      .expect(201);
    const order: Order = res.body;
    expect(order).to.have.all.keys(
      'id',
      'workspace_id',
      'client_name',
      'phone',
      'store_name',
      'products_name',
      'address',
      'city',
      'note',
      'status',
      'created_at',
      'placed_at',
      'operation_id',
      'flags',
      'source',
      'store_connection_id',
      'external_id',
      'external_ref',
      'total_amount',
      'currency',
      'delivery',
      'assigned_to',
      'assigned_at',
      'rescheduled_for',
    );
    expect(order.flags).to.deep.equal([]);
    expect(order).to.include({ source: 'api', store_connection_id: null, external_id: null, external_ref: null, total_amount: null, currency: null });
    expect(order).to.include({
      workspace_id: shop.workspaceId,
      client_name: 'Amina Benali',
      phone: '+212612345678',
      store_name: 'Atlas Shop',
      products_name: 'Argan oil x2',
      address: '12 Rue Atlas, Casablanca',
      status: 'pending',
    });
    expect(order.id).to.match(UUID);
    expect(order.operation_id).to.match(UUID);
    expect(order.created_at).to.match(ISO_MS);
    const row = await orderRow(order.id);
    expect(row).to.include({ workspace_id: shop.workspaceId, phone: '+212612345678', status: 'pending' });
    expect(row.created_at.toISOString()).to.equal(order.created_at);
    const operations = await operationsOf(shop.workspaceId);
    expect(operations).to.have.length(1);
    expect(operations[0]).to.include({
      id: order.operation_id,
      order_id: order.id,
      agent_id: shop.handlerId,
      direction: 'outbound',
      status: 'pending',
    });
    expect((await shop.agent.get(`/api/orders/${order.id}`).expect(200)).body).to.deep.equal(order);
  });

  it('201: starts in the given status when it is valid; without an address, address is null', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop, { ...ORDER, status: 'postponed' });
    expect(order).to.include({ status: 'postponed', address: null });
    expect(await orderRow(order.id)).to.include({ status: 'postponed', address: null });
    expect(await operationsOf(shop.workspaceId)).to.have.length(1);
  });

  it('201: accepts snake_case, and camelCase wins when both are given', async () => {
    const shop = await shopWithHandler();
    const snake = await createOrder(shop, {
      client_name: 'Snake',
      phone: '0712345678',
      store_name: 'Snake store',
      products_name: 'Snake products',
      address: 'Snake street',
    });
    expect(snake).to.include({ client_name: 'Snake', store_name: 'Snake store', products_name: 'Snake products', address: 'Snake street' });
    const both = await createOrder(shop, {
      clientName: 'Camel',
      client_name: 'Snake',
      storeName: 'Camel store',
      store_name: 'Snake store',
      productsName: 'Camel products',
      products_name: 'Snake products',
      phone: '0612345678',
    });
    expect(both).to.include({ client_name: 'Camel', store_name: 'Camel store', products_name: 'Camel products' });
    expect(await orderRow(both.id)).to.include({ client_name: 'Camel', store_name: 'Camel store', products_name: 'Camel products' });
  });

  it('201: reads the body as JSON whatever its Content-Type', async () => {
    const shop = await shopWithHandler();
    const res = await shop.agent.post('/api/orders').set('Content-Type', 'text/plain').send(JSON.stringify(ORDER)).expect(201);
    expect(res.body.client_name).to.equal(ORDER.clientName);
  });

  it('201: ignores unknown fields; id, workspace_id, created_at and operation_id cannot be set', async () => {
    const shop = await shopWithHandler();
    const other = await signUp();
    const order = await createOrder(shop, {
      ...ORDER,
      id: ABSENT_ID,
      workspace_id: other.workspaceId,
      workspaceId: other.workspaceId,
      created_at: '2000-01-01T00:00:00.000Z',
      operation_id: ABSENT_ID,
      favourite_colour: 'blue',
    });
    expect(order.id).not.to.equal(ABSENT_ID);
    expect(order.operation_id).not.to.equal(ABSENT_ID);
    expect(order.workspace_id).to.equal(shop.workspaceId);
    expect(order.created_at).not.to.equal('2000-01-01T00:00:00.000Z');
    expect(order).not.to.have.property('favourite_colour');
    expect(await ordersOf(other.workspaceId!)).to.have.length(0);
  });

  it('400 INVALID_JSON for a body that is not JSON; nothing is written', async () => {
    const shop = await shopWithHandler();
    const res = await shop.agent.post('/api/orders').set('Content-Type', 'application/json').send('{"clientName": ').expect(400);
    expect(res.body).to.deep.equal({ error: 'Request body is not valid JSON', code: 'INVALID_JSON' });
    expect(await ordersOf(shop.workspaceId)).to.have.length(0);
  });

  it('400 VALIDATION_ERROR naming every required field when all are missing; nothing is written', async () => {
    const shop = await shopWithHandler();
    for (const send of [(t: request.Test) => t.send({}), (t: request.Test) => t]) {
      const res = await send(shop.agent.post('/api/orders')).expect(400);
      expect(res.body).to.deep.equal({
        error: 'Validation failed',
        code: 'VALIDATION_ERROR',
        fields: {
          clientName: 'Client name is required',
          phone: 'Phone is required',
          storeName: 'Store name is required',
          productsName: 'Products are required',
        },
      });
    }
    expect(await ordersOf(shop.workspaceId)).to.have.length(0);
    expect(await operationsOf(shop.workspaceId)).to.have.length(0);
  });

  it('400 VALIDATION_ERROR for blank, non-text and too long fields, all at once', async () => {
    const shop = await shopWithHandler();
    const res = await shop.agent
      .post('/api/orders')
      .send({ clientName: '   ', phone: 612345678, storeName: 's'.repeat(201), productsName: 'p'.repeat(1001), address: 'a'.repeat(501) })
      .expect(400);
    expect(res.body.code).to.equal('VALIDATION_ERROR');
    expect(res.body.fields).to.deep.equal({
      clientName: 'Client name is required',
      phone: 'Phone must be text',
      storeName: 'Store name must be at most 200 characters',
      productsName: 'Products must be at most 1000 characters',
      address: 'Address must be at most 500 characters',
    });
    expect(await ordersOf(shop.workspaceId)).to.have.length(0);
  });

  it('400 for a JSON array, number or string body, never a 500', async () => {
    const shop = await shopWithHandler();
    const array = await shop.agent.post('/api/orders').send([ORDER]).expect(400);
    expect(array.body).to.deep.equal({
      error: 'Validation failed',
      code: 'VALIDATION_ERROR',
      fields: { body: 'The request body must be a JSON object' },
    });
    // The JSON parser accepts only objects and arrays at the top level.
    for (const body of ['42', '"order"', 'null']) {
      const res = await shop.agent.post('/api/orders').set('Content-Type', 'application/json').send(body).expect(400);
      expect(res.body.code).to.equal('INVALID_JSON');
    }
    expect(await ordersOf(shop.workspaceId)).to.have.length(0);
  });

  it('400 INVALID_STATUS listing the allowed values; nothing is written', async () => {
    const shop = await shopWithHandler();
    for (const status of ['shipped', 'PENDING', '', null, 3]) {
      const res = await shop.agent
        .post('/api/orders')
        .send({ ...ORDER, status })
        .expect(400);
      expect(res.body.code).to.equal('INVALID_STATUS');
      expect(res.body.error).to.be.a('string');
      expect(res.body.allowed).to.deep.equal([...ORDER_STATUSES]);
    }
    expect(await ordersOf(shop.workspaceId)).to.have.length(0);
  });

  it('401 without a session', async () => {
    const res = await request(appUrl()).post('/api/orders').send(ORDER).expect(401);
    expect(res.body).to.deep.equal({ error: 'Unauthorized' });
  });

  it('403 for a user with no workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    expect((await agent.post('/api/orders').send(ORDER).expect(403)).body).to.deep.equal({ error: 'No workspace found' });
  });

  it('422 NO_ORDER_HANDLER without a handler agent; no order and no operation are written', async () => {
    const shop = await signUp();
    await unsetOrderHandler(shop);
    await shop.agent.post('/api/agents').send({ name: 'Not the handler' }).expect(201);
    const res = await shop.agent.post('/api/orders').send(ORDER).expect(422);
    expect(res.body).to.have.all.keys('error', 'code', 'redirectTo');
    expect(res.body).to.include({ code: 'NO_ORDER_HANDLER', redirectTo: '/agents' });
    expect(await ordersOf(shop.workspaceId!)).to.have.length(0);
    expect(await operationsOf(shop.workspaceId!)).to.have.length(0);
  });

  it('50 parallel creates make 50 orders and 50 operations', async () => {
    const shop = await shopWithHandler();
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => shop.agent.post('/api/orders').send({ ...ORDER, clientName: `Client ${i}` })));
    expect(responses.map((r) => r.status)).to.deep.equal(Array(50).fill(201));
    const orders = await ordersOf(shop.workspaceId);
    const operations = await operationsOf(shop.workspaceId);
    expect(orders).to.have.length(50);
    expect(operations).to.have.length(50);
    expect(new Set(operations.map((op) => op.order_id))).to.deep.equal(new Set(orders.map((o) => o.id)));
    expect(new Set(responses.map((r) => r.body.operation_id))).to.deep.equal(new Set(operations.map((op) => op.id)));
    expect(operations.every((op) => op.agent_id === shop.handlerId)).to.equal(true);
  });

  describe('phone', () => {
    const accepted = ['0612345678', '06 12 34 56 78', '+212612345678', '00212612345678', '212612345678', '+212 (0)6 12 34 56 78'];
    for (const phone of accepted) {
      it(`201: ${JSON.stringify(phone)} is stored as +212612345678`, async () => {
        const shop = await shopWithHandler();
        const order = await createOrder(shop, { ...ORDER, phone });
        expect(order.phone).to.equal('+212612345678');
        expect((await orderRow(order.id)).phone).to.equal('+212612345678');
      });
    }

    for (const [phone, stored] of [
      ['07 12 34 56 78', '+212712345678'],
      ['0522 12 34 56', '+212522123456'],
    ]) {
      it(`201: ${JSON.stringify(phone)} is stored as ${stored}`, async () => {
        const shop = await shopWithHandler();
        expect((await createOrder(shop, { ...ORDER, phone })).phone).to.equal(stored);
      });
    }

    for (const phone of ['061234567', '0683123456', '+33612345678', '12345']) {
      it(`400: ${JSON.stringify(phone)} is rejected with fields.phone; nothing is written`, async () => {
        const shop = await shopWithHandler();
        const res = await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone })
          .expect(400);
        expect(res.body.code).to.equal('VALIDATION_ERROR');
        expect(res.body.fields).to.deep.equal({ phone: 'Enter a valid Moroccan phone number, e.g. 06 12 34 56 78' });
        expect(await ordersOf(shop.workspaceId)).to.have.length(0);
      });
    }
  });

  describe('Idempotency-Key', () => {
    it('a retry with the same key and body returns the first response and creates nothing', async () => {
      const shop = await shopWithHandler();
      const first = await shop.agent.post('/api/orders').set('Idempotency-Key', 'order-123').send(ORDER).expect(201);
      await shop.agent.put(`/api/orders/${first.body.id}`).send({ status: 'confirmed' }).expect(200);
      const retry = await shop.agent.post('/api/orders').set('Idempotency-Key', 'order-123').send(ORDER).expect(201);
      expect(retry.text).to.equal(first.text);
      expect(retry.headers['idempotent-replayed']).to.equal('true');
      expect(first.headers).not.to.have.property('idempotent-replayed');
      expect(await ordersOf(shop.workspaceId)).to.have.length(1);
      expect(await operationsOf(shop.workspaceId)).to.have.length(1);
    });

    it('422 IDEMPOTENCY_KEY_REUSED for the same key with a different body; nothing is created', async () => {
      const shop = await shopWithHandler();
      await shop.agent.post('/api/orders').set('Idempotency-Key', 'k1').send(ORDER).expect(201);
      const res = await shop.agent
        .post('/api/orders')
        .set('Idempotency-Key', 'k1')
        .send({ ...ORDER, productsName: 'Something else' })
        .expect(422);
      expect(res.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
      const orders = await ordersOf(shop.workspaceId);
      expect(orders).to.have.length(1);
      expect(orders[0].products_name).to.equal(ORDER.productsName);
    });

    it('keys are per workspace: the same key in another workspace creates its own order', async () => {
      const a = await shopWithHandler();
      const b = await shopWithHandler();
      const fromA = await a.agent.post('/api/orders').set('Idempotency-Key', 'shared-key').send(ORDER).expect(201);
      const fromB = await b.agent.post('/api/orders').set('Idempotency-Key', 'shared-key').send(ORDER).expect(201);
      expect(fromB.body.id).not.to.equal(fromA.body.id);
      expect(fromB.body.workspace_id).to.equal(b.workspaceId);
      expect(await ordersOf(a.workspaceId)).to.have.length(1);
      expect(await ordersOf(b.workspaceId)).to.have.length(1);
    });

    it('concurrent duplicates create one order and all get its response', async () => {
      const shop = await shopWithHandler();
      const responses = await Promise.all(Array.from({ length: 10 }, () => shop.agent.post('/api/orders').set('Idempotency-Key', 'burst').send(ORDER)));
      expect(responses.map((r) => r.status)).to.deep.equal(Array(10).fill(201));
      expect(new Set(responses.map((r) => JSON.stringify(r.body))).size).to.equal(1);
      expect(await ordersOf(shop.workspaceId)).to.have.length(1);
      expect(await operationsOf(shop.workspaceId)).to.have.length(1);
    });

    it('a failed create does not use up the key: after setting a handler the retry creates the order', async () => {
      const shop = await signUp();
      await unsetOrderHandler(shop);
      await shop.agent.post('/api/orders').set('Idempotency-Key', 'retry-me').send(ORDER).expect(422);
      expect(await testKnex()('idempotency_keys').where({ workspace_id: shop.workspaceId })).to.have.length(0);
      await shop.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
      await shop.agent.post('/api/orders').set('Idempotency-Key', 'retry-me').send(ORDER).expect(201);
      expect(await ordersOf(shop.workspaceId!)).to.have.length(1);
    });

    it('after 24 hours the key is free again', async () => {
      const shop = await shopWithHandler();
      const first = await shop.agent.post('/api/orders').set('Idempotency-Key', 'daily').send(ORDER).expect(201);
      await testKnex()('idempotency_keys')
        .where({ workspace_id: shop.workspaceId, key: 'daily' })
        .update({ created_at: testKnex().raw("now() - interval '25 hours'") });
      const second = await shop.agent.post('/api/orders').set('Idempotency-Key', 'daily').send(ORDER).expect(201);
      expect(second.body.id).not.to.equal(first.body.id);
      expect(await ordersOf(shop.workspaceId)).to.have.length(2);
    });

    it('400 INVALID_IDEMPOTENCY_KEY for a key over 255 characters; nothing is written', async () => {
      const shop = await shopWithHandler();
      const res = await shop.agent.post('/api/orders').set('Idempotency-Key', 'k'.repeat(256)).send(ORDER).expect(400);
      expect(res.body.code).to.equal('INVALID_IDEMPOTENCY_KEY');
      expect(await ordersOf(shop.workspaceId)).to.have.length(0);
      await shop.agent.post('/api/orders').set('Idempotency-Key', 'k'.repeat(255)).send(ORDER).expect(201);
    });
  });
});

describe('GET /api/orders/:id', () => {
  it('200: the order', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    expect((await shop.agent.get(`/api/orders/${order.id}`).expect(200)).body).to.deep.equal(order);
  });

  it('401 without a session', async () => {
    const { order } = await foreignOrder();
    expect((await request(appUrl()).get(`/api/orders/${order.id}`).expect(401)).body).to.deep.equal({ error: 'Unauthorized' });
  });

  it('403 for a user with no workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    expect((await agent.get(`/api/orders/${ABSENT_ID}`).expect(403)).body).to.deep.equal({ error: 'No workspace found' });
  });

  it('404 with the same body for an absent id, a non-UUID id and another workspace’s order', async () => {
    const shop = await shopWithHandler();
    const { order, before } = await foreignOrder();
    for (const id of [ABSENT_ID, 'not-a-uuid', '1', order.id]) {
      expect((await shop.agent.get(`/api/orders/${id}`).expect(404)).body).to.deep.equal(NOT_FOUND);
    }
    expect(await orderRow(order.id)).to.deep.equal(before);
  });
});

describe('PUT /api/orders/:id', () => {
  it('200: edits content while pending, normalizing the phone', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    const res = await shop.agent
      .put(`/api/orders/${order.id}`)
      .send({ client_name: 'Karim', phone: '+212 (0)7 12 34 56 78', storeName: 'New store', productsName: 'Tea', address: 'Fes' })
      .expect(200);
    expect(res.body).to.deep.equal({
      ...order,
      client_name: 'Karim',
      phone: '+212712345678',
      store_name: 'New store',
      products_name: 'Tea',
      address: 'Fes',
    });
    expect(await orderRow(order.id)).to.include({ client_name: 'Karim', phone: '+212712345678', address: 'Fes', status: 'pending' });
  });

  it('200: the status changes from any status to any other', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    for (const status of ['calling', 'confirmed', 'pending', 'order-changed', 'unrecognized']) {
      const res = await shop.agent.put(`/api/orders/${order.id}`).send({ status }).expect(200);
      expect(res.body).to.deep.equal({ ...order, status });
      expect((await orderRow(order.id)).status).to.equal(status);
    }
  });

  it('200: status and content together on a pending order apply both', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    const res = await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed', clientName: 'Both' }).expect(200);
    expect(res.body).to.include({ status: 'confirmed', client_name: 'Both' });
    expect(await orderRow(order.id)).to.include({ status: 'confirmed', client_name: 'Both' });
  });

  it('200: address "" clears it; camelCase wins over snake_case; fields left out keep their value', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop, { ...ORDER, address: 'Rabat' });
    const res = await shop.agent
      .put(`/api/orders/${order.id}`)
      .send({ address: '', storeName: 'Camel', store_name: 'Snake', id: ABSENT_ID, created_at: '2000-01-01T00:00:00.000Z' })
      .expect(200);
    expect(res.body).to.deep.equal({ ...order, address: null, store_name: 'Camel' });
    expect(await orderRow(order.id)).to.include({ address: null, store_name: 'Camel', client_name: ORDER.clientName });
  });

  it('200: an empty body changes nothing and returns the order', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    expect((await shop.agent.put(`/api/orders/${order.id}`).send({}).expect(200)).body).to.deep.equal(order);
  });

  it('400 INVALID_JSON for a body that is not JSON; nothing changes', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    const before = await orderRow(order.id);
    const res = await shop.agent.put(`/api/orders/${order.id}`).set('Content-Type', 'application/json').send('{status').expect(400);
    expect(res.body.code).to.equal('INVALID_JSON');
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('400 INVALID_STATUS listing the allowed values; nothing changes', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    const before = await orderRow(order.id);
    const res = await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'shipped', clientName: 'Changed' }).expect(400);
    expect(res.body).to.include({ code: 'INVALID_STATUS' });
    expect(res.body.allowed).to.deep.equal([...ORDER_STATUSES]);
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('400 VALIDATION_ERROR for blank required fields and a bad phone; nothing changes', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    const before = await orderRow(order.id);
    const res = await shop.agent
      .put(`/api/orders/${order.id}`)
      .send({ clientName: ' ', storeName: '', productsName: null, phone: '0683123456', status: 'confirmed' })
      .expect(400);
    expect(res.body.code).to.equal('VALIDATION_ERROR');
    expect(res.body.fields).to.have.all.keys('clientName', 'storeName', 'productsName', 'phone');
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('401 without a session', async () => {
    const { order, before } = await foreignOrder();
    await request(appUrl()).put(`/api/orders/${order.id}`).send({ status: 'failed' }).expect(401);
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('403 for a user with no workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    const { order, before } = await foreignOrder();
    await agent.put(`/api/orders/${order.id}`).send({ status: 'failed' }).expect(403);
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('404 with the same body for an absent id, a non-UUID id and another workspace’s order, which stays unchanged', async () => {
    const shop = await shopWithHandler();
    const { order, before } = await foreignOrder();
    for (const id of [ABSENT_ID, 'not-a-uuid', order.id]) {
      for (const body of [{ status: 'failed' }, { clientName: 'Hijacked' }, { status: 'failed', clientName: 'Hijacked' }]) {
        expect((await shop.agent.put(`/api/orders/${id}`).send(body).expect(404)).body).to.deep.equal(NOT_FOUND);
      }
    }
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('409 ORDER_NOT_EDITABLE for content on a non-pending order, even with a status; nothing changes', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed' }).expect(200);
    const before = await orderRow(order.id);
    for (const body of [{ clientName: 'Late edit' }, { address: '' }, { status: 'pending', clientName: 'Late edit' }]) {
      const res = await shop.agent.put(`/api/orders/${order.id}`).send(body).expect(409);
      expect(res.body).to.have.all.keys('error', 'code');
      expect(res.body.code).to.equal('ORDER_NOT_EDITABLE');
      expect(await orderRow(order.id)).to.deep.equal(before);
    }
  });

  it('a content edit never lands on an order that is no longer pending (30 rounds against a concurrent status change)', async () => {
    const shop = await shopWithHandler();
    for (let round = 0; round < 30; round++) {
      const order = await createOrder(shop);
      const [statusChange, edit] = await Promise.all([
        shop.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed' }),
        shop.agent.put(`/api/orders/${order.id}`).send({ clientName: `Edited ${round}`, address: 'Tangier' }),
      ]);
      expect(statusChange.status).to.equal(200);
      const row = await orderRow(order.id);
      expect(row.status).to.equal('confirmed');
      if (edit.status === 200) {
        // The edit was applied while the order was still pending.
        expect(edit.body).to.include({ status: 'pending', client_name: `Edited ${round}` });
        expect(row).to.include({ client_name: `Edited ${round}`, address: 'Tangier' });
      } else {
        expect(edit.status).to.equal(409);
        expect(edit.body.code).to.equal('ORDER_NOT_EDITABLE');
        expect(row).to.include({ client_name: ORDER.clientName, address: null });
      }
    }
  });
});

describe('DELETE /api/orders/:id', () => {
  it('204 with no body; the order and its operation are gone', async () => {
    const shop = await shopWithHandler();
    const order = await createOrder(shop);
    const res = await shop.agent.delete(`/api/orders/${order.id}`).expect(204);
    expect(res.text).to.equal('');
    expect(await orderRow(order.id)).to.equal(undefined);
    expect(await testKnex()('operations').where({ id: order.operation_id })).to.have.length(0);
    await shop.agent.get(`/api/orders/${order.id}`).expect(404);
  });

  it('401 without a session', async () => {
    const { order, before } = await foreignOrder();
    await request(appUrl()).delete(`/api/orders/${order.id}`).expect(401);
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('403 for a user with no workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    const { order, before } = await foreignOrder();
    await agent.delete(`/api/orders/${order.id}`).expect(403);
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('404 with the same body for an absent id, a non-UUID id and another workspace’s order, which stays', async () => {
    const shop = await shopWithHandler();
    const { order, before } = await foreignOrder();
    for (const id of [ABSENT_ID, 'not-a-uuid', order.id]) {
      expect((await shop.agent.delete(`/api/orders/${id}`).expect(404)).body).to.deep.equal(NOT_FOUND);
    }
    expect(await orderRow(order.id)).to.deep.equal(before);
    expect(await testKnex()('operations').where({ id: order.operation_id })).to.have.length(1);
  });
});
