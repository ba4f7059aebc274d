import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { signedHeaders } from '../../integrations/signing';
import { applyDeliveryEvents, attemptedOrders } from '../../services/deliveries';
import { messageBody } from '../../services/webhooks';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { ORDER } from '../helpers/loop';

/**
 * A courier's attempt (issue 53, must-hold 8): "Pas de réponse", "Reporté", "Injoignable",
 * "Tentative échouée" and their English and Arabic forms say the parcel could not be delivered yet.
 * They change the carrier's words and their time only, never the delivery status, and go into the
 * history as an attempt, whatever brings them (a report, a carrier's hook, the API); "En cours" and
 * "Annulé" are read as statuses. A shop's own word may mean an attempt too.
 */

type Shop = SignedIn & { workspaceId: string };
const knex = () => testKnex();

async function shop(): Promise<Shop> {
  const user = await signUp();
  return { ...user, workspaceId: user.workspaceId! };
}

/** A confirmed order, handed to a carrier (in transit) with `tracking`. */
async function inTransit(s: Shop, tracking: string, phone = '0611111111'): Promise<string> {
  const order = (
    await s.agent
      .post('/api/orders')
      .send({ ...ORDER, phone, status: 'confirmed' })
      .expect(201)
  ).body;
  await s.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'in_transit', trackingNumber: tracking, at: '2026-11-01T10:00:00Z' }).expect(200);
  return order.id;
}

const row = (id: string) => knex()('orders').where({ id }).first('delivery_status', 'delivery_carrier_status', 'delivery_at', 'delivery_carrier_status_at');
const history = (id: string) =>
  knex()('delivery_events').where({ order_id: id }).orderBy('received_at').select('status', 'carrier_status', 'source', 'applied');

const upload = (s: Shop, csv: string, name = 'rapport.csv') => s.agent.post('/api/deliveries/import').attach('file', Buffer.from(csv), name);

