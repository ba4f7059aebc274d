import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfOf, signUp } from '../helpers/app';
import { openAllDay } from '../helpers/loop';
import { testKnex } from '../helpers/db';

/**
 * What real stores send: each platform's documented order sample (test/fixtures/stores), with only
 * what a Moroccan cash-on-delivery shop changes, signed as the platform signs and sent to the intake.
 */
const fixture = (name: string) => fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', name), 'utf8');
const SHOPIFY = JSON.parse(fixture('shopify-orders-create.json'));
const WOO = JSON.parse(fixture('woocommerce-order.json'));
const YOUCAN = JSON.parse(fixture('youcan-order-create.json'));

type Kind = 'shopify' | 'woocommerce' | 'youcan';
type Shop = SignedIn & { workspaceId: string; storeId: string; secret: string; kind: Kind };

async function shop(kind: Kind): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  const given = kind === 'woocommerce' ? undefined : `${kind}-secret-${crypto.randomUUID()}`;
  const store = (
    await s.agent
      .post('/api/stores')
      .send({ kind, name: 'Atlas', ...(given ? { secret: given } : {}), ...(kind === 'shopify' ? { shop: 'atlas.myshopify.com' } : {}) })
      .expect(201)
  ).body;
  return { ...s, workspaceId: s.workspaceId!, storeId: store.id, secret: given ?? store.secret, kind };
}

/** Sends the exact text as the platform does, signed with the connection's key; `topic` as the platform names it. */
function deliver(s: Shop, text: string, topic?: string) {
  const raw = Buffer.from(text);
  const req = request(appUrl()).post(`/hooks/stores/${s.storeId}`).set('Content-Type', 'application/json');
  if (s.kind === 'shopify')
    req
      .set('X-Shopify-Topic', topic ?? 'orders/create')
      .set('X-Shopify-Webhook-Id', crypto.randomUUID())
      .set('X-Shopify-Hmac-Sha256', crypto.createHmac('sha256', s.secret).update(raw).digest('base64'));
  else if (s.kind === 'woocommerce')
    req
      .set('X-WC-Webhook-Topic', topic ?? 'order.created')
      .set('X-WC-Webhook-Delivery-ID', crypto.randomUUID())
      .set('X-WC-Webhook-Signature', crypto.createHmac('sha256', s.secret).update(raw).digest('base64'));
  else {
    req.set('x-youcan-signature', crypto.createHmac('sha256', s.secret).update(raw).digest('hex'));
    if (topic) req.set('x-youcan-event', topic);
  }
  return req.send(text);
}

const send = async (s: Shop, body: unknown, topic?: string) => (await deliver(s, JSON.stringify(body), topic).expect(200)).body.result;
const ordersOf = (s: Shop) => testKnex()('orders').where({ workspace_id: s.workspaceId });
const onlyOrder = async (s: Shop) => {
  const orders = await ordersOf(s);
  expect(orders).to.have.length(1);
  return (await s.agent.get(`/api/orders/${orders[0].id}`).expect(200)).body;
};

