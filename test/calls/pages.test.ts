import { expect } from 'chai';
import type request from 'supertest';
import type { SignedIn } from '../helpers/app';
import { csrfOf, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, ORDER, openAllDay, operationRow, orderRow } from '../helpers/loop';
import { opened } from '../helpers/secrets';

type Shop = SignedIn & { workspaceId: string; csrf: string; post: (path: string, form?: Record<string, string>) => request.Test };

/** A signed-in member whose workspace has a human order handler and calls all day. */
async function shop(options: { handler?: 'human' | 'voice' | null } = {}): Promise<Shop> {
  const user = await signUp({ name: 'Salma Idrissi' });
  const kind = options.handler === undefined ? 'human' : options.handler;
  if (kind === 'human') await user.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  if (kind === 'voice')
    await user.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/calls', orderHandler: true }).expect(201);
  await openAllDay(user);
  const csrf = await csrfOf(user.agent);
  const post = (path: string, form: Record<string, string> = {}) =>
    user.agent
      .post(path)
      .type('form')
      .send({ _csrf: csrf, ...form });
  return { ...user, workspaceId: user.workspaceId!, csrf, post };
}

/** Claims the next call through the page form; answers the call's id. */
async function startCall(owner: Shop): Promise<string> {
  const res = await owner.post('/calls/next').expect(303);
  const match = /^\/calls\/([0-9a-f-]{36})$/.exec(res.headers.location);
  expect(match, res.headers.location).to.not.equal(null);
  return match![1];
}

function fieldErrors(html: string): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const m of html.matchAll(/<p class="error" id="f-([\w-]+)-error">([^<]*)<\/p>/g)) errors[m[1]] = m[2];
  return errors;
}

async function noticeOn(owner: Shop, page: string): Promise<string> {
  const res = await owner.agent.get(page).expect(200);
  return (/<p class="notice" role="status">([^<]*)<\/p>/.exec(res.text)?.[1] ?? '').replaceAll('&#39;', "'");
}

/** The instant whose Casablanca wall clock reads `local` ("YYYY-MM-DDTHH:MM"), found by trying each whole-hour offset. */
function casablancaInstant(local: string): string {
  const format = new Intl.DateTimeFormat('sv-SE', {
    timeZone: 'Africa/Casablanca',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  });
  for (const offset of [0, 1, -1, 2]) {
    const at = new Date(Date.parse(`${local}:00Z`) - offset * 3600_000);
    if (format.format(at).replace(' ', 'T') === local) return at.toISOString();
  }
  throw new Error(`no instant for ${local}`);
}

function casablancaLocal(at: Date): string {
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone: 'Africa/Casablanca',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  })
    .format(at)
    .replace(' ', 'T');
}

