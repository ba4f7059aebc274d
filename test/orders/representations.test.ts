import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import type request from 'supertest';
import { API_FIELDS, CALL_REQUESTED_FIELDS, CSV_COLUMNS, WEBHOOK_FIELDS } from '../../db/order-fields';
import { messageBody } from '../../services/webhooks';
import type { RunningWorker } from '../../worker';
import { testKnex } from '../helpers/db';
import { agentDouble, createOrder, humanShop, ORDER, testWorker, voiceShop, waitFor } from '../helpers/loop';

/**
 * Each representation of an order carries exactly the fields db/order-fields.ts gives it: a field
 * added to one of them (or taken out) without the definition saying so fails here.
 */
const FULL = { ...ORDER, address: '12 rue Atlas', city: 'Fès', note: 'Après 18h', externalId: 'ext-1', externalRef: '#1001', totalAmount: '349.5' };

/** The answer's bytes exactly as sent (a BOM first). */
function rawBody(res: request.Response, callback: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
}

describe('an order’s representations follow its one definition (db/order-fields.ts)', function () {
  this.timeout(90_000);

  it('the API’s JSON: a new order, the order read back and a page of the list have exactly the API’s fields, in its order', async () => {
    const shop = await humanShop();
    const created = await shop.agent.post('/api/orders').send(FULL).expect(201);
    expect(Object.keys(created.body)).to.deep.equal(API_FIELDS);
    const read = await shop.agent.get(`/api/orders/${created.body.id}`).expect(200);
    expect(Object.keys(read.body)).to.deep.equal(API_FIELDS);
    const list = await shop.agent.get('/api/orders').expect(200);
    expect(Object.keys(list.body.orders[0])).to.deep.equal(API_FIELDS);
  });

  it('the CSV export: exactly the export’s columns, in their order, in every language', async () => {
    const shop = await humanShop();
    await createOrder(shop, FULL);
    const res = await shop.agent.get('/api/orders/export.csv').buffer(true).parse(rawBody).expect(200);
    const [header, row] = parse((res.body as Buffer).subarray(3).toString('utf8')) as string[][];
    expect(header).to.deep.equal(CSV_COLUMNS.map((column) => column.header));
    expect(row).to.have.length(CSV_COLUMNS.length);
    for (const lang of ['fr', 'ar']) {
      const other = await shop.agent.get('/api/orders/export.csv').query({ lang }).buffer(true).parse(rawBody).expect(200);
      const [translated, cells] = parse((other.body as Buffer).subarray(3).toString('utf8')) as string[][];
      expect(translated, lang).to.have.length(CSV_COLUMNS.length);
      expect(cells, lang).to.deep.equal(row);
    }
  });

  it('a webhook: order.created’s stored order has exactly the webhook’s fields; the body sent has the API’s', async () => {
    const shop = await humanShop();
    await shop.agent
      .post('/api/webhooks')
      .send({ url: 'http://127.0.0.1:9/hook', events: ['order.created'] })
      .expect(201);
    const order = await createOrder(shop, FULL);
    const message = await testKnex()('webhook_messages').where({ workspace_id: shop.workspaceId, event_type: 'order.created' }).first();
    expect(Object.keys(message.data)).to.deep.equal(['order']);
    expect(Object.keys(message.data.order).sort()).to.deep.equal([...WEBHOOK_FIELDS].sort());
    expect(message.data.order.id).to.equal(order.id);
    const sent = JSON.parse(messageBody(message));
    expect(Object.keys(sent.data.order)).to.deep.equal(API_FIELDS);
  });

  describe('a call.requested', () => {
    let worker: RunningWorker;
    before(async () => {
      worker = await testWorker();
    });
    after(async () => {
      await worker.stop();
    });

    it('carries exactly the call.requested’s order fields, in their order', async () => {
      const agent = await agentDouble();
      try {
        const shop = await voiceShop(agent.url);
        const order = await createOrder(shop, FULL);
        const sent = await waitFor('call.requested received', async () => agent.received.find((r) => r.json.data.order.id === order.id));
        expect(Object.keys(sent.json.data.order)).to.deep.equal(CALL_REQUESTED_FIELDS);
      } finally {
        await agent.close();
      }
    });
  });
});