describe('delivery attempts: the built-in words', () => {
  const ATTEMPTS = [
    'Pas de réponse',
    'Reporté',
    'Reportée',
    'Injoignable',
    'Client injoignable',
    'Tentative échouée',
    'No answer',
    'Postponed',
    'Unreachable',
    'لا يجيب',
    'مؤجل',
    'تعذر الوصول',
    'محاولة فاشلة',
  ];

  it('each attempt word changes the carrier’s words and their time only, and is kept in the history as an attempt', async () => {
    const s = await shop();
    const ids: string[] = [];
    for (const [i] of ATTEMPTS.entries()) ids.push(await inTransit(s, `AT-${i}`, `06110000${String(i).padStart(2, '0')}`));
    const csv = `tracking;statut;date\n${ATTEMPTS.map((word, i) => `AT-${i};${word};02/11/2026 09:00`).join('\n')}\n`;
    const res = await upload(s, csv).expect(200);
    expect(res.body.unknown_words).to.deep.equal([]);
    expect(res.body.unmatched).to.deep.equal([]);
    expect(res.body.updated).to.equal(ATTEMPTS.length);
    for (const [i, id] of ids.entries()) {
      const after = await row(id);
      expect(after, ATTEMPTS[i]).to.include({ delivery_status: 'in_transit', delivery_carrier_status: ATTEMPTS[i] });
      expect(new Date(after.delivery_at).toISOString()).to.equal('2026-11-01T10:00:00.000Z');
      expect(new Date(after.delivery_carrier_status_at).toISOString()).to.equal('2026-11-02T08:00:00.000Z');
      expect((await history(id)).map((e) => [e.status, e.carrier_status, e.source, e.applied])).to.deep.equal([
        ['in_transit', null, 'person', true],
        ['attempted', ATTEMPTS[i], 'import', true],
      ]);
    }
  });

  it('"En cours" is in transit; "Annulé" / "Annulée" is a parcel refused; "Injoignable" is no longer a refusal', async () => {
    const s = await shop();
    const enCours = await inTransit(s, 'EC-1', '0622000001');
    const annule = await inTransit(s, 'AN-1', '0622000002');
    const annulee = await inTransit(s, 'AN-2', '0622000003');
    const injoignable = await inTransit(s, 'IN-1', '0622000004');
    const csv = 'tracking,statut\nEC-1,En cours\nAN-1,Annulé\nAN-2,ANNULEE\nIN-1,injoignable\n';
    const res = await upload(s, csv).expect(200);
    expect(res.body.unknown_words).to.deep.equal([]);
    expect(await row(enCours)).to.include({ delivery_status: 'in_transit', delivery_carrier_status: 'En cours' });
    expect(await row(annule)).to.include({ delivery_status: 'refused', delivery_carrier_status: 'Annulé' });
    expect(await row(annulee)).to.include({ delivery_status: 'refused' });
    expect(await row(injoignable)).to.include({ delivery_status: 'in_transit', delivery_carrier_status: 'injoignable' });
    expect((await history(injoignable)).map((e) => e.status)).to.deep.equal(['in_transit', 'attempted']);
  });

  it('an attempt on a confirmed order with no delivery yet leaves it without one; the order page shows the attempt in the history', async () => {
    const s = await shop();
    const order = (
      await s.agent
        .post('/api/orders')
        .send({ ...ORDER, phone: '0633000001', status: 'confirmed' })
        .expect(201)
    ).body;
    await upload(s, 'téléphone;statut\n06 33 00 00 01;Pas de réponse\n').expect(200);
    expect(await row(order.id)).to.include({ delivery_status: null, delivery_at: null, delivery_carrier_status: 'Pas de réponse' });
    const api = await s.agent.get(`/api/orders/${order.id}`).expect(200);
    expect(api.body.delivery).to.equal(null);
    const events = (await s.agent.get(`/api/orders/${order.id}/delivery/events`).expect(200)).body.events;
    expect(events.map((e: { status: string }) => e.status)).to.deep.equal(['attempted']);
    await s.agent.put('/api/account').send({ language: 'fr' }).expect(200);
    const page = await s.agent.get(`/orders/${order.id}`).expect(200);
    expect(page.text).to.include('<span class="badge badge-delivery badge-delivery-attempted">tentative, pas encore livré</span>');
  });

  it('news older than an attempt is kept in the history, not applied; a later status applies over it', async () => {
    const s = await shop();
    const id = await inTransit(s, 'OLD-1');
    await upload(s, 'tracking;statut;date\nOLD-1;Reporté;03/11/2026 12:00\n').expect(200);
    await upload(s, 'tracking;statut;date\nOLD-1;Livré;03/11/2026 08:00\n').expect(200);
    expect(await row(id)).to.include({ delivery_status: 'in_transit', delivery_carrier_status: 'Reporté' });
    await upload(s, 'tracking;statut;date\nOLD-1;Livré;04/11/2026 08:00\n').expect(200);
    expect(await row(id)).to.include({ delivery_status: 'delivered', delivery_carrier_status: 'Livré' });
    expect((await history(id)).map((e) => [e.status, e.applied])).to.deep.equal([
      ['in_transit', true],
      ['attempted', true],
      ['delivered', false],
      ['delivered', true],
    ]);
  });
});

describe('delivery attempts: every source of news', () => {
  it('applyDeliveryEvents says which orders just received an attempt', async () => {
    const s = await shop();
    const a = await inTransit(s, 'AP-1', '0644000001');
    const b = await inTransit(s, 'AP-2', '0644000002');
    const events = [
      { orderId: a, status: 'attempted' as const, carrierStatus: 'Pas de réponse', at: '2026-11-02T09:00:00Z', source: 'import' as const, by: 'r.csv' },
      { orderId: b, status: 'delivered' as const, carrierStatus: 'Livré', at: '2026-11-02T09:00:00Z', source: 'import' as const, by: 'r.csv' },
      // Older than the first: kept in the history, not the order's latest news, so no attempt to follow up.
      { orderId: a, status: 'attempted' as const, carrierStatus: 'Reporté', at: '2026-11-02T08:00:00Z', source: 'import' as const, by: 'r.csv' },
    ];
    const results = await knex().transaction((trx) => applyDeliveryEvents(trx, s.workspaceId, events));
    expect(results.map((r) => r.attempted)).to.deep.equal([true, false, false]);
    expect(attemptedOrders(events, results)).to.deep.equal([a]);
    expect(await row(a)).to.include({ delivery_status: 'in_transit', delivery_carrier_status: 'Pas de réponse' });
  });

  it('a carrier’s hook may say "attempted"; PUT /api/orders/:id/delivery too; neither changes the status', async () => {
    const s = await shop();
    const id = await inTransit(s, 'HK-1');
    const made = (await s.agent.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201)).body;
    const raw = Buffer.from(
      JSON.stringify({
        type: 'delivery.updated',
        data: { tracking_number: 'HK-1', status: 'attempted', carrier_status: 'Client injoignable', at: '2026-11-02T09:00:00Z' },
      }),
    );
    const headers = signedHeaders(made.secret, `msg_${crypto.randomUUID()}`, raw);
    const res = await request(appUrl())
      .post(`/hooks/carriers/${made.id}`)
      .set(headers)
      .set('Content-Type', 'application/json')
      .send(raw.toString('utf8'))
      .expect(200);
    expect(res.body.result).to.equal('updated');
    expect(await row(id)).to.include({ delivery_status: 'in_transit', delivery_carrier_status: 'Client injoignable' });

    const put = await s.agent.put(`/api/orders/${id}/delivery`).send({ status: 'attempted', carrierStatus: 'Reporté à demain' }).expect(200);
    expect(put.body.delivery).to.include({ status: 'in_transit', carrier_status: 'Reporté à demain' });
    expect((await history(id)).map((e) => [e.status, e.source])).to.deep.equal([
      ['in_transit', 'person'],
      ['attempted', 'carrier'],
      ['attempted', 'person'],
    ]);
    const bad = await s.agent.put(`/api/orders/${id}/delivery`).send({ status: 'tried' }).expect(400);
    expect(bad.body.fields).to.have.key('status');
  });
});