describe('calls pages', () => {
  it('/calls shows the due count, the calling hours and the start button; nav links Calls and Settings', async () => {
    const owner = await shop();
    await createOrder(owner);
    const res = await owner.agent.get('/calls').expect(200);
    expect(res.text).to.contain('href="/calls"').and.contain('href="/settings"');
    expect(res.text).to.match(/<dt>Due now<\/dt><dd>1<\/dd>/);
    expect(res.text).to.contain('00:00–24:00').and.contain('action="/calls/next"');
    expect(res.text).not.to.contain('Calls are paused');
  });

  it('"Start next call" claims the call (call row, operation in_progress, order calling) and shows the customer', async () => {
    const owner = await shop();
    const order = await createOrder(owner, {
      clientName: 'Amina Benali',
      phone: '0612345678',
      storeName: 'Atlas Shop',
      productsName: 'Argan oil x2',
      address: '12 rue de Fès',
    });
    const callId = await startCall(owner);
    const call = await testKnex()('calls').where({ id: callId }).first();
    expect(call).to.include({ made_by: owner.userId, kind: 'human', attempt: 1 });
    expect((await operationRow(call.operation_id)).status).to.equal('in_progress');
    expect((await orderRow(order.id)).status).to.equal('calling');

    const page = await owner.agent.get(`/calls/${callId}`).expect(200);
    expect(page.text)
      .to.contain('Amina Benali')
      .and.contain('href="tel:+212612345678"')
      .and.contain('Atlas Shop')
      .and.contain('Argan oil x2')
      .and.contain('12 rue de Fès')
      .and.contain(`action="/calls/${callId}/outcome"`);
    // One submit button per outcome: one tap records it, with or without JavaScript.
    for (const outcome of ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized', 'postponed', 'no-answer', 'failed']) {
      expect(page.text).to.match(new RegExp(`<button type="submit" name="outcome" value="${outcome}"`));
    }
    expect(page.text).not.to.contain('<select');
    expect(page.text).to.contain('type="datetime-local"');
    // /calls now offers the way back to the open call.
    expect((await owner.agent.get('/calls').expect(200)).text).to.contain(`href="/calls/${callId}"`);
    // Pressed again while the call is open: back to it, never a second call (issue 53, defect 6).
    await owner.post('/calls/next').expect(303).expect('Location', `/calls/${callId}`);
    // Once its outcome is recorded, nothing else is due.
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'confirmed' }).expect(303).expect('Location', '/calls');
    await owner.post('/calls/next').expect(303).expect('Location', '/calls');
    expect(await noticeOn(owner, '/calls')).to.equal('No call is due right now.');
  });

  it('says when calling hours are closed', async () => {
    const owner = await shop();
    await createOrder(owner);
    const now = casablancaLocal(new Date()).slice(11);
    // One minute, an hour from now: closed at the time of the test.
    const hour = (Number(now.slice(0, 2)) + 1) % 23;
    const start = `${String(hour).padStart(2, '0')}:00`;
    const end = `${String(hour).padStart(2, '0')}:01`;
    await owner.agent.put('/api/settings/calls').send({ callingHours: { start, end } }).expect(200);
    await owner.post('/calls/next').expect(303).expect('Location', '/calls');
    expect(await noticeOn(owner, '/calls')).to.match(/^Calling hours are closed/);
    expect(await testKnex()('calls').where({ workspace_id: owner.workspaceId })).to.have.length(0);
  });

  it('the outcome form moves the order and the operation, and returns to /calls naming the order', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const callId = await startCall(owner);
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'confirmed', notes: 'Wants it Friday' }).expect(303).expect('Location', '/calls');
    expect(await noticeOn(owner, '/calls')).to.equal("Amina Benali's order is confirmed. No call is due right now.");
    expect((await orderRow(order.id)).status).to.equal('confirmed');
    const call = await testKnex()('calls').where({ id: callId }).first();
    expect(call).to.include({ outcome: 'confirmed', summary: 'Wants it Friday' });
    expect((await operationRow(call.operation_id)).status).to.equal('completed');

    // The call has ended: a second outcome is refused with a notice, changing nothing.
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'unconfirmed' }).expect(303).expect('Location', '/calls');
    expect(await noticeOn(owner, '/calls')).to.match(/no longer yours to record/);
    expect((await orderRow(order.id)).status).to.equal('confirmed');
  });

  it('the caller settles the amount with the outcome: typed as people type it, stored exactly, refused beside its field', async () => {
    const owner = await shop();
    const order = await createOrder(owner, { ...ORDER, totalAmount: null });
    const callId = await startCall(owner);
    const page = await owner.agent.get(`/calls/${callId}`).expect(200);
    // No amount yet: said on the page, and the amount's fields are in sight in the outcome form (not behind a tap).
    expect(page.text)
      .to.contain('Not given')
      .and.match(/<div class="outcome-amount">[\s\S]*?name="total_amount"/);
    expect(page.text).not.to.contain('Set the amount agreed with the customer');

    // A bad amount: 400 with the message beside the field; the call stays open, the order unchanged.
    const refused = await owner.post(`/calls/${callId}/outcome`, { outcome: 'confirmed', total_amount: 'deux cents', currency: 'MAD' }).expect(400);
    expect(Object.keys(fieldErrors(refused.text))).to.deep.equal(['total_amount']);
    expect(refused.text).to.contain('value="deux cents"');
    expect(await orderRow(order.id)).to.include({ status: 'calling', total_amount: null });
    expect((await testKnex()('calls').where({ id: callId }).first()).ended_at).to.equal(null);

    await owner.post(`/calls/${callId}/outcome`, { outcome: 'confirmed', total_amount: '1 250,00', currency: 'MAD' }).expect(303);
    const stored = await testKnex()('orders').where({ id: order.id }).first('status', 'currency', testKnex().raw('total_amount::text AS amount'));
    expect(stored).to.deep.equal({ status: 'confirmed', currency: 'MAD', amount: '1250.000' });
    const api = await owner.agent.get(`/api/orders/${order.id}`).expect(200);
    expect(api.body).to.include({ total_amount: '1250.00', currency: 'MAD', status: 'confirmed' });
  });

  it("the API outcome takes the amount too, in the currency's decimals; an unchanged amount is left as it was", async () => {
    const owner = await shop();
    const order = await createOrder(owner, { ...ORDER, totalAmount: '89.350', currency: 'TND' });
    const callId = await startCall(owner);
    const tooFine = await owner.agent.post(`/api/calls/${callId}/outcome`).send({ outcome: 'confirmed', totalAmount: '89.3505' }).expect(400);
    expect(tooFine.body.fields).to.have.property('totalAmount');
    expect((await testKnex()('calls').where({ id: callId }).first()).ended_at).to.equal(null);
    const res = await owner.agent.post(`/api/calls/${callId}/outcome`).send({ outcome: 'order-changed', changes: 'One less', totalAmount: '79.5' }).expect(200);
    expect(res.body.order).to.include({ total_amount: '79.500', currency: 'TND', status: 'order-changed' });
    const row = await testKnex()('orders').where({ id: order.id }).first(testKnex().raw('total_amount::text AS amount'), 'currency');
    expect(row).to.deep.equal({ amount: '79.500', currency: 'TND' });
  });

  it('one tap records the outcome and opens the next due call, with the notice about the last one', async () => {
    const owner = await shop();
    const first = await createOrder(owner, { ...ORDER, clientName: 'Imane Alaoui' });
    const second = await createOrder(owner, { ...ORDER, clientName: 'Youssef Tazi', phone: '0661234567' });
    const callId = await startCall(owner);
    const res = await owner.post(`/calls/${callId}/outcome`, { outcome: 'confirmed' }).expect(303);
    const next = /^\/calls\/([0-9a-f-]{36})$/.exec(res.headers.location);
    expect(next, res.headers.location).to.not.equal(null);
    expect(next![1]).to.not.equal(callId);
    expect((await orderRow(first.id)).status).to.equal('confirmed');
    expect((await orderRow(second.id)).status).to.equal('calling');
    const nextCall = await testKnex()('calls').where({ id: next![1] }).first();
    expect(nextCall).to.include({ made_by: owner.userId, kind: 'human' });
    expect(await noticeOn(owner, `/calls/${next![1]}`)).to.equal("Imane Alaoui's order is confirmed.");
    // A "back to the queue" link stays on the call page.
    expect((await owner.agent.get(`/calls/${next![1]}`).expect(200)).text).to.contain('<a href="/calls">');
  });

  it('a callback time typed with another outcome is refused, never dropped in silence; nothing is written', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const callId = await startCall(owner);
    const before = await testKnex()('calls').where({ id: callId }).first();
    const local = `${casablancaLocal(new Date(Date.now() + 86_400_000)).slice(0, 10)}T22:45`;
    const res = await owner.post(`/calls/${callId}/outcome`, { outcome: 'no-answer', callback_at: local }).expect(400);
    expect(fieldErrors(res.text).callback_at).to.match(/You typed a callback time but tapped “No answer”/);
    // The typed time is still in the form, its field open.
    expect(res.text)
      .to.contain(`value="${local}"`)
      .and.match(/<details class="outcome-more" open>/);
    expect(await testKnex()('calls').where({ id: callId }).first()).to.deep.equal(before);
    expect((await orderRow(order.id)).status).to.equal('calling');
    // The same time with "Call back later" is honoured.
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'postponed', callback_at: local }).expect(303);
    const op = await operationRow(before.operation_id);
    expect(op.next_attempt_at.toISOString()).to.equal(casablancaInstant(local));
  });

  it('a callback time outside the calling hours is refused beside its field, naming the hours; nothing is written; a time inside them is honoured', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const callId = await startCall(owner);
    // The hours change while the call is open: 10:00–20:30 from now on.
    await owner.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: '10:00', end: '20:30' } })
      .expect(200);
    const before = await testKnex()('calls').where({ id: callId }).first();
    const tomorrow = casablancaLocal(new Date(Date.now() + 86_400_000)).slice(0, 10);
    const late = `${tomorrow}T22:45`;
    const res = await owner.post(`/calls/${callId}/outcome`, { outcome: 'postponed', callback_at: late }).expect(400);
    expect(fieldErrors(res.text).callback_at).to.equal(
      'Your calling hours are 10:00–20:30: a call back at that time would wait until they open. Choose a time within them, or change the calling hours.',
    );
    expect(res.text).to.contain(`value="${late}"`);
    expect(await testKnex()('calls').where({ id: callId }).first()).to.deep.equal(before);
    expect((await operationRow(before.operation_id)).status).to.equal('in_progress');
    expect((await orderRow(order.id)).status).to.equal('calling');
    // In French and Arabic too, by its code.
    await owner.agent.put('/api/account').send({ language: 'fr' }).expect(200);
    const fr = await owner.post(`/calls/${callId}/outcome`, { outcome: 'postponed', callback_at: late }).expect(400);
    expect(fieldErrors(fr.text).callback_at).to.match(/^Vos heures d’appel sont 10:00–20:30/);
    await owner.agent.put('/api/account').send({ language: 'ar' }).expect(200);
    const ar = await owner.post(`/calls/${callId}/outcome`, { outcome: 'postponed', callback_at: late }).expect(400);
    expect(fieldErrors(ar.text).callback_at).to.contain('\u206610:00–20:30\u2069');
    // 19:30 is inside the hours: honoured to the minute.
    const inside = `${tomorrow}T19:30`;
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'postponed', callback_at: inside }).expect(303);
    expect((await operationRow(before.operation_id)).next_attempt_at.toISOString()).to.equal(casablancaInstant(inside));
    expect((await testKnex()('calls').where({ id: callId }).first()).outcome).to.equal('postponed');
  });

  it('when nothing is due now, /calls says when the next call is due', async () => {
    const owner = await shop();
    await createOrder(owner);
    const callId = await startCall(owner);
    const local = `${casablancaLocal(new Date(Date.now() + 2 * 86_400_000)).slice(0, 10)}T11:15`;
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'postponed', callback_at: local }).expect(303).expect('Location', '/calls');
    const page = await owner.agent.get('/calls').expect(200);
    expect(page.text).to.match(/<dt>Due now<\/dt><dd>0<\/dd>/);
    expect(page.text).to.match(/<dt>Due later<\/dt><dd>1<\/dd>/);
    const due = /<p class="card" id="calls-none">No call is due now\. The next one is due on <strong><time datetime="([^"]+)">/.exec(page.text);
    expect(due, page.text.slice(page.text.indexOf('<main'))).to.not.equal(null);
    expect(due![1]).to.equal(casablancaInstant(local));
  });

  it('while the hours are closed: nothing is "due now", the start button is disabled with the opening, and new orders are due at it', async () => {
    const owner = await shop();
    const now = casablancaLocal(new Date()).slice(11);
    const hour = (Number(now.slice(0, 2)) + 2) % 23;
    const start = `${String(hour).padStart(2, '0')}:00`;
    const end = `${String(hour).padStart(2, '0')}:30`;
    const early = await createOrder(owner);
    await owner.agent.put('/api/settings/calls').send({ callingHours: { start, end } }).expect(200);
    const late = await createOrder(owner);
    const page = await owner.agent.get('/calls').expect(200);
    expect(page.text).to.match(/<dt>Due now<\/dt><dd>0<\/dd>/);
    expect(page.text).to.match(/<dt>Due later<\/dt><dd>2<\/dd>/);
    expect(page.text).to.match(/<button type="submit" disabled aria-describedby="calls-closed">Start next call<\/button>/);
    const opening = /<p class="card" id="calls-closed">[^<]*<strong><time datetime="([^"]+)"/.exec(page.text)![1];
    expect(casablancaLocal(new Date(opening)).slice(11)).to.equal(start);
    // The order created before the change and the one after are both due at the opening, not now.
    for (const order of [early, late]) {
      const op = await testKnex()('operations').where({ order_id: order.id }).first();
      expect(op.next_attempt_at.toISOString()).to.equal(opening);
      const shown = await owner.agent.get(`/orders/${order.id}`).expect(200);
      expect(shown.text).to.contain(`<time datetime="${opening}">`);
    }
  });

  it('a callback time typed in Morocco time is stored as the right UTC instant', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const callId = await startCall(owner);
    const local = `${casablancaLocal(new Date(Date.now() + 3 * 86_400_000)).slice(0, 10)}T19:30`;
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'postponed', callback_at: local }).expect(303);
    expect(await noticeOn(owner, '/calls')).to.match(/^Amina Benali asked to be called back: the next call is on /);
    const call = await testKnex()('calls').where({ id: callId }).first();
    expect(call.callback_at.toISOString()).to.equal(casablancaInstant(local));
    const op = await operationRow(call.operation_id);
    expect(op.status).to.equal('pending');
    expect(op.next_attempt_at.toISOString()).to.equal(casablancaInstant(local));
    expect((await orderRow(order.id)).status).to.equal('postponed');
  });

  it('bad outcome input re-renders with messages beside the fields and writes nothing', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const callId = await startCall(owner);
    const before = await testKnex()('calls').where({ id: callId }).first();
    const cases: Array<[Record<string, string>, string[]]> = [
      [{ outcome: '' }, ['outcome']],
      [{ outcome: 'maybe' }, ['outcome']],
      [{ outcome: 'postponed', callback_at: '' }, ['callback_at']],
      [{ outcome: 'postponed', callback_at: 'tomorrow' }, ['callback_at']],
      [{ outcome: 'postponed', callback_at: '2001-01-01T10:00' }, ['callback_at']],
      [{ outcome: 'confirmed', notes: 'x'.repeat(2001), changes: 'y'.repeat(2001) }, ['changes', 'notes']],
    ];
    for (const [form, fields] of cases) {
      const res = await owner.post(`/calls/${callId}/outcome`, form).expect(400);
      const errors = fieldErrors(res.text);
      expect(Object.keys(errors).sort(), JSON.stringify(form)).to.deep.equal(fields);
      for (const field of fields) expect(res.text).to.match(new RegExp(`aria-describedby="[^"]*f-${field}-error`));
      expect(res.text).not.to.contain('callbackAt');
    }
    expect(await testKnex()('calls').where({ id: callId }).first()).to.deep.equal(before);
    expect((await orderRow(order.id)).status).to.equal('calling');
  });

  it("another workspace's call is 404, on the page and the form; nothing changes", async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const callId = await startCall(owner);
    const stranger = await shop();
    const page = await stranger.agent.get(`/calls/${callId}`).expect(404);
    expect(page.text).to.contain('Page not found');
    await stranger.post(`/calls/${callId}/outcome`, { outcome: 'confirmed' }).expect(404);
    await stranger.agent.get('/calls/not-a-uuid').expect(404);
    expect((await orderRow(order.id)).status).to.equal('calling');
  });
});

