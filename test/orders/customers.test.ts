import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { SignedSender } from '../../integrations/http';
import { createServices } from '../../services';
import { ANONYMISED_NAME, ANONYMISED_PHONE, phoneSha256 } from '../../services/orders';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, csrfOf, memberOf, signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { openAllDay } from '../helpers/loop';

/**
 * A customer's request (issue 58, item 3): /customers/:phone and /api/customers/:phone find every
 * order of a phone in any form, export them (JSON, CSV) and erase them (the owner only), sending
 * customer.erased with the phone's SHA-256; the erased phone's next order is a new customer's.
 */

const PHONE = '+212612345678';
const ENCODED = encodeURIComponent(PHONE);
const FORMS = ['0612345678', '+212612345678', '212612345678', '06-12-34-56-78', '06 12 34 56 78', '+212 6 12 34 56 78', '٠٦١٢٣٤٥٦٧٨', '۰۶۱۲۳۴۵۶۷۸'];
const services = () => createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
const send = (m: Parameters<SignedSender['send']>[0]) => new SignedSender(true, 2000).send(m);

type Shop = SignedIn & { workspaceId: string };

async function shop(): Promise<Shop> {
  const s = await signUp({ name: 'Salma Idrissi' });
  await s.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId! };
}

async function order(s: Shop, fields: Record<string, unknown> = {}) {
  return (
    await s.agent
      .post('/api/orders')
      .send({ clientName: 'Amina Benali', phone: '06 12 34 56 78', storeName: 'Atlas', productsName: 'Argan oil', address: 'Rue 12, Maarif', ...fields })
      .expect(201)
  ).body;
}

/**
 * A customer with three orders: one called (the call's notes, a noted change and a reply), one
 * delivered, one confirmed by hand; a blocked number; every confirmation finished.
 */
async function customer(s: Shop) {
  await openAllDay(s);
  await testKnex()('credit_ledger').insert({ user_id: s.userId, kind: 'grant', amount: 100 });
  const called = await order(s, { city: 'Casablanca', note: 'Appeler après 18h', totalAmount: 349, externalRef: '#1001' });
  const claim = (await s.agent.post('/api/calls/next').expect(200)).body;
  expect(claim.order.id).to.equal(called.id);
  await s.agent.post(`/api/calls/${claim.call.id}/outcome`).send({ outcome: 'confirmed', notes: 'Amina confirme, 3 rue des Oliviers' }).expect(200);
  await testKnex()('calls').where({ id: claim.call.id }).update({ changes: 'Taille 42', reply: 'Oui, Amina' });
  const delivered = await order(s, { clientName: '=HYPERLINK("http://x")', productsName: 'Thé', totalAmount: 120 });
  await s.agent.put(`/api/orders/${delivered.id}`).send({ status: 'confirmed' }).expect(200);
  await s.agent.put(`/api/orders/${delivered.id}/delivery`).send({ status: 'delivered', carrier: 'Amana', carrierStatus: 'Livré à Amina' }).expect(200);
  const third = await order(s, { productsName: 'Savon noir' });
  await s.agent.put(`/api/orders/${third.id}`).send({ status: 'unconfirmed' }).expect(200);
  await s.agent.post('/api/settings/blocked-phones').send({ phone: '0612345678', reason: 'Refused twice' }).expect(201);
  return { called, delivered, third, callId: claim.call.id as string, ids: [called.id, delivered.id, third.id].sort() };
}