describe('delivery attempts: order.delivery_updated', () => {
  it('an attempt on a parcel under way sends it with the carrier’s words; on an order with no delivery yet, nothing (it shows none)', async () => {
    const s = await shop();
    const endpoint = (await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/all' }).expect(201)).body;
    const underWay = await inTransit(s, 'WH-1', '0655000001');
    const waiting = (
      await s.agent
        .post('/api/orders')
        .send({ ...ORDER, phone: '0655000002', status: 'confirmed' })
        .expect(201)
    ).body.id;
    const sent = async () =>
      (
        await knex()('webhook_deliveries as d')
          .join('webhook_messages as m', 'm.id', 'd.message_id')
          .where({ 'd.endpoint_id': endpoint.id, 'm.event_type': 'order.delivery_updated' })
          .orderBy('m.created_at')
          .select('m.event_type', 'm.data', 'm.created_at')
      ).map((m) => JSON.parse(messageBody(m)).data.order);
    const before = (await sent()).length;
    await upload(s, 'tracking;téléphone;statut\nWH-1;;Pas de réponse\n;0655000002;Pas de réponse\n').expect(200);
    const after = (await sent()).slice(before);
    expect(after.map((o) => o.id)).to.deep.equal([underWay]);
    expect(after[0].delivery).to.include({ status: 'in_transit', carrier_status: 'Pas de réponse' });
    expect(await row(waiting)).to.include({ delivery_status: null, delivery_carrier_status: 'Pas de réponse' });
  });
});

describe('delivery attempts: a shop’s own words', () => {
  it('/settings offers "attempt" in en, fr and ar; a word saved as an attempt is read as one', async () => {
    const s = await shop();
    for (const [lang, label] of [
      ['en', 'attempt, not delivered yet'],
      ['fr', 'tentative, pas encore livré'],
      ['ar', 'محاولة، لم يُسلَّم بعد'],
    ]) {
      await s.agent.put('/api/account').send({ language: lang }).expect(200);
      const page = await s.agent.get('/settings').expect(200);
      expect(page.text, lang).to.include(`<option value="attempted">${label}</option>`);
    }
    const page = await s.agent.get('/settings').expect(200);
    await s.agent
      .post('/settings/carrier-words')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), word: 'Client absent', status: 'attempted' })
      .expect(303);
    expect(await knex()('carrier_words').where({ workspace_id: s.workspaceId }).select('word', 'status')).to.deep.equal([
      { word: 'Client absent', status: 'attempted' },
    ]);
    const id = await inTransit(s, 'OWN-1');
    await upload(s, 'tracking,statut\nOWN-1,client ABSENT\n').expect(200);
    expect(await row(id)).to.include({ delivery_status: 'in_transit', delivery_carrier_status: 'client ABSENT' });
    expect((await history(id)).map((e) => e.status)).to.deep.equal(['in_transit', 'attempted']);
  });
});
