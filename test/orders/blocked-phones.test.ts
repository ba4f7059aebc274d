import { expect } from 'chai';
import { csrfOf, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, ORDER, openAllDay } from '../helpers/loop';

/** What the pages and the statistics say about a blocked number's order. */
describe("a blocked number's order: said as it is, counted apart", () => {
  it('the form announces it added and declined, not waiting for confirmation', async () => {
    const owner = await signUp();
    await owner.agent.post('/api/settings/blocked-phones').send({ phone: '0612345678' }).expect(201);
    const csrf = await csrfOf(owner.agent, '/orders/new');
    await owner.agent
      .post('/orders')
      .type('form')
      .send({ _csrf: csrf, client_name: 'Imane', phone: '0612345678', store_name: 'Souk', products_name: 'Thé' })
      .expect(303);
    const page = await owner.agent.get('/orders').expect(200);
    expect(page.text).to.contain('Imane’s order was added and declined at once: this number is blocked.');
    expect(page.text).not.to.contain('waiting for confirmation');
    const [order] = await testKnex()('orders').where({ workspace_id: owner.workspaceId });
    expect(order.status).to.equal('unconfirmed');
  });

  it("/api/stats gives the blocked declines as `blocked`, out of confirmation_rate's denominator; /stats shows them and no ISO date", async () => {
    const owner = await signUp();
    await openAllDay(owner);
    // One order confirmed by a call…
    const confirmed = await createOrder(owner);
    const next = await owner.agent.post('/api/calls/next').expect(200);
    await owner.agent.post(`/api/calls/${next.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    expect((await testKnex()('orders').where({ id: confirmed.id }).first()).status).to.equal('confirmed');
    // …and one declined at once: its number is blocked.
    await owner.agent.post('/api/settings/blocked-phones').send({ phone: '0661234567' }).expect(201);
    await createOrder(owner, { ...ORDER, phone: '0661234567', clientName: 'Blocked' });
    const stats = (await owner.agent.get('/api/stats').expect(200)).body;
    expect(stats).to.include({ orders: 2, confirmation_rate: 1, blocked: 1 });
    expect(stats.by_status.unconfirmed).to.equal(1);
    const page = await owner.agent.get('/stats').expect(200);
    expect(page.text).to.match(/Declined: blocked number<\/dt><dd>1<\/dd>/);
    // Dates read as on every other page ("25 Nov 2026"), never "2026-11-25" but in a datetime attribute.
    expect(page.text.replace(/datetime="[^"]*"/g, '').replace(/name="(from|to)"[^>]*>/g, '')).not.to.match(/>\s*\d{4}-\d{2}-\d{2}\s*</);
  });
});
