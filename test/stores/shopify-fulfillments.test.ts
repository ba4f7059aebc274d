import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/**
 * Shopify's fulfillments (issue 52, item 6): a local pick-up collected, the carrier's pick-up, and a
 * cancelled fulfillment, which undoes what it said — back to the delivery before it, another
 * fulfillment's, or none; never "shipped" with the carrier's words cleared. Each body is one of
 * test/fixtures/stores (their source pages are in its README), signed over its own bytes.
 */
const knex = () => testKnex();
const SECRET = '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';
const fixtureText = (name: string) => fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', name), 'utf8');
const ORDER = fixtureText('shopify-orders-create.json');
const fixture = (name: string) => JSON.parse(fixtureText(name));
/** The same fulfillment, cancelled (fulfillments/update with its own `status` "cancelled"). */
const CANCELLED = fixture('shopify-fulfillments-update-cancelled.json');

type Shop = SignedIn & { workspaceId: string; storeId: string; orderId: string };

/** Sends `text` as Shopify does: the topic, a webhook id, the base64 HMAC of the exact bytes. */
function send(storeId: string, topic: string, text: string) {
  return request(appUrl())
    .post(`/hooks/stores/${storeId}`)
    .set('X-Shopify-Topic', topic)
    .set('X-Shopify-Webhook-Id', crypto.randomUUID())
    .set('X-Shopify-Hmac-Sha256', crypto.createHmac('sha256', SECRET).update(Buffer.from(text)).digest('base64'))
    .set('Content-Type', 'application/json')
    .send(text);
}

/** A fulfillment message, the fixture's or one changed from it. */
const post = (s: Shop, topic: string, body: object) => send(s.storeId, topic, JSON.stringify(body));

/** A shop with a Shopify connection and the documented order (#1001) in it. */
async function shop(): Promise<Shop> {
  const user = await signUp();
  const store = (
    await user.agent.post('/api/stores').send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: SECRET, cod_only: false }).expect(201)
  ).body;
  expect((await send(store.id, 'orders/create', ORDER).expect(200)).body.result).to.equal('created');
  const order = await knex()('orders').where({ workspace_id: user.workspaceId }).first('id');
  return { ...user, workspaceId: user.workspaceId!, storeId: store.id, orderId: order.id };
}

/** What the order's row holds of its delivery. */
async function columns(s: Shop) {
  const row = await knex()('orders')
    .where({ id: s.orderId })
    .first('delivery_status', 'delivery_carrier', 'delivery_tracking_number', 'delivery_carrier_status', 'delivery_at');
  return { ...row, delivery_at: row.delivery_at ? new Date(row.delivery_at).toISOString() : null };
}

/** The order's history rows, in the order received. */
const history = (s: Shop) =>
  knex()('delivery_events')
    .where({ order_id: s.orderId })
    .orderBy([{ column: 'received_at' }, { column: 'id' }])
    .select('status', 'carrier', 'tracking_number', 'carrier_status', 'source', 'by', 'source_key', 'applied', 'undone_at');

/** The delivered parcels the statistics count for the workspace. */
async function delivered(s: Shop): Promise<number> {
  const row = await knex()('delivery_counts').where({ workspace_id: s.workspaceId, status: 'delivered' }).sum({ n: 'n' }).first();
  return Number(row?.n ?? 0);
}

