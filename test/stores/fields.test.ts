import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../../config';
import type { Order } from '../../services/orders';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfOf, signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey, randomIp } from '../helpers/keys';
import { createOrder, openAllDay, ORDER, orderRow } from '../helpers/loop';

type Shop = SignedIn & { workspaceId: string };

async function shop(): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  await openAllDay(s);
  return { ...s, workspaceId: s.workspaceId! };
}

const ordersOf = (workspaceId: string) => testKnex()('orders').where({ workspace_id: workspaceId });

describe('orders: what a store knows', () => {
  it('POST /api/orders takes external_id, external_ref, total_amount and currency in camelCase or snake_case; source is ours', async () => {
    const s = await shop();
    const camel = await createOrder(s, { ...ORDER, externalId: '5678901234', externalRef: '#1001', totalAmount: '349', currency: 'eur' });
    expect(camel).to.include({
      source: 'api',
      store_connection_id: null,
      external_id: '5678901234',
      external_ref: '#1001',
      total_amount: '349.00',
      currency: 'EUR',
    });
    // The caller cannot say where an order came from, nor tie it to a connection.
    const snake = await createOrder(s, {
      ...ORDER,
      external_ref: ' #1002 ',
      total_amount: 349.5,
      source: 'shopify',
      store_connection_id: '3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    });
    expect(snake).to.include({ source: 'api', store_connection_id: null, external_id: null, external_ref: '#1002', total_amount: '349.50', currency: 'MAD' });
    const comma = await createOrder(s, { ...ORDER, totalAmount: '1200,5' });
    expect(comma).to.include({ total_amount: '1200.50', currency: 'MAD' });
    // No amount: no currency either.
    const bare = await createOrder(s, { ...ORDER, totalAmount: '' });
    expect(bare).to.include({ total_amount: null, currency: null });
    const row = await orderRow(snake.id);
    expect(row).to.include({ source: 'api', store_connection_id: null, external_ref: '#1002', total_amount: 349.5, currency: 'MAD' });
    expect((await s.agent.get(`/api/orders/${snake.id}`).expect(200)).body).to.deep.equal(snake);
  });

  it('400 VALIDATION_ERROR for an amount or currency we cannot read; nothing written', async () => {
    const s = await shop();
    for (const [body, field] of [
      [{ totalAmount: -1 }, 'totalAmount'],
      [{ totalAmount: '12.3456' }, 'totalAmount'],
      [{ totalAmount: 'cent dirhams' }, 'totalAmount'],
      [{ totalAmount: '1234567890123' }, 'totalAmount'],
      [{ totalAmount: true }, 'totalAmount'],
      [{ totalAmount: 10, currency: 'dirham' }, 'currency'],
      [{ externalRef: 'x'.repeat(201) }, 'externalRef'],
    ] as const) {
      const res = await s.agent
        .post('/api/orders')
        .send({ ...ORDER, ...body })
        .expect(400);
      expect(res.body.code, JSON.stringify(body)).to.equal('VALIDATION_ERROR');
      expect(Object.keys(res.body.fields), JSON.stringify(body)).to.deep.equal([field]);
    }
    expect(await ordersOf(s.workspaceId)).to.have.length(0);
  });

  it('source: form from the page, data_api from the Data API, import from a CSV whose total/montant/المبلغ column fills total_amount', async () => {
    const s = await shop();
    const csrf = await csrfOf(s.agent, '/orders/new');
    await s.agent.post('/orders').type('form').send({ _csrf: csrf, client_name: 'Page', phone: '0612345678', store_name: 'S', products_name: 'P' }).expect(303);
    const { key } = await createKey(s);
    const token = (await request(appUrl()).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key}`).expect(200)).body
      .access_token;
    const viaData = (
      await request(appUrl())
        .post('/data/v1/orders')
        .set('apikey', loadConfig(TEST_ENV).publishableKey)
        .set('Authorization', `Bearer ${token}`)
        .send({ ...ORDER, clientName: 'Data', total_amount: '99.90' })
        .expect(201)
    ).body;
    expect(viaData).to.include({ source: 'data_api', total_amount: '99.90', currency: 'MAD' });
    for (const [column, value] of [
      ['total', '349'],
      ['Montant', '120,50'],
      ['المبلغ', '75.5'],
    ]) {
      // A French spreadsheet's decimal comma, quoted as a CSV writer quotes it.
      const csv = `name,phone,store,products,${column},reference\nImported ${column},0612345678,S,P,"${value}",#7\n`;
      const result = (await s.agent.post('/api/orders/import').type('text/csv').send(csv).expect(200)).body;
      expect(result, column).to.include({ imported: 1, skipped: 0 });
    }
    const rows = await ordersOf(s.workspaceId).orderBy('created_at').select('client_name', 'source', 'total_amount', 'currency', 'external_ref');
    expect(rows).to.deep.equal([
      { client_name: 'Page', source: 'form', total_amount: null, currency: null, external_ref: null },
      { client_name: 'Data', source: 'data_api', total_amount: 99.9, currency: 'MAD', external_ref: null },
      { client_name: 'Imported total', source: 'import', total_amount: 349, currency: 'MAD', external_ref: '#7' },
      { client_name: 'Imported Montant', source: 'import', total_amount: 120.5, currency: 'MAD', external_ref: '#7' },
      { client_name: 'Imported المبلغ', source: 'import', total_amount: 75.5, currency: 'MAD', external_ref: '#7' },
    ]);
    const bad = (await s.agent.post('/api/orders/import').type('text/csv').send('name,phone,store,products,total\nX,0612345678,S,P,abc\n').expect(200)).body;
    expect(bad).to.deep.include({ imported: 0, skipped: 1 });
    expect(bad.errors[0].fields).to.have.all.keys('totalAmount');
  });

  it('an edit while pending changes the amount (MAD unless the order names a currency); the store’s id is never edited', async () => {
    const s = await shop();
    const order = await createOrder(s, { ...ORDER, externalId: 'A-1' });
    const edited = (await s.agent.put(`/api/orders/${order.id}`).send({ totalAmount: '200', externalId: 'B-2', externalRef: '#9' }).expect(200)).body;
    expect(edited).to.include({ total_amount: '200.00', currency: 'MAD', external_id: 'A-1', external_ref: '#9' });
    const euros = await createOrder(s, { ...ORDER, totalAmount: 10, currency: 'EUR' });
    expect((await s.agent.put(`/api/orders/${euros.id}`).send({ total_amount: 12 }).expect(200)).body).to.include({ total_amount: '12.00', currency: 'EUR' });
    expect(await orderRow(order.id)).to.include({ external_id: 'A-1', total_amount: 200 });
  });

  it('order.created carries the store fields; an edit of the amount is an order.updated naming it', async () => {
    const s = await shop();
    const endpoint = (await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hook' }).expect(201)).body;
    const order = await createOrder(s, { ...ORDER, externalRef: '#5', totalAmount: 80 });
    await s.agent.put(`/api/orders/${order.id}`).send({ totalAmount: '95.5' }).expect(200);
    const messages = await testKnex()('webhook_messages as m')
      .join('webhook_deliveries as d', 'd.message_id', 'm.id')
      .where('d.endpoint_id', endpoint.id)
      .orderBy('m.created_at')
      .select('m.event_type', 'm.data');
    expect(messages.map((m) => m.event_type)).to.deep.equal(['order.created', 'order.updated']);
    expect(messages[0].data.order).to.include({ source: 'api', external_ref: '#5', total_amount: '80.00', currency: 'MAD', store_connection_id: null });
    expect(messages[0].data.order.flags).to.deep.equal([]);
    expect(messages[1].data).to.deep.include({ changed_fields: ['total_amount'] });
    expect(messages[1].data.order).to.include({ total_amount: '95.50' });
  });

  it('an order written without a source (every order from before sources) reads source "api"', async () => {
    const s = await shop();
    const [{ id }] = await testKnex()('orders').insert(
      { workspace_id: s.workspaceId, client_name: 'Old', phone: '+212612345678', store_name: 'S', products_name: 'P', status: 'pending' },
      ['id'],
    );
    const order: Order = (await s.agent.get(`/api/orders/${id}`).expect(200)).body;
    expect(order).to.include({ source: 'api', store_connection_id: null, external_id: null, external_ref: null, total_amount: null, currency: null });
  });

  it('the database refuses an unknown source, a negative amount, a bad currency, and a store order without its id', async () => {
    const s = await shop();
    const base = { workspace_id: s.workspaceId, client_name: 'X', phone: '+212612345678', store_name: 'S', products_name: 'P', status: 'pending' };
    for (const [fields, constraint] of [
      [{ source: 'fax' }, 'orders_source_check'],
      [{ total_amount: -1 }, 'orders_total_amount_check'],
      [{ currency: 'mad' }, 'orders_currency_check'],
      [{ store_connection_id: '3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d' }, 'orders_store_external_check'],
    ] as const) {
      let error: { constraint?: string } | undefined;
      await testKnex()('orders')
        .insert({ ...base, ...fields })
        .catch((e) => {
          error = e;
        });
      expect(error?.constraint, JSON.stringify(fields)).to.equal(constraint);
    }
    // One order per (connection, store id), whatever arrives in parallel.
    const connection = { store_connection_id: crypto.randomUUID(), external_id: '42', source: 'shopify' };
    const results = await Promise.allSettled([1, 2, 3].map(() => testKnex()('orders').insert({ ...base, ...connection })));
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
    expect(await ordersOf(s.workspaceId).where(connection)).to.have.length(1);
  });

  it('the call page and the order page show the amount to collect and the shop’s reference; the list shows the reference beside the name', async () => {
    const s = await shop();
    const order = await createOrder(s, { ...ORDER, externalRef: '#1001', totalAmount: '349' });
    const list = await s.agent.get('/orders').expect(200);
    expect(list.text).to.contain('<span class="hint"><bdi>#1001</bdi></span>');
    const orderPage = await s.agent.get(`/orders/${order.id}`).expect(200);
    // The amount as the page's language writes it (services/shared/numbers.ts): a no-break space of either width.
    expect(orderPage.text).to.match(/<dt>Amount to collect<\/dt><dd><bdi dir="ltr">MAD[\u00a0\u202f]349\.00<\/bdi><\/dd>/);
    expect(orderPage.text).to.contain('<bdi>#1001</bdi>');
    const csrf = await csrfOf(s.agent);
    const next = await s.agent.post('/calls/next').type('form').send({ _csrf: csrf }).expect(303);
    const callPage = await s.agent.get(next.headers.location).expect(200);
    // The call page shows it beside the number to call, in the first screen.
    expect(callPage.text).to.match(/<p class="call-amount"><bdi dir="ltr">MAD[\u00a0\u202f]349\.00<\/bdi><\/p>/);
    expect(callPage.text).to.contain('<bdi>#1001</bdi>');
  });

  it('/stats adds up the confirmed orders’ amounts in MAD, per day and per store', async () => {
    const s = await shop();
    const add = (storeName: string, status: string, totalAmount?: string, currency?: string) =>
      createOrder(s, { ...ORDER, storeName, status, ...(totalAmount ? { totalAmount } : {}), ...(currency ? { currency } : {}) });
    await add('Atlas', 'confirmed', '349');
    await add('Atlas', 'confirmed', '100.50');
    await add('Atlas', 'confirmed');
    await add('Atlas', 'pending', '1000');
    await add('Bazar', 'confirmed', '20', 'EUR');
    await add('Bazar', 'confirmed', '0.25');
    const res = await s.agent.get('/api/stats').expect(200);
    expect(res.body.confirmed_amount).to.equal('449.75');
    expect(res.body.by_day[29]).to.deep.equal({ date: res.body.to, orders: 6, confirmed: 5, confirmed_amount: '449.75' });
    expect(res.body.by_store).to.deep.equal([
      { store_name: 'Atlas', orders: 4, confirmed: 3, confirmed_amount: '449.50' },
      { store_name: 'Bazar', orders: 2, confirmed: 2, confirmed_amount: '0.25' },
    ]);
    const page = await s.agent.get('/stats').expect(200);
    expect(page.text).to.contain('<dt>Confirmed amount (MAD)</dt><dd><bdi dir="ltr">449.75</bdi></dd>');
  });
});
