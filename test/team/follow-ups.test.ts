import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { signedHeaders } from '../../integrations/signing';
import { nextOpening } from '../../services/calls';
import { appUrl, csrfFrom, memberOf } from '../helpers/app';
import type { SignedIn } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, humanShop, ORDER } from '../helpers/loop';

type Shop = SignedIn & { handlerId: string };

const followUpsOf = (orderId: string) => testKnex()('operations').where({ order_id: orderId, purpose: 'follow_up' }).orderBy('created_at');
const upload = (s: Shop, csv: string) => s.agent.post('/api/deliveries/import').attach('file', Buffer.from(csv), 'rapport.csv');

/** A confirmed order (by a call of `by`), handed to a carrier an hour ago with `tracking`. */
async function shipped(s: Shop, tracking: string, by: Shop = s, phone = '0611111111'): Promise<string> {
  const order = await createOrder(s, { ...ORDER, phone, clientName: `Client ${tracking}` });
  const claim = await by.agent.post('/api/calls/next').expect(200);
  expect(claim.body.order.id).to.equal(order.id);
  await by.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
  await s.agent
    .put(`/api/orders/${order.id}/delivery`)
    .send({ status: 'in_transit', trackingNumber: tracking, at: new Date(Date.now() - 3600_000).toISOString() })
    .expect(200);
  return order.id;
}

