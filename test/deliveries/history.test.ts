import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { signedHeaders } from '../../integrations/signing';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { ORDER } from '../helpers/loop';

/**
 * The delivery history keeps what changed and what arrived out of order (issue 53, defect 5 and
 * must-hold 2): a carrier's cumulative report imported again adds no event, and the import's answer
 * counts agree with the history — updated and late rows are the events added, unchanged rows none.
 */

type Shop = SignedIn & { workspaceId: string };
const knex = () => testKnex();

async function shop(): Promise<Shop> {
  const user = await signUp();
  return { ...user, workspaceId: user.workspaceId! };
}

/** `count` confirmed orders handed to a carrier, with tracking numbers `<prefix>-1`…; their ids. */
async function shippedOrders(s: Shop, prefix: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) {
    const order = (
      await s.agent
        .post('/api/orders')
        .send({ ...ORDER, phone: `06${String(20_000_000 + i)}`, status: 'confirmed' })
        .expect(201)
    ).body;
    await s.agent
      .put(`/api/orders/${order.id}/delivery`)
      .send({ status: 'shipped', trackingNumber: `${prefix}-${i}`, at: '2026-11-01T10:00:00Z' })
      .expect(200);
    ids.push(order.id);
  }
  return ids;
}

const upload = (s: Shop, csv: string, name = 'ozon.csv') => s.agent.post('/api/deliveries/import').attach('file', Buffer.from(csv), name);
const importEvents = (ids: string[]) =>
  knex()('delivery_events').whereIn('order_id', ids).where({ source: 'import' }).orderBy('received_at').select('order_id', 'status', 'applied');
const eventsOf = async (s: Shop, id: string) => (await s.agent.get(`/api/orders/${id}/delivery/events`).expect(200)).body.events as Array<{ status: string }>;

