import { expect } from 'chai';
import { testKnex } from '../helpers/db';
import type { SignedIn } from '../helpers/app';
import { signUp } from '../helpers/app';

/**
 * A new order is one statement (services/orders/service.ts, createOrdersSql): the order, its operation, the
 * job that dispatches it, and what the database's triggers write beside it (the status counts, the
 * order.created webhook message) go in together, or not at all.
 */
const ORDER = { clientName: 'Amina Benali', phone: '0612345678', storeName: 'Atlas Shop', productsName: 'Argan oil x2', totalAmount: '349.00' };

async function shop(): Promise<SignedIn & { workspaceId: string }> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
  await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201);
  return { ...s, workspaceId: s.workspaceId! };
}

/** Everything a new order writes, for one workspace. */
async function written(workspaceId: string) {
  const knex = testKnex();
  const orders = await knex('orders').where({ workspace_id: workspaceId });
  const operations = await knex('operations').where({ workspace_id: workspaceId });
  const jobs = await knex('pgboss.job')
    .where({ name: 'operation-due' })
    .whereRaw("data->>'operationId' = ANY(?)", [operations.map((o) => o.id)]);
  const counted = await knex('order_status_counts').where({ workspace_id: workspaceId }).sum('n as n').first();
  const messages = await knex('webhook_messages').where({ workspace_id: workspaceId, event_type: 'order.created' });
  return { orders, operations, jobs, counted: Number(counted?.n ?? 0), messages };
}

describe('creating an order: all of it in one go, or none of it', () => {
  it('POST /api/orders writes the order, its pending operation, its dispatch job, its status count and order.created together', async () => {
    const s = await shop();
    const res = await s.agent.post('/api/orders').send(ORDER).expect(201);
    const w = await written(s.workspaceId);
    expect(w.orders.map((o) => o.id)).to.deep.equal([res.body.id]);
    expect(w.operations).to.have.length(1);
    expect(w.operations[0]).to.include({ order_id: res.body.id, status: 'pending', direction: 'outbound' });
    expect(w.orders[0].operation_id).to.equal(w.operations[0].id);
    expect(w.jobs).to.have.length(1);
    expect(w.jobs[0]).to.include({ singleton_key: w.operations[0].id, state: 'created' });
    expect(w.counted).to.equal(1);
    expect(w.messages).to.have.length(1);
    expect(w.messages[0].data.order ?? w.messages[0].data).to.deep.include({ id: res.body.id });
  });

  it('when one part is refused by the database, the order, operation, job, count and webhook message are all rolled back', async () => {
    const s = await shop();
    await s.agent.post('/api/orders').send(ORDER).expect(201);
    const before = await written(s.workspaceId);
    const knex = testKnex();
    // A trigger of the test's own refuses this workspace's next operation, in the middle of the statement.
    await knex.raw(`
      CREATE FUNCTION test_refuse_operation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.workspace_id = '${s.workspaceId}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$`);
    await knex.raw('CREATE TRIGGER test_refuse_operation BEFORE INSERT ON operations FOR EACH ROW EXECUTE FUNCTION test_refuse_operation()');
    try {
      const res = await s.agent.post('/api/orders').send({ ...ORDER, clientName: 'Never Written' });
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.equal({ error: 'Internal server error' });
      const page = await s.agent
        .post('/api/orders/import')
        .set('Content-Type', 'text/csv')
        .send('client_name,phone,store_name,products_name\nNever Imported,0612345679,Atlas,Tea\n');
      expect(page.status).to.equal(500);
    } finally {
      await knex.raw('DROP TRIGGER test_refuse_operation ON operations');
      await knex.raw('DROP FUNCTION test_refuse_operation()');
    }
    const after = await written(s.workspaceId);
    expect(after.orders.map((o) => o.id)).to.deep.equal(before.orders.map((o) => o.id));
    expect(after.operations.map((o) => o.id)).to.deep.equal(before.operations.map((o) => o.id));
    expect(after.jobs).to.have.length(before.jobs.length);
    expect(after.counted).to.equal(before.counted);
    expect(after.messages).to.have.length(before.messages.length);
    // And the next order, once nothing refuses it, goes in whole.
    await s.agent
      .post('/api/orders')
      .send({ ...ORDER, clientName: 'Written After' })
      .expect(201);
    const last = await written(s.workspaceId);
    expect([last.orders.length, last.operations.length, last.jobs.length, last.counted, last.messages.length]).to.deep.equal([2, 2, 2, 2, 2]);
  });
});