describe('store intake: what real stores send', () => {
  describe('Shopify', () => {
    it('an edited order: current_quantity and current_total_price are the truth, an item edited out is left out', async () => {
      const s = await shop('shopify');
      expect(await send(s, SHOPIFY)).to.equal('created');
      expect(await onlyOrder(s)).to.include({ products_name: '2 × Babouches - 40, 1 × Tajine', total_amount: '349.00' });
      // The shop edits the Tajine out: quantity and total_price stay as ordered.
      const edited = {
        ...SHOPIFY,
        updated_at: '2026-11-24T11:02:00+01:00',
        current_total_price: '229.00',
        current_subtotal_price: '200.00',
        line_items: [
          { ...SHOPIFY.line_items[0], current_quantity: 2 },
          { ...SHOPIFY.line_items[1], current_quantity: 0 },
        ],
      };
      expect(await send(s, edited, 'orders/updated')).to.equal('updated');
      expect(await onlyOrder(s)).to.include({ products_name: '2 × Babouches - 40', total_amount: '229.00', currency: 'MAD' });
      // An order created after an edit reads the same.
      const other = await shop('shopify');
      expect(await send(other, edited, 'orders/updated')).to.equal('created');
      expect(await onlyOrder(other)).to.include({ products_name: '2 × Babouches - 40', total_amount: '229.00' });
    });

    it('a multi-currency shop: the amount to collect is the presentment money the customer pays', async () => {
      const s = await shop('shopify');
      const euros = {
        ...SHOPIFY,
        presentment_currency: 'EUR',
        current_total_price_set: { shop_money: { amount: '349.00', currency_code: 'MAD' }, presentment_money: { amount: '32.15', currency_code: 'EUR' } },
      };
      expect(await send(s, euros)).to.equal('created');
      expect(await onlyOrder(s)).to.include({ total_amount: '32.15', currency: 'EUR' });
    });

    it('an id above 2^53 is kept exact, as every id is read from the raw JSON as text', async () => {
      const s = await shop('shopify');
      const text = JSON.stringify({ ...SHOPIFY, id: 'ID', name: '#1002' }).replace('"ID"', '820982911946154508');
      expect(Number('820982911946154508').toString()).to.not.equal('820982911946154508');
      expect((await deliver(s, text).expect(200)).body.result).to.equal('created');
      const order = await onlyOrder(s);
      expect(order.external_id).to.equal('820982911946154508');
      const [event] = await testKnex()('store_events').where({ connection_id: s.storeId });
      expect(event.external_id).to.equal('820982911946154508');
      // Its later update finds that order, not a neighbour.
      const later = text
        .replace('"updated_at":"2026-11-24T10:15:33+01:00"', '"updated_at":"2026-11-24T10:40:00+01:00"')
        .replace('"note":null', '"note":"Appeler avant"');
      expect((await deliver(s, later, 'orders/updated').expect(200)).body.result).to.equal('updated');
      expect(await onlyOrder(s)).to.include({ external_id: '820982911946154508', note: 'Appeler avant' });
    });

    it('out of order: an update older than the one applied changes nothing; the newer address stays', async () => {
      const s = await shop('shopify');
      expect(await send(s, SHOPIFY)).to.equal('created');
      const at = (time: string, city: string) => ({ ...SHOPIFY, updated_at: time, shipping_address: { ...SHOPIFY.shipping_address, address2: null, city } });
      expect(await send(s, at('2026-11-24T10:30:00+01:00', 'Rabat'), 'orders/updated')).to.equal('updated');
      expect(await send(s, at('2026-11-24T10:20:00+01:00', 'Fès'), 'orders/updated')).to.equal('ignored_unchanged');
      expect(await onlyOrder(s)).to.include({ address: 'Rue 12, Maarif, Rabat', city: 'Rabat' });
      // The orders/create that arrives last is older still.
      expect(await send(s, SHOPIFY, 'orders/create')).to.equal('ignored_unchanged');
      expect(await onlyOrder(s)).to.include({ city: 'Rabat' });
    });

    it('an update of the same updated_at with other content is applied; the same content again changes nothing', async () => {
      const s = await shop('shopify');
      const at = { ...SHOPIFY, updated_at: '2026-11-24T10:30:00+01:00' };
      expect(await send(s, at, 'orders/updated')).to.equal('created');
      expect(await send(s, { ...at, note: 'Livrer après 18h' }, 'orders/updated')).to.equal('updated');
      expect(await send(s, { ...at, note: 'Livrer après 18h' }, 'orders/updated')).to.equal('ignored_unchanged');
      expect(await onlyOrder(s)).to.include({ note: 'Livrer après 18h' });
    });

    it('the customer note and the city; a billing-only checkout uses the billing address', async () => {
      const s = await shop('shopify');
      const billingOnly = { ...SHOPIFY, note: 'Livrer après 18h', shipping_address: null };
      expect(await send(s, billingOnly)).to.equal('created');
      expect(await onlyOrder(s)).to.include({
        client_name: 'Amina Benali',
        phone: '+212612345678',
        address: 'Rue 12, Maarif, Casablanca',
        city: 'Casablanca',
        note: 'Livrer après 18h',
      });
    });
  });

  describe('WooCommerce', () => {
    it('HTML entities in names and products are decoded once', async () => {
      const s = await shop('woocommerce');
      const order = {
        ...WOO,
        shipping: { ...WOO.shipping, first_name: 'Salma', last_name: 'Idrissi &amp; Fils' },
        line_items: [
          { ...WOO.line_items[0], name: 'Ship Your Idea &ndash; Caftan' },
          { ...WOO.line_items[1], name: 'Savon &#8211; noir &amp;amp; beldi' },
        ],
      };
      expect(await send(s, order)).to.equal('created');
      expect(await onlyOrder(s)).to.include({
        client_name: 'Salma Idrissi & Fils',
        products_name: '2 × Ship Your Idea – Caftan, 1 × Savon – noir &amp; beldi',
      });
      const page = await s.agent.get(`/orders/${(await ordersOf(s))[0].id}`).expect(200);
      expect(page.text).to.contain('Ship Your Idea – Caftan').and.contain('Salma Idrissi &amp; Fils');
    });

    it('two updates within the same second are both applied, not lost as duplicates; an older one changes nothing', async () => {
      const s = await shop('woocommerce');
      expect(await send(s, WOO)).to.equal('created');
      const second = { ...WOO, date_modified: '2026-11-24T10:31:07', date_modified_gmt: '2026-11-24T09:31:07' };
      expect(await send(s, { ...second, shipping: { ...WOO.shipping, city: 'Meknès' } }, 'order.updated')).to.equal('updated');
      expect(await send(s, { ...second, shipping: { ...WOO.shipping, city: 'Rabat' } }, 'order.updated')).to.equal('updated');
      expect(await onlyOrder(s)).to.include({ city: 'Rabat' });
      const older = { ...WOO, date_modified: '2026-11-24T10:25:00', date_modified_gmt: '2026-11-24T09:25:00', shipping: { ...WOO.shipping, city: 'Oujda' } };
      expect(await send(s, older, 'order.updated')).to.equal('ignored_unchanged');
      expect(await onlyOrder(s)).to.include({ city: 'Rabat' });
      const results = (await testKnex()('store_events').where({ connection_id: s.storeId }).orderBy('received_at')).map((e) => e.result);
      expect(results).to.deep.equal(['created', 'updated', 'updated', 'ignored_unchanged']);
    });

    it('the customer note; an empty shipping address falls back to the billing one; a 3-decimal total in TND', async () => {
      const s = await shop('woocommerce');
      const empty = { first_name: '', last_name: '', company: '', address_1: '', address_2: '', city: '', state: '', postcode: '', country: '', phone: '' };
      const order = { ...WOO, customer_note: 'Livrer après 18h', shipping: empty, total: '89.350', currency: 'TND' };
      expect(await send(s, order)).to.equal('created');
      const created = await onlyOrder(s);
      expect(created).to.include({ note: 'Livrer après 18h', total_amount: '89.350', currency: 'TND', city: WOO.billing.city });
      expect(created.address).to.equal([WOO.billing.address_1, WOO.billing.address_2, WOO.billing.city].filter(Boolean).join(', '));
      expect((await ordersOf(s))[0].total_amount).to.equal(89.35);
      const page = await s.agent.get(`/orders/${created.id}`).expect(200);
      expect(page.text).to.contain('89.350').and.contain('Livrer après 18h');
    });
  });

  describe('YouCan', () => {
    it('the phone falls back to shipping.address.phone, the name to customer.full_name; the note is kept', async () => {
      const s = await shop('youcan');
      const order = {
        ...YOUCAN,
        notes: 'Livrer après 18h',
        customer: { ...YOUCAN.customer, first_name: null, last_name: null, phone: null, full_name: 'Hélène Ouazzani' },
        shipping: { ...YOUCAN.shipping, address: { ...YOUCAN.shipping.address, phone: '0661234567' } },
      };
      expect(await send(s, order)).to.equal('created');
      expect(await onlyOrder(s)).to.include({ client_name: 'Hélène Ouazzani', phone: '+212661234567', note: 'Livrer après 18h', city: 'Marrakech' });
    });

    it('with no phone on the customer nor the shipping address, the billing address’s phone', async () => {
      const s = await shop('youcan');
      const order = {
        ...YOUCAN,
        customer: { ...YOUCAN.customer, phone: null },
        billing: { address: { ...YOUCAN.shipping.address, phone: '0677123456' } },
      };
      expect(await send(s, order)).to.equal('created');
      expect(await onlyOrder(s)).to.include({ phone: '+212677123456', client_name: 'Hélène Ouazzani', city: 'Marrakech' });
    });

    it('paid is read from payment.status_text as well as the status code; anything else is cash on delivery', async () => {
      const paid = await shop('youcan');
      expect(await send(paid, { ...YOUCAN, payment: { status: 1, status_text: 'paid' } })).to.equal('ignored_paid');
      const paidByText = await shop('youcan');
      expect(await send(paidByText, { ...YOUCAN, payment: { status: 3, status_text: 'paid' } })).to.equal('ignored_paid');
      const pending = await shop('youcan');
      expect(await send(pending, { ...YOUCAN, payment: { status: 0, status_text: 'pending' } })).to.equal('created');
      expect(await ordersOf(paid)).to.deep.equal([]);
    });

    it('order.update, where offered, follows the same rule: newer applied, older ignored', async () => {
      const s = await shop('youcan');
      expect(await send(s, { ...YOUCAN, updated_at: '2026-11-24 10:42:07' })).to.equal('created');
      const at = (time: string, city: string) => ({
        ...YOUCAN,
        updated_at: time,
        shipping: { ...YOUCAN.shipping, address: { ...YOUCAN.shipping.address, city } },
      });
      expect(await send(s, at('2026-11-24 11:00:00', 'Agadir'), 'order.update')).to.equal('updated');
      expect(await send(s, at('2026-11-24 10:50:00', 'Safi'), 'order.update')).to.equal('ignored_unchanged');
      expect(await onlyOrder(s)).to.include({ city: 'Agadir' });
    });
  });

  it('the note on the order form, in the import under note, remarque or ملاحظة, and on the call page', async () => {
    const s = await shop('shopify');
    await openAllDay(s);
    const csrf = await csrfOf(s.agent, '/orders/new');
    expect((await s.agent.get('/orders/new').expect(200)).text).to.contain('name="note"');
    await s.agent
      .post('/orders')
      .type('form')
      .send({ _csrf: csrf, client_name: 'Amina', phone: '0612345678', store_name: 'Atlas', products_name: 'Thé', city: 'Fès', note: 'Livrer après 18h' })
      .expect(303);
    expect(await ordersOf(s).select('note', 'city')).to.deep.equal([{ note: 'Livrer après 18h', city: 'Fès' }]);
    for (const header of ['note', 'remarque', 'ملاحظة']) {
      const file = `nom,téléphone,boutique,produit,ville,${header}\nYoussef,0698765432,Atlas,Savon,Rabat,Appeler le soir (${header})\n`;
      const res = await s.agent.post('/api/orders/import').set('Content-Type', 'text/csv').send(Buffer.from(file)).expect(200);
      expect(res.body, header).to.include({ imported: 1, skipped: 0 });
      const [row] = await testKnex()('orders').whereIn('id', res.body.order_ids).select('note', 'city');
      expect(row, header).to.deep.equal({ note: `Appeler le soir (${header})`, city: 'Rabat' });
    }
    // The first order's call: the agent reads the note before dialling.
    const claimed = (await s.agent.post('/api/calls/next').expect(200)).body;
    expect(claimed.order).to.include({ note: 'Livrer après 18h' });
    const page = await s.agent.get(`/calls/${claimed.call.id}`).expect(200);
    expect(page.text).to.contain('Livrer après 18h');
  });

  it('POST /api/orders takes a 3-decimal amount, a note and a city; MAD shows two decimals', async () => {
    const s = await shop('shopify');
    const body = {
      clientName: 'Amina',
      phone: '0612345678',
      storeName: 'Atlas',
      productsName: 'Tea',
      totalAmount: '89.350',
      currency: 'TND',
      note: 'Livrer après 18h',
      city: 'Tunis',
    };
    const created = (await s.agent.post('/api/orders').send(body).expect(201)).body;
    expect(created).to.include({ total_amount: '89.350', currency: 'TND', note: 'Livrer après 18h', city: 'Tunis' });
    const mad = (
      await s.agent
        .post('/api/orders')
        .send({ ...body, totalAmount: '349.5', currency: 'MAD', note: null, city: '' })
        .expect(201)
    ).body;
    expect(mad).to.include({ total_amount: '349.50', note: null, city: null });
    const long = await s.agent
      .post('/api/orders')
      .send({ ...body, note: 'x'.repeat(1001) })
      .expect(400);
    expect(long.body.fields).to.have.property('note');
  });
});