describe('delivery history: one event per change', () => {
  for (const [label, header, row] of [
    ['with a date column', 'N° de suivi;Statut;Date', (i: number) => `OZ-${i};Livré;05/11/2026 14:00`],
    ['without a date (each reading is "now")', 'N° de suivi;Statut', (i: number) => `OZ-${i};Livré`],
  ] as const) {
    it(`the same report imported 3 times (${label}): one event per order; the 2nd and 3rd answers say N unchanged`, async () => {
      const s = await shop();
      const ids = await shippedOrders(s, 'OZ', 10);
      const csv = `${header}\n${ids.map((_, i) => row(i + 1)).join('\n')}\n`;
      const first = await upload(s, csv).expect(200);
      expect(first.body).to.include({ updated: 10, unchanged: 0, late: 0, attempts: 0 });
      expect(await importEvents(ids)).to.have.length(10);
      for (const time of [2, 3]) {
        const again = await upload(s, csv).expect(200);
        expect(again.body, `import ${time}`).to.include({ updated: 0, unchanged: 10, late: 0 });
        expect(await importEvents(ids), `import ${time}`).to.have.length(10);
      }
      for (const id of ids) expect((await eventsOf(s, id)).map((e) => e.status)).to.deep.equal(['shipped', 'delivered']);
      const orders = await knex()('orders').whereIn('id', ids).select('delivery_status', 'delivery_carrier_status');
      expect(orders.every((o) => o.delivery_status === 'delivered' && o.delivery_carrier_status === 'Livré')).to.equal(true);
    });
  }

  it('the result page says the same in French: "10 lignes n’ont rien changé", and the history did not grow', async () => {
    const s = await shop();
    const ids = await shippedOrders(s, 'PG', 10);
    const csv = `tracking;statut\n${ids.map((_, i) => `PG-${i + 1};En transit`).join('\n')}\n`;
    await upload(s, csv).expect(200);
    await s.agent.put('/api/account').send({ language: 'fr' }).expect(200);
    const form = (await s.agent.get('/deliveries/import').expect(200)).text;
    const page = await s.agent.post('/deliveries/import').field('_csrf', csrfFrom(form)).attach('file', Buffer.from(csv), 'pg.csv').expect(200);
    expect(page.text).to.include('0 livraison mise à jour');
    expect(page.text).to.include('10 lignes n’ont rien changé');
    expect(await importEvents(ids)).to.have.length(10);
  });

  it('a parcel in transit for days in a cumulative report: one event, then one more when it changes', async () => {
    const s = await shop();
    const [id] = await shippedOrders(s, 'CU', 1);
    for (const day of ['02', '03', '04']) await upload(s, `tracking;statut;date\nCU-1;En transit;${day}/11/2026 09:00\n`).expect(200);
    await upload(s, 'tracking;statut;date\nCU-1;En cours de livraison;05/11/2026 09:00\n').expect(200);
    await upload(s, 'tracking;statut;date\nCU-1;En cours de livraison;05/11/2026 09:00\n').expect(200);
    expect((await eventsOf(s, id)).map((e) => e.status)).to.deep.equal(['shipped', 'in_transit', 'out_for_delivery']);
    // The order keeps the time of the first news of its status: the statistics' day does not move.
    const row = await knex()('orders').where({ id }).first('delivery_at');
    expect(new Date(row.delivery_at).toISOString()).to.equal('2026-11-05T08:00:00.000Z');
  });

  it('news out of order is kept once, counted "late"; the same old report again adds nothing', async () => {
    const s = await shop();
    const [id] = await shippedOrders(s, 'LT', 1);
    await upload(s, 'tracking;statut;date\nLT-1;Livré;06/11/2026 10:00\n').expect(200);
    const old = 'tracking;statut;date\nLT-1;En transit;03/11/2026 10:00\n';
    expect((await upload(s, old).expect(200)).body).to.include({ updated: 0, late: 1, unchanged: 0 });
    expect((await upload(s, old).expect(200)).body).to.include({ updated: 0, late: 0, unchanged: 1 });
    const history = await knex()('delivery_events').where({ order_id: id }).orderBy('received_at').select('status', 'applied');
    expect(history).to.deep.equal([
      { status: 'shipped', applied: true },
      { status: 'delivered', applied: true },
      { status: 'in_transit', applied: false },
    ]);
    expect((await knex()('orders').where({ id }).first()).delivery_status).to.equal('delivered');
  });

  it('an attempt re-reported the same day adds nothing; the same words on a later day are a new attempt', async () => {
    const s = await shop();
    const [id] = await shippedOrders(s, 'AT', 1);
    const day = (d: string, h: string) => `tracking;statut;date\nAT-1;Pas de réponse;${d}/11/2026 ${h}\n`;
    expect((await upload(s, day('07', '09:00')).expect(200)).body).to.include({ updated: 1, attempts: 1 });
    expect((await upload(s, day('07', '09:00')).expect(200)).body).to.include({ updated: 0, unchanged: 1, attempts: 0 });
    expect((await upload(s, day('07', '16:00')).expect(200)).body).to.include({ updated: 0, unchanged: 1, attempts: 0 });
    expect((await upload(s, day('08', '10:00')).expect(200)).body).to.include({ updated: 1, attempts: 1 });
    expect((await eventsOf(s, id)).map((e) => e.status)).to.deep.equal(['shipped', 'attempted', 'attempted']);
  });

  it('a carrier’s hook sending the same news twice (two message ids): the second is "unchanged", one event', async () => {
    const s = await shop();
    const [id] = await shippedOrders(s, 'HK', 1);
    const made = (await s.agent.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201)).body;
    const raw = Buffer.from(JSON.stringify({ type: 'delivery.updated', data: { tracking_number: 'HK-1', status: 'delivered', carrier_status: 'Livré' } }));
    const push = () =>
      request(appUrl())
        .post(`/hooks/carriers/${made.id}`)
        .set(signedHeaders(made.secret, `msg_${crypto.randomUUID()}`, raw))
        .set('Content-Type', 'application/json')
        .send(raw.toString('utf8'))
        .expect(200);
    expect((await push()).body.result).to.equal('updated');
    expect((await push()).body.result).to.equal('unchanged');
    expect((await eventsOf(s, id)).map((e) => e.status)).to.deep.equal(['shipped', 'delivered']);
  });

  it('a carrier’s hook: the same attempt again the same day is "unchanged"; the same words the next day are "updated", a new attempt', async () => {
    const s = await shop();
    const [id] = await shippedOrders(s, 'HA', 1);
    const made = (await s.agent.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201)).body;
    const push = async (at: string) => {
      const raw = Buffer.from(
        JSON.stringify({ type: 'delivery.updated', data: { tracking_number: 'HA-1', status: 'attempted', carrier_status: 'Pas de réponse', at } }),
      );
      const res = await request(appUrl())
        .post(`/hooks/carriers/${made.id}`)
        .set(signedHeaders(made.secret, `msg_${crypto.randomUUID()}`, raw))
        .set('Content-Type', 'application/json')
        .send(raw.toString('utf8'))
        .expect(200);
      return res.body.result;
    };
    expect(await push('2026-11-09T09:00:00Z')).to.equal('updated');
    expect(await push('2026-11-09T15:00:00Z')).to.equal('unchanged');
    expect(await push('2026-11-10T09:00:00Z')).to.equal('updated');
    expect((await eventsOf(s, id)).map((e) => e.status)).to.deep.equal(['shipped', 'attempted', 'attempted']);
  });

  it('a person’s change is always kept, even when it says what the order already says', async () => {
    const s = await shop();
    const [id] = await shippedOrders(s, 'PS', 1);
    await s.agent.put(`/api/orders/${id}/delivery`).send({ status: 'shipped' }).expect(200);
    expect((await eventsOf(s, id)).map((e) => e.status)).to.deep.equal(['shipped', 'shipped']);
  });
});