describe('Shopify fulfillments: pick-ups and cancellations', () => {
  it('picked_up (a local pick-up collected by the customer) → delivered, counted as delivered', async () => {
    const s = await shop();
    const res = await send(s.storeId, 'fulfillments/update', fixtureText('shopify-fulfillments-update-picked-up.json')).expect(200);
    expect(res.body).to.deep.equal({ ok: true, result: 'updated' });
    expect(await columns(s)).to.deep.equal({
      delivery_status: 'delivered',
      delivery_carrier: null,
      delivery_tracking_number: null,
      delivery_carrier_status: 'picked_up',
      delivery_at: '2026-11-22T16:05:40.000Z',
    });
    const rows = await history(s);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ status: 'delivered', carrier_status: 'picked_up', source: 'store', by: 'Atlas', source_key: '4451542401113', applied: true });
    expect(await delivered(s)).to.equal(1);
    expect((await s.agent.get(`/api/orders/${s.orderId}`).expect(200)).body.delivery).to.include({ status: 'delivered', carrier_status: 'picked_up' });
  });

  it('carrier_picked_up (the carrier has the parcel) → in_transit, with the carrier and tracking number', async () => {
    const s = await shop();
    const res = await send(s.storeId, 'fulfillments/update', fixtureText('shopify-fulfillments-update-carrier-picked-up.json')).expect(200);
    expect(res.body).to.deep.equal({ ok: true, result: 'updated' });
    expect(await columns(s)).to.deep.equal({
      delivery_status: 'in_transit',
      delivery_carrier: 'Amana',
      delivery_tracking_number: 'RR123456789MA',
      delivery_carrier_status: 'carrier_picked_up',
      delivery_at: '2026-11-20T14:30:12.000Z',
    });
    expect(await history(s)).to.have.length(1);
  });

  it('a fulfillment cancelled after in_transit, the order’s only one: no delivery at all, its news kept in the history, undone', async () => {
    const s = await shop();
    const shipped = { ...CANCELLED, status: 'success', shipment_status: null, updated_at: '2026-11-20T10:12:31+01:00' };
    expect((await post(s, 'fulfillments/create', shipped).expect(200)).body.result).to.equal('updated');
    const moving = { ...CANCELLED, status: 'success', updated_at: '2026-11-20T18:00:00+01:00' };
    expect((await post(s, 'fulfillments/update', moving).expect(200)).body.result).to.equal('updated');
    expect(await columns(s)).to.include({ delivery_status: 'in_transit', delivery_carrier: 'Amana', delivery_tracking_number: 'RR123456789MA' });

    const res = await send(s.storeId, 'fulfillments/update', fixtureText('shopify-fulfillments-update-cancelled.json')).expect(200);
    expect(res.body).to.deep.equal({ ok: true, result: 'updated' });
    expect(await columns(s)).to.deep.equal({
      delivery_status: null,
      delivery_carrier: null,
      delivery_tracking_number: null,
      delivery_carrier_status: null,
      delivery_at: null,
    });
    expect((await s.agent.get(`/api/orders/${s.orderId}`).expect(200)).body.delivery).to.equal(null);
    const rows = await history(s);
    expect(rows.map((r) => [r.status, r.carrier_status, r.source_key, r.applied, r.undone_at !== null])).to.deep.equal([
      ['shipped', null, '4451542401112', false, true],
      ['in_transit', 'in_transit', '4451542401112', false, true],
    ]);
    // Its tracking number is free again for another order of the workspace.
    expect(await knex()('orders').where({ workspace_id: s.workspaceId, delivery_tracking_number: 'RR123456789MA' })).to.have.length(0);
    // The same cancellation again finds nothing left to undo.
    expect((await send(s.storeId, 'fulfillments/update', fixtureText('shopify-fulfillments-update-cancelled.json')).expect(200)).body.result).to.equal(
      'ignored_unchanged',
    );
  });

  it('a fulfillment cancelled after in_transit: the delivery a person set before it comes back, with its carrier and words', async () => {
    const s = await shop();
    await s.agent
      .put(`/api/orders/${s.orderId}/delivery`)
      .send({ status: 'shipped', carrier: 'Ozon Express', trackingNumber: 'OZ123456789MA', carrierStatus: 'Ramassé', at: '2026-11-19T09:00:00Z' })
      .expect(200);
    await post(s, 'fulfillments/update', { ...CANCELLED, status: 'success' }).expect(200);
    expect(await columns(s)).to.include({ delivery_status: 'in_transit', delivery_carrier: 'Amana', delivery_tracking_number: 'RR123456789MA' });

    expect((await send(s.storeId, 'fulfillments/update', fixtureText('shopify-fulfillments-update-cancelled.json')).expect(200)).body.result).to.equal(
      'updated',
    );
    expect(await columns(s)).to.deep.equal({
      delivery_status: 'shipped',
      delivery_carrier: 'Ozon Express',
      delivery_tracking_number: 'OZ123456789MA',
      delivery_carrier_status: 'Ramassé',
      delivery_at: '2026-11-19T09:00:00.000Z',
    });
    const rows = await history(s);
    expect(rows.map((r) => [r.status, r.source, r.applied, r.undone_at !== null])).to.deep.equal([
      ['shipped', 'person', true, false],
      ['in_transit', 'store', false, true],
    ]);
    const events = (await s.agent.get(`/api/orders/${s.orderId}/delivery/events`).expect(200)).body.events;
    expect(events).to.have.length(2);
  });

  it('two fulfillments, one cancelled: the order’s delivery is the other one’s latest, whichever came last', async () => {
    const s = await shop();
    // First parcel (Amana), delivered; second parcel (CTM), in transit and newer: the order shows the second.
    const first = { ...CANCELLED, status: 'success', shipment_status: 'delivered', updated_at: '2026-11-22T16:40:05+01:00' };
    const second = {
      ...CANCELLED,
      id: 4451542409999,
      name: '#1001.2',
      status: 'success',
      tracking_company: 'CTM Messagerie',
      tracking_number: 'CTM0042MA',
      shipment_status: 'in_transit',
      created_at: '2026-11-22T18:00:00+01:00',
      updated_at: '2026-11-23T09:00:00+01:00',
    };
    await post(s, 'fulfillments/update', first).expect(200);
    await post(s, 'fulfillments/create', second).expect(200);
    expect(await columns(s)).to.include({ delivery_status: 'in_transit', delivery_carrier: 'CTM Messagerie', delivery_tracking_number: 'CTM0042MA' });
    expect(await delivered(s)).to.equal(0);

    // The second is cancelled: the first one's delivered comes back.
    const res = await post(s, 'fulfillments/update', { ...second, status: 'cancelled', updated_at: '2026-11-23T10:00:00+01:00' }).expect(200);
    expect(res.body).to.deep.equal({ ok: true, result: 'updated' });
    expect(await columns(s)).to.deep.equal({
      delivery_status: 'delivered',
      delivery_carrier: 'Amana',
      delivery_tracking_number: 'RR123456789MA',
      delivery_carrier_status: 'delivered',
      delivery_at: '2026-11-22T15:40:05.000Z',
    });
    expect(await delivered(s)).to.equal(1);
    const rows = await history(s);
    expect(rows.map((r) => [r.source_key, r.status, r.applied, r.undone_at !== null])).to.deep.equal([
      ['4451542401112', 'delivered', true, false],
      ['4451542409999', 'in_transit', false, true],
    ]);

    // A late update of the cancelled one is kept, undone, and changes nothing.
    const late = await post(s, 'fulfillments/update', { ...second, shipment_status: 'out_for_delivery', updated_at: '2026-11-23T11:00:00+01:00' }).expect(200);
    expect(late.body.result).to.equal('ignored_unchanged');
    expect(await columns(s)).to.include({ delivery_status: 'delivered', delivery_carrier: 'Amana' });
    expect((await history(s)).map((r) => [r.status, r.applied, r.undone_at !== null])).to.deep.equal([
      ['delivered', true, false],
      ['in_transit', false, true],
      ['out_for_delivery', false, true],
    ]);
  });

  it('two fulfillments, the older one cancelled: the other one’s news that came while the first was ahead now applies', async () => {
    const s = await shop();
    const first = { ...CANCELLED, status: 'success', shipment_status: 'out_for_delivery', updated_at: '2026-11-22T12:00:00+01:00' };
    // The second's news is older than the first's: kept in the history without changing the order.
    const second = {
      ...CANCELLED,
      id: 4451542409999,
      status: 'success',
      tracking_company: 'CTM Messagerie',
      tracking_number: 'CTM0042MA',
      shipment_status: 'in_transit',
      updated_at: '2026-11-21T12:00:00+01:00',
    };
    await post(s, 'fulfillments/update', first).expect(200);
    expect((await post(s, 'fulfillments/create', second).expect(200)).body.result).to.equal('ignored_unchanged');
    expect(await columns(s)).to.include({ delivery_status: 'out_for_delivery', delivery_carrier: 'Amana' });

    await post(s, 'fulfillments/update', { ...first, status: 'cancelled' }).expect(200);
    expect(await columns(s)).to.deep.equal({
      delivery_status: 'in_transit',
      delivery_carrier: 'CTM Messagerie',
      delivery_tracking_number: 'CTM0042MA',
      delivery_carrier_status: 'in_transit',
      delivery_at: '2026-11-21T11:00:00.000Z',
    });
    expect((await history(s)).map((r) => [r.source_key, r.applied, r.undone_at !== null])).to.deep.equal([
      ['4451542401112', false, true],
      ['4451542409999', true, false],
    ]);
  });

  it('a cancelled fulfillment never leaves "shipped" with the carrier’s words cleared', async () => {
    const s = await shop();
    // Cancelled before anything of it came: nothing to undo, nothing written.
    const unknown = await send(s.storeId, 'fulfillments/create', fixtureText('shopify-fulfillments-update-cancelled.json')).expect(200);
    expect(unknown.body).to.deep.equal({ ok: true, result: 'ignored_unchanged' });
    expect(await columns(s)).to.include({ delivery_status: null, delivery_carrier_status: null });
    expect(await history(s)).to.have.length(0);

    // Another fulfillment in transit, then one with the carrier's words only, then that one cancelled.
    const other = { ...CANCELLED, id: 4451542409999, status: 'success', tracking_number: 'RR999MA', updated_at: '2026-11-21T08:00:00+01:00' };
    await post(s, 'fulfillments/update', other).expect(200);
    await post(s, 'fulfillments/update', {
      ...CANCELLED,
      status: 'success',
      shipment_status: 'attempted_delivery',
      updated_at: '2026-11-21T12:00:00+01:00',
    }).expect(200);
    expect(await columns(s)).to.include({ delivery_status: 'in_transit', delivery_carrier_status: 'attempted_delivery' });
    await send(s.storeId, 'fulfillments/update', fixtureText('shopify-fulfillments-update-cancelled.json')).expect(200);
    expect(await columns(s)).to.deep.equal({
      delivery_status: 'in_transit',
      delivery_carrier: 'Amana',
      delivery_tracking_number: 'RR999MA',
      delivery_carrier_status: 'in_transit',
      delivery_at: '2026-11-21T07:00:00.000Z',
    });
  });
});