describe('settings page', () => {
  it('saves the form with a notice, and re-renders bad values beside their fields without saving', async () => {
    const owner = await shop();
    const page = await owner.agent.get('/settings').expect(200);
    expect(page.text).to.contain('value="3"').and.contain('value="120"').and.contain('value="00:00"').and.contain('value="24:00"');
    // The calling hours are chosen from lists (every half hour), not typed: many phone keypads have no ":".
    for (const name of ['hours_start', 'hours_end']) {
      expect(page.text).to.match(new RegExp(`<select id="f-${name}" name="${name}"`));
      expect(page.text).not.to.match(new RegExp(`<input[^>]*name="${name}"`));
      const options = page.text
        .slice(page.text.indexOf(`name="${name}"`))
        .split('</select>')[0]
        .match(/<option value="\d\d:\d\d"/g);
      expect(options).to.have.length(49);
    }
    await owner
      .post('/settings', { max_attempts: '5', retry_interval_minutes: '30', hours_start: '08:30', hours_end: '20:00' })
      .expect(303)
      .expect('Location', '/settings');
    expect(await noticeOn(owner, '/settings')).to.equal('Call settings saved.');
    const saved = await testKnex()('call_settings').where({ workspace_id: owner.workspaceId }).first();
    expect(saved).to.include({ max_attempts: 5, retry_interval_minutes: 30, hours_start: '08:30', hours_end: '20:00' });

    const bad = await owner.post('/settings', { max_attempts: '11', retry_interval_minutes: 'often', hours_start: '21:00', hours_end: '09:00' }).expect(400);
    expect(Object.keys(fieldErrors(bad.text)).sort()).to.deep.equal(['hours', 'max_attempts', 'retry_interval_minutes']);
    expect(bad.text).to.contain('value="often"').and.not.contain('maxAttempts');
    expect(await testKnex()('call_settings').where({ workspace_id: owner.workspaceId }).first()).to.deep.equal(saved);
  });
});