/** The Morocco wall-clock time of `at`, as a carrier's report writes it (dd/mm/yyyy hh:mm). */
function reportTime(at: Date): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Africa/Casablanca',
    day: '2-digit',
    month: '2-digit',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('day')}/${part('month')}/${part('year')} ${part('hour')}:${part('minute')}`;
}

describe('team: follow-up calls for parcels in trouble', function () {
  this.timeout(120_000);

  it('an attempt in a carrier’s report (the dictionary’s words) starts ONE follow-up, due at once, assigned as new orders are; the same report again starts none', async () => {
    const owner = await humanShop();
    const member = await memberOf(owner);
    const id = await shipped(owner, 'FU-1');
    await owner.agent.put('/api/settings/team').send({ assignment: 'round_robin' }).expect(200);
    await member.agent.put('/api/me/shift').send({ on: true }).expect(200);
    const csv = `tracking;statut;date\nFU-1;Injoignable;${reportTime(new Date(Date.now() - 60_000))}\n`;
    const res = await upload(owner, csv).expect(200);
    expect(res.body.updated).to.equal(1);
    const [op, ...more] = await followUpsOf(id);
    expect(more).to.have.length(0);
    expect(op).to.include({ status: 'pending', purpose: 'follow_up' });
    expect(op.follow_up_key).to.match(/^attempt:/);
    expect(op.next_attempt_at.getTime()).to.be.at.most(Date.now());
    const order = await testKnex()('orders').where({ id }).first();
    expect(order.assigned_to).to.equal(member.userId);
    expect(order.status).to.equal('confirmed');
    await upload(owner, csv).expect(200);
    expect(await followUpsOf(id)).to.have.length(1);
    // The same attempt, even once its follow-up has ended, never starts another.
    await testKnex()('operations').where({ id: op.id }).update({ status: 'completed', next_attempt_at: null });
    await upload(owner, csv).expect(200);
    expect(await followUpsOf(id)).to.have.length(1);
  });

  it('an attempt by the carrier’s hook word, a person, or the shop’s own word; a second attempt later starts a second follow-up', async () => {
    const owner = await humanShop();
    const id = await shipped(owner, 'FU-2');
    await owner.agent.put(`/api/orders/${id}/delivery`).send({ status: 'attempted', carrierStatus: 'Reporté à demain' }).expect(200);
    const [first] = await followUpsOf(id);
    expect(first.status).to.equal('pending');
    await testKnex()('operations').where({ id: first.id }).update({ status: 'completed', next_attempt_at: null });
    // The shop's own word for an attempt.
    await testKnex()('carrier_words').insert({ workspace_id: owner.workspaceId, word_key: 'client absent', word: 'Client absent', status: 'attempted' });
    await upload(owner, `tracking;statut\nFU-2;Client absent\n`).expect(200);
    expect((await followUpsOf(id)).map((o) => o.status)).to.deep.equal(['completed', 'pending']);
  });

  it('an attempt a carrier pushes to its hook (signed) starts a follow-up too', async () => {
    const owner = await humanShop();
    const id = await shipped(owner, 'HK-9');
    const carrier = (await owner.agent.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201)).body;
    const raw = JSON.stringify({ type: 'delivery.updated', data: { tracking_number: 'HK-9', status: 'attempted', carrier_status: 'Client injoignable' } });
    await request(appUrl())
      .post(`/hooks/carriers/${carrier.id}`)
      .set(signedHeaders(carrier.secret, `msg_${crypto.randomUUID()}`, Buffer.from(raw)))
      .set('Content-Type', 'application/json')
      .send(raw)
      .expect(200);
    expect((await followUpsOf(id)).map((o) => o.status)).to.deep.equal(['pending']);
  });

  it('a delivery that became refused within 2 days starts a follow-up; an older refusal does not; nor anything when the setting is off', async () => {
    const owner = await humanShop();
    const fresh = await shipped(owner, 'FU-3', owner, '0611111112');
    const old = await shipped(owner, 'FU-4', owner, '0611111113');
    const off = await shipped(owner, 'FU-5', owner, '0611111114');
    await owner.agent
      .put(`/api/orders/${fresh}/delivery`)
      .send({ status: 'refused', at: new Date(Date.now() - 86_400_000).toISOString() })
      .expect(200);
    await owner.agent
      .put(`/api/orders/${old}/delivery`)
      .send({ status: 'refused', at: new Date(Date.now() - 3 * 86_400_000).toISOString() })
      .expect(200);
    expect((await followUpsOf(fresh)).map((o) => o.follow_up_key)).to.deep.equal(['refused']);
    expect(await followUpsOf(old)).to.have.length(0);
    const saved = await owner.agent.put('/api/settings/team').send({ followUps: false }).expect(200);
    expect(saved.body.follow_ups).to.equal(false);
    await owner.agent.put(`/api/orders/${off}/delivery`).send({ status: 'attempted', carrierStatus: 'Pas de réponse' }).expect(200);
    await owner.agent.put(`/api/orders/${off}/delivery`).send({ status: 'refused' }).expect(200);
    expect(await followUpsOf(off)).to.have.length(0);
  });

  it('an order created already confirmed and shipped gets its follow-up (its unused first operation gives way)', async () => {
    const owner = await humanShop();
    const order = (
      await owner.agent
        .post('/api/orders')
        .send({ ...ORDER, status: 'confirmed' })
        .expect(201)
    ).body;
    await owner.agent
      .put(`/api/orders/${order.id}/delivery`)
      .send({ status: 'shipped', at: new Date(Date.now() - 3600_000).toISOString() })
      .expect(200);
    await owner.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'attempted', carrierStatus: 'Injoignable' }).expect(200);
    expect((await followUpsOf(order.id)).map((o) => o.status)).to.deep.equal(['pending']);
  });

  it('outside the calling hours the follow-up is due at their next opening', async () => {
    const owner = await humanShop();
    const id = await shipped(owner, 'FU-6');
    // Hours that are closed now, whatever the time of the run: the hour after the next.
    const hour = (new Date().getUTCHours() + 3) % 24;
    const start = `${String(hour).padStart(2, '0')}:00`;
    const end = `${String(hour).padStart(2, '0')}:30`;
    await owner.agent.put('/api/settings/calls').send({ callingHours: { start, end } }).expect(200);
    const before = new Date();
    await owner.agent.put(`/api/orders/${id}/delivery`).send({ status: 'attempted', carrierStatus: 'Injoignable' }).expect(200);
    const [op] = await followUpsOf(id);
    const settings = { max_attempts: 3, retry_interval_minutes: 120, calling_hours: { start, end }, timezone: 'Africa/Casablanca' as const };
    expect(op.next_attempt_at.toISOString()).to.equal(nextOpening(settings, before).toISOString());
  });

  it('the call page of a follow-up shows the carrier’s words and the delivery history, and its four outcomes', async () => {
    const owner = await humanShop();
    const id = await shipped(owner, 'FU-7');
    await owner.agent.put(`/api/orders/${id}/delivery`).send({ status: 'attempted', carrierStatus: 'Tentative échouée' }).expect(200);
    const claim = await owner.agent.post('/api/calls/next').expect(200);
    expect(claim.body.order.id).to.equal(id);
    // Claiming a follow-up leaves the order's confirmation status alone.
    expect(claim.body.order.status).to.equal('confirmed');
    const page = await owner.agent.get(`/calls/${claim.body.call.id}`).expect(200);
    expect(page.text).to.include('<strong><bdi>Tentative échouée</bdi></strong>');
    expect(page.text).to.match(/<table class="stack delivery-history">[\s\S]*Tentative échouée[\s\S]*<\/table>/);
    for (const outcome of ['rescheduled', 'refused', 'no-answer', 'wrong-number']) expect(page.text).to.include(`name="outcome" value="${outcome}"`);
    expect(page.text).not.to.include('value="confirmed"');
  });

  it('the call page’s form without JavaScript: a past day comes back beside its field, the typed day kept; a good one records it and goes on', async () => {
    const owner = await humanShop();
    const id = await shipped(owner, 'FU-20');
    await owner.agent.put(`/api/orders/${id}/delivery`).send({ status: 'attempted', carrierStatus: 'Reporté' }).expect(200);
    const claim = await owner.agent.post('/api/calls/next').expect(200);
    const page = await owner.agent.get(`/calls/${claim.body.call.id}`).expect(200);
    const csrf = csrfFrom(page.text);
    const bad = await owner.agent
      .post(`/calls/${claim.body.call.id}/outcome`)
      .type('form')
      .send({ _csrf: csrf, outcome: 'rescheduled', rescheduled_for: '2020-01-01' })
      .expect(400);
    expect(bad.text).to.include('id="f-rescheduled_for-error"');
    expect(bad.text).to.match(/name="rescheduled_for"[^>]*value="2020-01-01"/);
    expect((await testKnex()('calls').where({ id: claim.body.call.id }).first()).ended_at).to.equal(null);
    const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const done = await owner.agent
      .post(`/calls/${claim.body.call.id}/outcome`)
      .type('form')
      .send({ _csrf: csrf, outcome: 'rescheduled', rescheduled_for: day })
      .expect(303);
    expect(done.headers.location).to.equal('/calls');
    expect((await testKnex()('orders').where({ id }).first()).rescheduled_for).to.equal(day);
    const notice = await owner.agent.get('/calls').expect(200);
    expect(notice.text).to.include('gave a new delivery day: pass it to the carrier.');
  });

  it('rescheduled keeps the day on the order and sends order.delivery_updated (no order.updated); a missing or past day is a 400 and nothing changes', async () => {
    const owner = await humanShop();
    await owner.agent
      .post('/api/webhooks')
      .send({ url: 'http://127.0.0.1:9/hook', events: ['order.delivery_updated', 'order.updated'] })
      .expect(201);
    const id = await shipped(owner, 'FU-8');
    await owner.agent.put(`/api/orders/${id}/delivery`).send({ status: 'attempted', carrierStatus: 'Reporté' }).expect(200);
    const claim = await owner.agent.post('/api/calls/next').expect(200);
    const before = await testKnex()('webhook_messages').where({ workspace_id: owner.workspaceId }).select('event_type');
    const missing = await owner.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'rescheduled' }).expect(400);
    expect(missing.body.fields).to.have.property('rescheduledFor');
    await owner.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'rescheduled', rescheduledFor: '2020-01-01' }).expect(400);
    await owner.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(400);
    expect((await testKnex()('calls').where({ id: claim.body.call.id }).first()).ended_at).to.equal(null);
    const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const res = await owner.agent
      .post(`/api/calls/${claim.body.call.id}/outcome`)
      .send({ outcome: 'rescheduled', rescheduledFor: day, notes: 'Samedi matin' })
      .expect(200);
    expect(res.body.call).to.include({ outcome: 'rescheduled', summary: 'Samedi matin' });
    expect(res.body.operation).to.include({ status: 'completed' });
    expect(res.body.order).to.include({ rescheduled_for: day, status: 'confirmed' });
    expect((await owner.agent.get(`/api/orders/${id}`).expect(200)).body.rescheduled_for).to.equal(day);
    const after = await testKnex()('webhook_messages').where({ workspace_id: owner.workspaceId }).orderBy('created_at').select('event_type', 'data');
    const fresh = after.slice(before.length);
    expect(fresh.map((m: { event_type: string }) => m.event_type)).to.deep.equal(['order.delivery_updated']);
    expect(fresh[0].data.order.rescheduled_for).to.equal(day);
    const orderPage = await owner.agent.get(`/orders/${id}`).expect(200);
    expect(orderPage.text).to.include(`<time datetime="${day}">`);
  });

  it('refused makes the delivery refused (and starts no new follow-up); wrong-number ends it; no-answer retries up to the attempts setting', async () => {
    const owner = await humanShop();
    await owner.agent.put('/api/settings/calls').send({ maxAttempts: 2, retryIntervalMinutes: 60 }).expect(200);
    const a = await shipped(owner, 'FU-9', owner, '0611111121');
    await owner.agent.put(`/api/orders/${a}/delivery`).send({ status: 'attempted', carrierStatus: 'Injoignable' }).expect(200);
    let claim = await owner.agent.post('/api/calls/next').expect(200);
    let res = await owner.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'refused' }).expect(200);
    expect(res.body.order.delivery.status).to.equal('refused');
    expect((await followUpsOf(a)).map((o) => o.status)).to.deep.equal(['completed']);

    const b = await shipped(owner, 'FU-10', owner, '0611111122');
    await owner.agent.put(`/api/orders/${b}/delivery`).send({ status: 'attempted', carrierStatus: 'Injoignable' }).expect(200);
    claim = await owner.agent.post('/api/calls/next').expect(200);
    res = await owner.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'wrong-number' }).expect(200);
    expect(res.body.operation.status).to.equal('completed');
    expect(res.body.order.delivery.status).to.equal('in_transit');

    const c = await shipped(owner, 'FU-11', owner, '0611111123');
    await owner.agent.put(`/api/orders/${c}/delivery`).send({ status: 'attempted', carrierStatus: 'Injoignable' }).expect(200);
    claim = await owner.agent.post('/api/calls/next').expect(200);
    const ended = Date.now();
    res = await owner.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'no-answer' }).expect(200);
    expect(res.body.operation).to.include({ status: 'pending', attempts: 1 });
    expect(new Date(res.body.operation.next_attempt_at).getTime()).to.be.within(ended + 59 * 60_000, ended + 61 * 60_000);
    await testKnex()('operations')
      .where({ id: res.body.operation.id })
      .update({ next_attempt_at: testKnex().raw('now()') });
    claim = await owner.agent.post('/api/calls/next').expect(200);
    expect(claim.body.order.id).to.equal(c);
    res = await owner.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'no-answer' }).expect(200);
    expect(res.body.operation).to.include({ status: 'completed', attempts: 2 });
    expect(res.body.order.status).to.equal('confirmed');
  });

  it('/stats/team shows saved parcels per member: followed up, then delivered', async () => {
    const owner = await humanShop();
    const member = await memberOf(owner);
    const id = await shipped(owner, 'FU-12');
    await owner.agent.put(`/api/orders/${id}/delivery`).send({ status: 'attempted', carrierStatus: 'Injoignable' }).expect(200);
    const claim = await member.agent.post('/api/calls/next').expect(200);
    const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await member.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'rescheduled', rescheduledFor: day }).expect(200);
    // A parcel followed up but never delivered is not saved.
    const lost = await shipped(owner, 'FU-13', owner, '0611111131');
    await owner.agent.put(`/api/orders/${lost}/delivery`).send({ status: 'attempted', carrierStatus: 'Injoignable' }).expect(200);
    const claim2 = await member.agent.post('/api/calls/next').expect(200);
    await member.agent.post(`/api/calls/${claim2.body.call.id}/outcome`).send({ outcome: 'wrong-number' }).expect(200);
    await owner.agent.put(`/api/orders/${id}/delivery`).send({ status: 'delivered' }).expect(200);
    const page = await owner.agent.get('/stats/team').expect(200);
    const line = new RegExp(`<tr data-saved="${member.userId}">[\\s\\S]*?data-value="(\\d+)"[\\s\\S]*?data-value="(\\d+)"`).exec(page.text);
    expect(line?.slice(1)).to.deep.equal(['2', '1']);
    const ownerLine = new RegExp(`<tr data-saved="${owner.userId}">[\\s\\S]*?data-value="(\\d+)"[\\s\\S]*?data-value="(\\d+)"`).exec(page.text);
    expect(ownerLine?.slice(1)).to.deep.equal(['0', '0']);
    // Follow-up calls stay out of the confirmation figures.
    const team = await owner.agent.get('/api/stats/team').expect(200);
    const row = team.body.rows.find((r: { id: string }) => r.id === member.userId);
    expect(row.calls).to.equal(0);
  });
});