/** A webhook receiver on loopback that records what it is sent. */
async function receiver() {
  const hits: Array<{ body: string; json: { type: string; data: Record<string, unknown> } }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ body, json: JSON.parse(body) });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("a customer's request: /customers/:phone and /api/customers/:phone", function () {
  this.timeout(60_000);

  it('finds every order of the phone in any form, in the workspace only; an unknown phone has none; a bad one is 400 naming it', async () => {
    const s = await shop();
    const other = await shop();
    const mine = [await order(s), await order(s, { phone: '+212 6 12 34 56 78', productsName: 'Thé' })];
    await order(s, { phone: '0700000001' });
    await order(other);
    for (const form of FORMS) {
      const res = await s.agent.get(`/api/customers/${encodeURIComponent(form)}`).expect(200);
      expect(res.body.phone, form).to.equal(PHONE);
      expect(
        res.body.orders.map((o: { id: string }) => o.id),
        form,
      ).to.deep.equal([mine[1].id, mine[0].id]);
    }
    expect((await s.agent.get('/api/customers/0699999999').expect(200)).body).to.deep.equal({ phone: '+212699999999', orders: [] });
    const bad = await s.agent.get('/api/customers/12').expect(400);
    expect(bad.body.code).to.equal('VALIDATION_ERROR');
    expect(bad.body.fields).to.have.property('phone');

    // The pages: the lookup form leads to the customer's page; a bad number comes back with its message.
    const found = await s.agent.get('/customers').query({ phone: '06 12 34 56 78' }).expect(303);
    expect(found.headers.location).to.equal(`/customers/${ENCODED}`);
    const page = await s.agent.get(found.headers.location).expect(200);
    for (const o of mine) expect(page.text).to.contain(`href="/orders/${o.id}"`);
    expect(page.text).to.contain(`href="/customers/${ENCODED}/export.json"`).and.contain(`href="/customers/${ENCODED}/export.csv"`);
    expect(page.text).to.contain(`href="/customers/${ENCODED}/erase"`);
    const arabic = await s.agent.get(`/customers/${encodeURIComponent('٠٦١٢٣٤٥٦٧٨')}`).expect(200);
    for (const o of mine) expect(arabic.text).to.contain(`href="/orders/${o.id}"`);
    for (const path of ['/customers?phone=12', '/customers/12']) {
      const refused = await s.agent.get(path).expect(400);
      expect(refused.text, path).to.contain('id="f-phone-error"').and.contain('value="12"');
    }
    // The order page links its customer's page.
    expect((await s.agent.get(`/orders/${mine[0].id}`).expect(200)).text).to.contain(`href="/customers/${ENCODED}"`);
  });

  it('exports everything held about the customer as JSON, and the orders as CSV with formulas defused', async () => {
    const s = await shop();
    const c = await customer(s);
    await order(await shop());
    const json = await s.agent.get(`/customers/${encodeURIComponent('06 12 34 56 78')}/export.json`).expect(200);
    expect(json.headers['content-type']).to.match(/^application\/json/);
    expect(json.headers['content-disposition']).to.match(/^attachment; filename="customer-212612345678-\d{4}-\d{2}-\d{2}\.json"$/);
    const data = JSON.parse(json.text);
    expect(data.phone).to.equal(PHONE);
    expect(data.blocked).to.include({ reason: 'Refused twice' });
    expect(data.orders.map((o: { id: string }) => o.id).sort()).to.deep.equal(c.ids);
    const called = data.orders.find((o: { id: string }) => o.id === c.called.id);
    expect(called).to.include({ client_name: 'Amina Benali', city: 'Casablanca', note: 'Appeler après 18h', external_ref: '#1001' });
    expect(called.calls).to.have.length(1);
    expect(called.calls[0]).to.include({ outcome: 'confirmed', summary: 'Amina confirme, 3 rue des Oliviers', changes: 'Taille 42', reply: 'Oui, Amina' });
    const delivered = data.orders.find((o: { id: string }) => o.id === c.delivered.id);
    expect(delivered.delivery_events.map((e: { status: string; carrier_status: string }) => [e.status, e.carrier_status])).to.deep.equal([
      ['delivered', 'Livré à Amina'],
    ]);

    const csv = await s.agent.get(`/customers/${ENCODED}/export.csv`).expect(200);
    expect(csv.headers['content-type']).to.equal('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).to.match(/^attachment; filename="customer-212612345678-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = csv.text
      .replace(/^\ufeff/, '')
      .trim()
      .split('\r\n');
    expect(lines).to.have.length(4);
    expect(lines[0]).to.match(/^id,created_at,client_name,phone,/);
    for (const id of c.ids) expect(csv.text).to.contain(id);
    expect(csv.text).to.contain("'+212612345678").and.contain(`"'=HYPERLINK(""http://x"")"`);
    expect(csv.text).not.to.match(/,=HYPERLINK|,\+212/);
  });

  it('the owner erases by the page after typing the number again: orders, calls and (when chosen) the block-list entry; members cannot', async () => {
    const s = await shop();
    const c = await customer(s);
    const other = await shop();
    const theirs = await order(other, { note: 'Leur note' });
    await other.agent.post('/api/settings/blocked-phones').send({ phone: PHONE }).expect(201);
    const member = await memberOf(s);

    // A member sees the customer, exports, but has no erase button, and every way to erase is 403.
    const seen = await member.agent.get(`/customers/${ENCODED}`).expect(200);
    expect(seen.text).not.to.contain(`href="/customers/${ENCODED}/erase"`);
    await member.agent.get(`/customers/${ENCODED}/export.json`).expect(200);
    await member.agent.get(`/customers/${ENCODED}/erase`).expect(403);
    const memberCsrf = await csrfOf(member.agent, '/orders');
    await member.agent.post(`/customers/${ENCODED}/erase`).type('form').send({ _csrf: memberCsrf, phone_again: PHONE, unblock: '1' }).expect(403);
    const refused = await member.agent.delete(`/api/customers/${ENCODED}`).expect(403);
    expect(refused.body).to.deep.equal({ error: 'Forbidden' });
    expect(await testKnex()('orders').where({ workspace_id: s.workspaceId, phone: PHONE })).to.have.length(3);

    // The confirmation page; the wrong number typed again changes nothing.
    const confirm = await s.agent.get(`/customers/${ENCODED}/erase`).expect(200);
    expect(confirm.text).to.contain('name="phone_again"').and.contain('name="unblock"');
    const csrf = csrfFrom(confirm.text);
    const wrong = await s.agent.post(`/customers/${ENCODED}/erase`).type('form').send({ _csrf: csrf, phone_again: '0612345679', unblock: '1' }).expect(400);
    expect(wrong.text).to.contain('id="f-phone_again-error"');
    expect(await testKnex()('orders').where({ workspace_id: s.workspaceId, phone: PHONE })).to.have.length(3);

    const done = await s.agent.post(`/customers/${ENCODED}/erase`).type('form').send({ _csrf: csrf, phone_again: '٠٦ ١٢ ٣٤ ٥٦ ٧٨', unblock: '1' }).expect(303);
    expect(done.headers.location).to.equal(`/customers/${ENCODED}`);
    const after = await s.agent.get(done.headers.location).expect(200);
    expect(after.text).to.contain('3 orders erased; the number is no longer blocked.');
    const rows = await testKnex()('orders').whereIn('id', c.ids);
    for (const row of rows) {
      expect(row).to.include({ client_name: ANONYMISED_NAME, phone: ANONYMISED_PHONE, address: null, city: null, note: null });
      expect(row.anonymised_at).to.be.an.instanceOf(Date);
    }
    const call = await testKnex()('calls').where({ id: c.callId }).first();
    // The words go; that there was a reply stays (an empty one), as call_counts' "answered" reads it.
    expect(call).to.include({ summary: null, changes: null, reply: '', outcome: 'confirmed' });
    expect(await testKnex()('blocked_phones').where({ workspace_id: s.workspaceId })).to.have.length(0);
    // The other workspace's order and block-list entry of the same number are untouched.
    expect(await testKnex()('orders').where({ id: theirs.id }).first()).to.include({ client_name: 'Amina Benali', phone: PHONE, note: 'Leur note' });
    expect(await testKnex()('blocked_phones').where({ workspace_id: other.workspaceId, phone: PHONE })).to.have.length(1);
    expect((await other.agent.get(`/api/customers/${ENCODED}`).expect(200)).body.orders).to.have.length(1);
    // The erased orders' page shows nobody's history and nothing of the customer.
    const orderPage = (await s.agent.get(`/orders/${c.called.id}`).expect(200)).text;
    expect(orderPage).not.to.match(/Amina|Maarif|Appeler|Oliviers|Oui,|612345678|12 34 56 78/);
  });

  it('DELETE /api/customers/:phone: customer.erased with the SHA-256 alone, no order.updated, /api/stats unchanged, the block-list entry kept unless asked', async () => {
    const hooks = await receiver();
    try {
      const s = await shop();
      const c = await customer(s);
      const erasedHook = (
        await s.agent
          .post('/api/webhooks')
          .send({ url: hooks.url, events: ['customer.erased'] })
          .expect(201)
      ).body;
      const updates = (
        await s.agent
          .post('/api/webhooks')
          .send({ url: 'http://127.0.0.1:9/updates', events: ['order.updated', 'order.created'] })
          .expect(201)
      ).body;
      // A message about one of the orders, still pending when the customer is erased.
      await s.agent.put(`/api/orders/${c.third.id}`).send({ status: 'failed' }).expect(200);
      await order(s, { phone: '0700000001', clientName: 'Someone else', address: 'Agdal' });
      const stats = async () => (await s.agent.get('/api/stats').expect(200)).body;
      const team = async () => (await s.agent.get('/api/stats/team').expect(200)).body;
      const before = { stats: await stats(), team: await team() };
      const messagesOf = async (endpointId: string, type: string) =>
        testKnex()('webhook_deliveries as d')
          .join('webhook_messages as m', 'm.id', 'd.message_id')
          .where({ 'd.endpoint_id': endpointId, 'm.event_type': type })
          .select('m.data');
      const updatedBefore = (await messagesOf(updates.id, 'order.updated')).length;

      const res = await s.agent
        .delete(`/api/customers/${encodeURIComponent('06 12 34 56 78')}`)
        .send({ unblock: false })
        .expect(200);
      expect(res.body).to.deep.equal({ erased: 3, unblocked: false });
      expect(await testKnex()('blocked_phones').where({ workspace_id: s.workspaceId, phone: PHONE })).to.have.length(1);
      expect({ stats: await stats(), team: await team() }).to.deep.equal(before);
      expect((await messagesOf(updates.id, 'order.updated')).length).to.equal(updatedBefore);
      // What was written about the orders before carries them anonymised now.
      const logged = JSON.stringify([...(await messagesOf(updates.id, 'order.created')), ...(await messagesOf(updates.id, 'order.updated'))]);
      expect(logged).to.contain('Someone else').and.contain(c.third.id);
      expect(logged).not.to.match(/Amina|Maarif|Casablanca|612345678/);

      await services().webhooks.drain(erasedHook.id, send);
      expect(hooks.hits).to.have.length(1);
      const hit = hooks.hits[0];
      expect(hit.json.type).to.equal('customer.erased');
      expect(Object.keys(hit.json.data)).to.deep.equal(['phone_sha256', 'order_count', 'erased_at']);
      // sha256('+212612345678'), in hex.
      expect(phoneSha256(PHONE)).to.equal('6103b272fa58c88b70a093b18e4165306fdce78d691156a8dba11750516e0443');
      expect(hit.json.data).to.include({ order_count: 3, phone_sha256: phoneSha256(PHONE) });
      expect(new Date(hit.json.data.erased_at as string).toISOString()).to.equal(hit.json.data.erased_at);
      expect(hit.body).not.to.match(/612345678|12 ?34 ?56 ?78|Amina/);

      // Nothing left: DELETE again erases none and sends nothing; unblock by the query.
      expect((await s.agent.delete(`/api/customers/${ENCODED}?unblock=true`).expect(200)).body).to.deep.equal({ erased: 0, unblocked: true });
      expect(await testKnex()('webhook_messages').where({ workspace_id: s.workspaceId, event_type: 'customer.erased' })).to.have.length(1);
      const bad = await s.agent.delete(`/api/customers/${ENCODED}`).send({ unblock: 'yes' }).expect(400);
      expect(bad.body.fields).to.have.property('unblock');
      expect((await s.agent.delete('/api/customers/12').expect(400)).body.fields).to.have.property('phone');
    } finally {
      await hooks.close();
    }
  });

  it("the erased phone's next order is a new customer's: no possible duplicate, no earlier orders", async () => {
    const s = await shop();
    const first = await order(s);
    const lookalike = await order(s);
    expect(lookalike.flags).to.include('possible_duplicate');
    await s.agent.delete(`/api/customers/${ENCODED}`).expect(200);
    const next = await order(s);
    expect(next.flags).to.deep.equal([]);
    expect((await s.agent.get(`/api/customers/${ENCODED}`).expect(200)).body.orders.map((o: { id: string }) => o.id)).to.deep.equal([next.id]);
    const page = (await s.agent.get(`/orders/${next.id}`).expect(200)).text;
    expect(page).not.to.contain(`href="/orders/${first.id}"`).and.not.to.contain(`href="/orders/${lookalike.id}"`);
    const listed = (await s.agent.get(`/customers/${ENCODED}`).expect(200)).text;
    expect(listed).to.contain(`href="/orders/${next.id}"`).and.not.to.contain(`href="/orders/${first.id}"`);
  });

  it('the audit log records each export and the erasure, by whom, naming the customer by the phone’s SHA-256, never the phone', async () => {
    const s = await shop();
    await order(s);
    await s.agent.get(`/customers/${ENCODED}/export.json`).expect(200);
    await s.agent.get(`/customers/${ENCODED}/export.csv`).expect(200);
    await s.agent.delete(`/api/customers/${ENCODED}`).expect(200);
    const events = await testKnex()('audit_events').where({ workspace_id: s.workspaceId }).whereLike('action', 'customer_%').orderBy('created_at');
    expect(events.map((e) => [e.action, e.actor_id, e.target_type, e.target_id])).to.deep.equal([
      ['customer_exported', s.userId, 'customer', phoneSha256(PHONE)],
      ['customer_exported', s.userId, 'customer', phoneSha256(PHONE)],
      ['customer_erased', s.userId, 'customer', phoneSha256(PHONE)],
    ]);
    expect(events.map((e) => e.details)).to.deep.equal([{ format: 'json', orders: 1 }, { format: 'csv' }, { orders: 1, unblocked: false }]);
    const log = (await s.agent.get('/api/workspace/audit').expect(200)).text;
    for (const form of ['612345678', '0612345678', '6 12 34 56 78']) expect(log).not.to.contain(form);
  });
});