describe('agents page: kinds and secrets', () => {
  it('adds a voice agent and shows its secret, not cached; the agent page reveals it; rotating replaces it', async () => {
    const owner = await shop();
    const created = await owner.post('/agents', { name: 'Robot', kind: 'voice', endpoint_url: 'http://127.0.0.1:9/calls' }).expect(201);
    expect(created.headers['cache-control']).to.equal('no-store');
    const agent = opened(await testKnex()('agents').where({ workspace_id: owner.workspaceId, name: 'Robot' }).first());
    expect(agent.kind).to.equal('voice');
    expect(created.text).to.contain(`value="${agent.secret}"`);

    const list = await owner.agent.get('/agents').expect(200);
    expect(list.text).to.contain('Voice agent').and.contain('http://127.0.0.1:9/calls').and.contain(`href="/agents/${agent.id}"`);
    expect(list.text).not.to.contain(agent.secret);

    const shown = await owner.agent.get(`/agents/${agent.id}`).expect(200);
    expect(shown.headers['cache-control']).to.equal('no-store');
    expect(shown.text).to.contain(`value="${agent.secret}"`).and.contain(`action="/agents/${agent.id}/rotate-secret"`);

    const rotated = await owner.post(`/agents/${agent.id}/rotate-secret`).expect(200);
    expect(rotated.headers['cache-control']).to.equal('no-store');
    const after = opened(await testKnex()('agents').where({ id: agent.id }).first());
    expect(after.secret)
      .to.match(/^whsec_/)
      .and.not.equal(agent.secret);
    expect(rotated.text).to.contain(`value="${after.secret}"`).and.not.contain(agent.secret);

    const stranger = await shop();
    await stranger.agent.get(`/agents/${agent.id}`).expect(404);
    await stranger.post(`/agents/${agent.id}/rotate-secret`).expect(404);
    expect(opened(await testKnex()('agents').where({ id: agent.id }).first()).secret).to.equal(after.secret);
  });

  it('a voice agent without an endpoint, or a human one with one, re-renders with the message beside the URL', async () => {
    const owner = await shop();
    for (const form of [
      { name: 'Robot', kind: 'voice', endpoint_url: '' },
      { name: 'Nadia', kind: 'human', endpoint_url: 'http://127.0.0.1:9/x' },
    ]) {
      const res = await owner.post('/agents', form).expect(400);
      expect(Object.keys(fieldErrors(res.text))).to.deep.equal(['endpoint_url']);
    }
    // The team's own agent (made at sign-up) and Desk: the refused one was not added.
    expect(await testKnex()('agents').where({ workspace_id: owner.workspaceId })).to.have.length(2);
  });
});

describe('orders pages: calls', () => {
  it('the order page shows the calls as a timeline, the next call, and "Call again" once nothing is open', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const pending = await owner.agent.get(`/orders/${order.id}`).expect(200);
    expect(pending.text).to.contain('Next call:').and.not.contain(`action="/orders/${order.id}/operations"`);
    await owner.post(`/orders/${order.id}/operations`).expect(303).expect('Location', `/orders/${order.id}`);
    expect(await noticeOn(owner, `/orders/${order.id}`)).to.match(/already has a confirmation call/);

    const callId = await startCall(owner);
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'order-changed', changes: 'Two bottles, not one', notes: 'Friendly' }).expect(303);
    const page = await owner.agent.get(`/orders/${order.id}`).expect(200);
    expect(page.text)
      .to.contain('Salma Idrissi')
      .and.contain('Two bottles, not one')
      .and.contain('Friendly')
      .and.contain('badge-order-changed')
      .and.contain(`action="/orders/${order.id}/operations"`);

    const before = await testKnex()('operations').where({ order_id: order.id });
    await owner.post(`/orders/${order.id}/operations`).expect(303).expect('Location', `/orders/${order.id}`);
    const after = await testKnex()('operations').where({ order_id: order.id });
    expect(after).to.have.length(before.length + 1);
    expect(after.find((op) => !before.some((b) => b.id === op.id))!.status).to.equal('pending');
    expect((await orderRow(order.id)).status).to.equal('pending');
  });

  it("the list shows each order's last outcome and next call time", async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const callId = await startCall(owner);
    await owner.post(`/calls/${callId}/outcome`, { outcome: 'no-answer' }).expect(303);
    const next = (await testKnex()('operations').where({ order_id: order.id }).first()).next_attempt_at as Date;
    const list = await owner.agent.get('/orders').expect(200);
    const row = /<tr>\s*<td class="client" data-label="Client">[\s\S]*?<\/tr>/.exec(list.text)![0];
    expect(row).to.match(/data-label="Last call"><span class="badge badge-no-answer">/);
    expect(row).to.contain(`datetime="${next.toISOString()}"`);
  });

  it('says "Calls are paused: no credits left" on /orders and /calls when a voice workspace has no credits', async () => {
    const owner = await shop({ handler: 'voice' });
    for (const page of ['/orders', '/calls']) {
      expect((await owner.agent.get(page).expect(200)).text, page).to.contain('Calls are paused: no credits left');
    }
    const human = await shop();
    expect((await human.agent.get('/orders').expect(200)).text).not.to.contain('Calls are paused');
  });
});
