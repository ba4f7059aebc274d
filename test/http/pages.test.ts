import { expect } from 'chai';
import request from 'supertest';
import { hashKey } from '../../services/accounts';
import type { Order } from '../../services/orders';
import { PHONE_HINT } from '../../services/shared';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfOf, signUp, uniqueEmail, unsetOrderHandler } from '../helpers/app';
import { testKnex } from '../helpers/db';

const ORDER_FORM = {
  client_name: 'فاطمة الزهراء',
  phone: '06 12 34 56 78',
  store_name: 'Pâtisserie Élise',
  products_name: 'Crème brûlée ×2, حلويات',
  address: '12 rue de Fès, Casablanca',
};
const ABSENT_ID = '00000000-0000-4000-8000-000000000000';

type Shop = SignedIn & {
  workspaceId: string;
  csrf: string;
  post: (path: string, form?: Record<string, string>) => request.Test;
};

/** A signed-in owner whose workspace has an order handler, with a form-posting helper. */
async function shop(options: { handler?: boolean } = {}): Promise<Shop> {
  const user = await signUp({ name: 'Salma Idrissi' });
  if (options.handler !== false) {
    await user.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
  } else {
    // The team's own agent is the handler from sign-up: unset it.
    await unsetOrderHandler(user);
  }
  const csrf = await csrfOf(user.agent);
  const post = (path: string, form: Record<string, string> = {}) =>
    user.agent
      .post(path)
      .type('form')
      .send({ _csrf: csrf, ...form });
  return { ...user, workspaceId: user.workspaceId!, csrf, post };
}

async function addOrder(owner: SignedIn, fields: Record<string, string> = {}): Promise<Order> {
  const body = { clientName: 'Amina Benali', phone: '0612345678', storeName: 'Atlas Shop', productsName: 'Argan oil', ...fields };
  return (await owner.agent.post('/api/orders').send(body).expect(201)).body;
}

const ordersOf = (workspaceId: string) => testKnex()('orders').where({ workspace_id: workspaceId }).orderBy('created_at');
const orderRow = (id: string) => testKnex()('orders').where({ id }).first();

/** The text of each `<p class="error" id="f-NAME-error">`, by field name. */
function fieldErrors(html: string): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const m of html.matchAll(/<p class="error" id="f-([\w-]+)-error">([^<]*)<\/p>/g)) errors[m[1]] = m[2];
  return errors;
}

const WORKSPACE_PAGES = [
  '/orders',
  '/orders/new',
  `/orders/${ABSENT_ID}`,
  `/orders/${ABSENT_ID}/delete`,
  '/agents',
  `/agents/${ABSENT_ID}`,
  '/calls',
  `/calls/${ABSENT_ID}`,
  '/settings',
  '/api-keys',
  '/credits',
];

describe('dashboard pages: access and layout', () => {
  it('redirect a signed-out visitor to /login', async () => {
    for (const page of [...WORKSPACE_PAGES, '/workspace']) {
      const res = await request(appUrl()).get(page).expect(303);
      expect(res.headers.location, page).to.equal('/login');
    }
  });

  it('send a signed-in user with no workspace to /workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    for (const page of WORKSPACE_PAGES) {
      const res = await agent.get(page).expect(303);
      expect(res.headers.location, page).to.equal('/workspace');
    }
    // Their form posts go the same way and write nothing.
    const csrf = await csrfOf(agent);
    const res = await agent.post('/agents').type('form').send({ _csrf: csrf, name: 'Nobody' }).expect(303);
    expect(res.headers.location).to.equal('/workspace');
    expect(await testKnex()('agents').where({ name: 'Nobody' })).to.have.length(0);
  });

  it('render every page for a signed-in user: layout, navigation, _csrf on every form, no inline script or style', async () => {
    const owner = await shop();
    const order = await addOrder(owner);
    await owner.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: '00:00', end: '24:00' } })
      .expect(200);
    const callPath = (await owner.post('/calls/next').expect(303)).headers.location;
    const voice = (await owner.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/calls' }).expect(201)).body;
    const pages = [
      '/orders',
      '/orders/new',
      `/orders/${order.id}`,
      `/orders/${order.id}/delete`,
      '/calls',
      callPath,
      '/settings',
      '/agents',
      `/agents/${voice.id}`,
      '/api-keys',
      '/credits',
      '/workspace',
    ];
    for (const page of pages) {
      const res = await owner.agent.get(page).expect(200);
      expect(res.headers['content-type'], page).to.equal('text/html; charset=utf-8');
      expect(res.text, page).to.contain('<meta charset="utf-8">').and.contain('name="viewport"');
      for (const link of ['/orders', '/calls', '/agents', '/settings', '/api-keys', '/credits', '/workspace'])
        expect(res.text, page).to.contain(`href="${link}"`);
      expect(res.text, page).to.contain('Salma Idrissi').and.contain('action="/logout"');
      const forms = res.text.match(/<form method="post"[\s\S]*?<\/form>/g) ?? [];
      expect(forms.length, page).to.be.greaterThan(0);
      for (const form of forms) expect(form, page).to.contain(`<input type="hidden" name="_csrf" value="${owner.csrf}">`);
      // The one script is a file (the copy buttons'); nothing inline.
      expect(res.text, page).not.to.match(/<script(?![^>]*\ssrc="\/assets\/copy\.[0-9a-f]+\.js")|\sstyle=|\son[a-z]+=/i);
      expect(res.text.match(/aria-current="page"/g) ?? [], page).to.have.length.of.at.most(2);
    }
    const workspace = await testKnex()('workspaces').where({ id: owner.workspaceId }).first();
    expect((await owner.agent.get('/orders')).text).to.contain(`<strong><bdi>${workspace.name}</bdi></strong>`);
  });

  it('render sign-up and sign-in for a visitor', async () => {
    for (const page of ['/signup', '/login']) {
      const res = await request(appUrl()).get(page).expect(200);
      expect(res.text).to.match(/<input type="hidden" name="_csrf" value="[\w-]+">/);
    }
  });

  it('refuse every dashboard form posted without _csrf (403) and write nothing', async () => {
    const owner = await shop();
    const order = await addOrder(owner);
    const [agentId] = (await testKnex()('agents').where({ workspace_id: owner.workspaceId }).pluck('id')) as string[];
    const key = (await owner.agent.post('/api/keys').send({ name: 'k' }).expect(201)).body;
    const invitation = (await owner.agent.post('/api/workspace/invitations').send({ email: uniqueEmail() }).expect(201)).body;
    const snapshot = async () => ({
      orders: await ordersOf(owner.workspaceId),
      agents: await testKnex()('agents').where({ workspace_id: owner.workspaceId }).orderBy('id'),
      keys: await testKnex()('api_keys').where({ workspace_id: owner.workspaceId }).orderBy('id'),
      invitations: await testKnex()('invitations').where({ workspace_id: owner.workspaceId }),
    });
    await owner.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: '00:00', end: '24:00' } })
      .expect(200);
    const done = await addOrder(owner, { clientName: 'Done', status: 'confirmed' });
    await testKnex()('operations').where({ order_id: done.id }).update({ status: 'cancelled', next_attempt_at: null });
    const callId = (await owner.agent.post('/api/calls/next').expect(200)).body.call.id;
    const voice = (await owner.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/calls' }).expect(201)).body;
    const loopSnapshot = async () => ({
      calls: await testKnex()('calls').where({ workspace_id: owner.workspaceId }).orderBy('id'),
      operations: await testKnex()('operations').where({ workspace_id: owner.workspaceId }).orderBy('id'),
      settings: await testKnex()('call_settings').where({ workspace_id: owner.workspaceId }),
      secrets: await testKnex()('agents').where({ workspace_id: owner.workspaceId }).orderBy('id').pluck('secret'),
    });
    const loopBefore = await loopSnapshot();
    const before = await snapshot();
    const posts: Array<[string, Record<string, string>]> = [
      ['/calls/next', {}],
      [`/calls/${callId}/outcome`, { outcome: 'confirmed' }],
      ['/settings', { max_attempts: '9', retry_interval_minutes: '5', hours_start: '01:00', hours_end: '02:00' }],
      [`/agents/${voice.id}/rotate-secret`, {}],
      [`/orders/${done.id}/operations`, {}],
      ['/orders', ORDER_FORM],
      [`/orders/${order.id}`, { ...ORDER_FORM, address: 'changed' }],
      [`/orders/${order.id}/status`, { status: 'confirmed' }],
      [`/orders/${order.id}/delete`, {}],
      ['/agents', { name: 'Sneaky', order_handler: '1' }],
      [`/agents/${agentId}/order-handler`, {}],
      ['/api-keys', { name: 'sneaky' }],
      [`/api-keys/${key.id}/revoke`, {}],
      ['/workspace/invitations', { email: uniqueEmail() }],
      [`/workspace/invitations/${invitation.id}/revoke`, {}],
      [new URL(invitation.join_url).pathname, {}],
    ];
    for (const [path, form] of posts) {
      const res = await owner.agent.post(path).type('form').send(form).expect(403);
      expect(res.text, path).to.contain('Your form has expired');
      const wrong = await owner.agent
        .post(path)
        .type('form')
        .send({ ...form, _csrf: 'x'.repeat(owner.csrf.length) })
        .expect(403);
      expect(wrong.text, path).to.contain('Your form has expired');
    }
    expect(await snapshot()).to.deep.equal(before);
    expect(await loopSnapshot()).to.deep.equal(loopBefore);
    // Sign-out too: a forged post cannot end the session.
    await owner.agent.post('/logout').type('form').send({}).expect(403);
    await owner.agent.get('/orders').expect(200);
  });

  it('a one-time notice waits for the next page load: a favicon or image request does not take it', async () => {
    const owner = await shop();
    await owner.post('/agents', { name: 'Imane' }).expect(303);
    await owner.agent.get('/favicon.ico').set('Sec-Fetch-Dest', 'image').expect(404);
    const page = await owner.agent.get('/agents').set('Sec-Fetch-Dest', 'document').expect(200);
    expect(page.text).to.contain('<p class="notice" role="status">Imane added.</p>');
    expect((await owner.agent.get('/agents')).text).not.to.contain('class="notice"');
  });
});

describe('orders pages', () => {
  it('the list shows a clear empty state', async () => {
    const owner = await shop();
    const res = await owner.agent.get('/orders').expect(200);
    expect(res.text).to.contain('No orders yet').and.contain('href="/orders/new"');
    expect(res.text).not.to.contain('<table');
  });

  it('POST /orders adds an order as typed (Arabic and French kept, phone normalized) and redirects with a one-time notice', async () => {
    const owner = await shop();
    const res = await owner.post('/orders', ORDER_FORM).expect(303);
    expect(res.headers.location).to.equal('/orders');
    const [row] = await ordersOf(owner.workspaceId);
    expect(row).to.include({
      client_name: 'فاطمة الزهراء',
      phone: '+212612345678',
      store_name: 'Pâtisserie Élise',
      products_name: 'Crème brûlée ×2, حلويات',
      address: '12 rue de Fès, Casablanca',
      status: 'pending',
    });
    expect(await testKnex()('operations').where({ order_id: row.id })).to.have.length(1);

    const list = await owner.agent.get('/orders').expect(200);
    expect(list.text).to.contain('<p class="notice" role="status">Order for فاطمة الزهراء added; it is pending confirmation.</p>');
    expect(list.text).to.contain('<bdi>فاطمة الزهراء</bdi>').and.contain('Crème brûlée ×2, حلويات').and.contain('Pâtisserie Élise');
    expect(list.text)
      .to.contain('href="tel:+212612345678"')
      .and.contain('>06 12 34 56 78</bdi></a>')
      .and.contain('<span class="badge badge-pending">pending</span>');
    expect(list.text).to.contain(`href="/orders/${row.id}"`);
    // Morocco time, e.g. "22 Nov 2026, 01:22".
    expect(list.text).to.match(/<time datetime="[^"]+Z">\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}<\/time>/);
    expect((await owner.agent.get('/orders')).text).not.to.contain('class="notice"');
  });

  it('an address is optional', async () => {
    const owner = await shop();
    await owner.post('/orders', { ...ORDER_FORM, address: '' }).expect(303);
    const [row] = await ordersOf(owner.workspaceId);
    expect(row.address).to.equal(null);
    expect((await owner.agent.get(`/orders/${row.id}`)).text).to.contain('No address');
  });

  it('POST /orders with bad fields re-renders (400) with the input kept and each message beside its field, writing nothing', async () => {
    const owner = await shop();
    const res = await owner
      .post('/orders', { client_name: '  ', phone: '06 12', store_name: 'Kept <b>store</b>', products_name: '', address: 'x'.repeat(501) })
      .expect(400);
    expect(fieldErrors(res.text)).to.deep.equal({
      client_name: 'Client name is required',
      phone: PHONE_HINT,
      products_name: 'Products are required',
      address: 'Address must be at most 500 characters',
    });
    expect(res.text).to.contain('<p class="error-box" role="alert">4 fields need fixing: the message is beside each one.</p>');
    expect(res.text).to.contain('value="06 12"').and.contain('value="Kept &lt;b&gt;store&lt;/b&gt;"');
    expect(res.text).to.match(/id="f-phone"[^>]*aria-invalid="true"[^>]*aria-describedby="f-phone-hint f-phone-error"/);
    expect(res.text).to.match(/id="f-client_name"[^>]*aria-invalid="true"[^>]*aria-describedby="f-client_name-error"/);
    expect(res.text).not.to.match(/id="f-store_name"[^>]*aria-invalid/);
    expect(await ordersOf(owner.workspaceId)).to.have.length(0);
  });

  it('POST /orders without an order handler sends the user to /agents with an explanation, writing nothing', async () => {
    const owner = await shop({ handler: false });
    expect((await owner.agent.get('/orders/new')).text).to.contain('no order handler yet');
    const res = await owner.post('/orders', ORDER_FORM).expect(303);
    expect(res.headers.location).to.equal('/agents');
    const agents = await owner.agent.get('/agents').expect(200);
    expect(agents.text).to.contain('Your order was not saved').and.contain('order handler');
    expect(await ordersOf(owner.workspaceId)).to.have.length(0);
  });

  it('escapes a <script> client name everywhere it is shown', async () => {
    const owner = await shop();
    const evil = '<script>alert(1)</script>';
    await owner.post('/orders', { ...ORDER_FORM, client_name: evil, address: '"><img src=x onerror=alert(2)>' }).expect(303);
    const [row] = await ordersOf(owner.workspaceId);
    expect(row.client_name).to.equal(evil);
    for (const page of ['/orders', `/orders/${row.id}`, `/orders/${row.id}/delete`]) {
      const res = await owner.agent.get(page).expect(200);
      expect(res.text, page).to.contain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(res.text, page).not.to.contain('<script>alert');
      expect(res.text, page).not.to.contain('<img src=x');
    }
  });

  it('the list is newest first, counts orders per status and filters by status', async () => {
    const owner = await shop();
    const first = await addOrder(owner, { clientName: 'Oldest' });
    const second = await addOrder(owner, { clientName: 'Middle', status: 'confirmed' });
    const third = await addOrder(owner, { clientName: 'Newest', status: 'no-answer' });
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
    await testKnex()('orders')
      .where({ id: first.id })
      .update({ created_at: hoursAgo(3) });
    await testKnex()('orders')
      .where({ id: second.id })
      .update({ created_at: hoursAgo(2) });
    await testKnex()('orders')
      .where({ id: third.id })
      .update({ created_at: hoursAgo(1) });

    const all = (await owner.agent.get('/orders').expect(200)).text;
    const names = [...all.matchAll(/<a href="\/orders\/[\w-]+"><bdi>([^<]+)<\/bdi>/g)].map((m) => m[1]);
    expect(names).to.deep.equal(['Newest', 'Middle', 'Oldest']);
    expect(all).to.contain('all <span class="count">3</span>');
    expect(all).to.contain('<span class="badge badge-confirmed">confirmed</span> <span class="count">1</span>');
    expect(all).to.contain('<span class="badge badge-no-answer">no answer</span> <span class="count">1</span>');
    expect(all).to.contain('<span class="badge badge-calling">calling</span> <span class="count">0</span>');

    const confirmed = (await owner.agent.get('/orders?status=confirmed').expect(200)).text;
    expect(confirmed).to.contain('Middle').and.not.contain('Newest').and.not.contain('Oldest');
    expect(confirmed).to.match(/href="\/orders\?status=confirmed" aria-current="page"/);
    const none = (await owner.agent.get('/orders?status=failed').expect(200)).text;
    expect(none).to.contain('No order is').and.contain('Show all orders');
    expect((await owner.agent.get('/orders?status=').expect(200)).text).to.contain('Oldest');

    const unknown = await owner.agent.get('/orders?status=%3Cscript%3Ebogus').expect(400);
    expect(unknown.text).to.contain('Unknown status').and.not.contain('<script>bogus');
    await owner.agent.get('/orders?status=pending&status=confirmed').expect(400);
  });

  it('the detail page edits content while pending: kept input and messages on error, the change on success', async () => {
    const owner = await shop();
    const order = await addOrder(owner, { address: 'Old address' });
    const page = await owner.agent.get(`/orders/${order.id}`).expect(200);
    expect(page.text).to.contain(`action="/orders/${order.id}"`).and.contain('Old address');
    expect(page.text).to.contain(`href="/orders/${order.id}/delete"`);

    const form = { client_name: 'Amina Benali', phone: '+212 (0)6 61 23 45 67', store_name: 'Atlas Shop', products_name: 'Argan oil' };
    const bad = await owner.post(`/orders/${order.id}`, { ...form, phone: 'not a phone', address: 'Nouvelle adresse, Fès' }).expect(400);
    expect(fieldErrors(bad.text)).to.deep.equal({ phone: PHONE_HINT });
    expect(bad.text).to.contain('value="not a phone"').and.contain('>Nouvelle adresse, Fès</textarea>');
    expect((await orderRow(order.id)).address).to.equal('Old address');

    const res = await owner.post(`/orders/${order.id}`, { ...form, address: 'Nouvelle adresse, Fès' }).expect(303);
    expect(res.headers.location).to.equal(`/orders/${order.id}`);
    expect(await orderRow(order.id)).to.include({ address: 'Nouvelle adresse, Fès', phone: '+212661234567', status: 'pending' });
    expect((await owner.agent.get(`/orders/${order.id}`)).text).to.contain('Order updated.');

    await owner.post(`/orders/${order.id}`, { ...form, address: '' }).expect(303);
    expect((await orderRow(order.id)).address).to.equal(null);
  });

  it('changes the status; then the edit form is gone and a content edit is refused (409), changing nothing', async () => {
    const owner = await shop();
    const order = await addOrder(owner);
    const res = await owner.post(`/orders/${order.id}/status`, { status: 'confirmed' }).expect(303);
    expect(res.headers.location).to.equal(`/orders/${order.id}`);
    expect((await orderRow(order.id)).status).to.equal('confirmed');

    const page = (await owner.agent.get(`/orders/${order.id}`).expect(200)).text;
    expect(page).to.contain('Status changed to confirmed.').and.contain('<span class="badge badge-confirmed">confirmed</span>');
    expect(page).not.to.contain(`action="/orders/${order.id}"`);
    expect(page).to.contain('Only a pending order can be edited');
    expect(page).to.contain('<option value="confirmed" selected>confirmed</option>');

    const before = await orderRow(order.id);
    const refused = await owner
      .post(`/orders/${order.id}`, { client_name: 'Changed', phone: '0612345678', store_name: 's', products_name: 'p', address: '' })
      .expect(409);
    expect(refused.text).to.contain('Only a pending order can be edited; its status can still be changed');
    expect(await orderRow(order.id)).to.deep.equal(before);
  });

  it('an unknown status re-renders with the message beside the status field, changing nothing', async () => {
    const owner = await shop();
    const order = await addOrder(owner);
    for (const status of ['shipped', '']) {
      const res = await owner.post(`/orders/${order.id}/status`, { status }).expect(400);
      expect(fieldErrors(res.text).status).to.match(/^Unknown status; use one of: pending, /);
      expect(res.text).to.contain('aria-describedby="f-status-error"');
    }
    expect((await orderRow(order.id)).status).to.equal('pending');
  });

  it('deletes an order after a confirmation page', async () => {
    const owner = await shop();
    const order = await addOrder(owner, { clientName: 'Karim' });
    const confirm = await owner.agent.get(`/orders/${order.id}/delete`).expect(200);
    expect(confirm.text).to.contain('Delete this order?').and.contain('Karim').and.contain(`action="/orders/${order.id}/delete"`);
    expect(await orderRow(order.id)).to.be.an('object');
    const res = await owner.post(`/orders/${order.id}/delete`).expect(303);
    expect(res.headers.location).to.equal('/orders');
    expect(await orderRow(order.id)).to.equal(undefined);
    expect(await testKnex()('operations').where({ order_id: order.id })).to.have.length(0);
    expect((await owner.agent.get('/orders')).text).to.contain('The order for Karim was deleted.');
  });

  it("another workspace's order id, an absent id and a non-UUID show the 404 page and change nothing", async () => {
    const owner = await shop();
    const other = await shop();
    const foreign = await addOrder(other, { clientName: 'Secret client' });
    const before = await orderRow(foreign.id);
    for (const id of [foreign.id, ABSENT_ID, 'not-a-uuid']) {
      for (const page of [`/orders/${id}`, `/orders/${id}/delete`]) {
        const res = await owner.agent.get(page).expect(404);
        expect(res.text, page).to.contain('Page not found').and.not.contain('Secret client');
      }
      await owner.post(`/orders/${id}`, ORDER_FORM).expect(404);
      await owner.post(`/orders/${id}/status`, { status: 'confirmed' }).expect(404);
      await owner.post(`/orders/${id}/status`, { status: 'bogus' }).expect(404);
      await owner.post(`/orders/${id}/delete`).expect(404);
    }
    expect(await orderRow(foreign.id)).to.deep.equal(before);
  });
});

describe('agents page', () => {
  it('adds agents and chooses the order handler', async () => {
    const owner = await shop({ handler: false });
    const empty = await owner.agent.get('/agents').expect(200);
    // The team's own agent (made at sign-up) is listed, no longer the handler.
    expect(empty.text)
      .to.match(/Shop [0-9a-f]+ team/)
      .and.not.contain('badge-handler');
    expect(empty.text, 'with no handler yet, the box starts checked').to.match(/name="order_handler" type="checkbox" value="1" checked/);

    const res = await owner.post('/agents', { name: 'Hajar الإدريسي', order_handler: '1' }).expect(303);
    expect(res.headers.location).to.equal('/agents');
    await owner.post('/agents', { name: 'Omar' }).expect(303);
    const rows = await testKnex()('agents').where({ workspace_id: owner.workspaceId }).whereNot('name', 'like', '% team').orderBy('created_at');
    expect(rows.map((r) => [r.name, r.is_order_handler])).to.deep.equal([
      ['Hajar الإدريسي', true],
      ['Omar', false],
    ]);

    const page = await owner.agent.get('/agents').expect(200);
    expect(page.text).to.contain('Omar added.').and.contain('<span class="badge badge-handler">order handler</span>');
    expect(page.text).not.to.match(/name="order_handler" type="checkbox" value="1" checked/);
    expect(page.text).to.contain(`action="/agents/${rows[1].id}/order-handler"`).and.not.contain(`action="/agents/${rows[0].id}/order-handler"`);

    await owner.post(`/agents/${rows[1].id}/order-handler`).expect(303);
    const after = await testKnex()('agents').where({ workspace_id: owner.workspaceId }).whereNot('name', 'like', '% team').orderBy('created_at');
    expect(after.map((r) => r.is_order_handler)).to.deep.equal([false, true]);
    expect((await owner.agent.get('/agents')).text).to.contain('Omar is now the order handler.');
  });

  it('an empty name re-renders with the message beside the field and the box kept, writing nothing', async () => {
    const owner = await shop({ handler: false });
    const res = await owner.post('/agents', { name: '   ', order_handler: '1' }).expect(400);
    expect(fieldErrors(res.text)).to.deep.equal({ name: 'Name is required' });
    expect(res.text).to.match(/name="order_handler" type="checkbox" value="1" checked/);
    expect(res.text).to.match(/id="f-name"[^>]*aria-invalid="true"[^>]*aria-describedby="f-name-error"/);
    // Only the team's own agent, made at sign-up.
    expect(await testKnex()('agents').where({ workspace_id: owner.workspaceId })).to.have.length(1);
  });

  it("another workspace's agent cannot be made handler (404)", async () => {
    const owner = await shop();
    const other = await shop();
    const [foreign] = await testKnex()('agents').where({ workspace_id: other.workspaceId });
    await other.agent.post('/api/agents').send({ name: 'Second', orderHandler: true }).expect(201);
    for (const id of [foreign.id, 'nope']) await owner.post(`/agents/${id}/order-handler`).expect(404);
    expect((await testKnex()('agents').where({ id: foreign.id }).first()).is_order_handler).to.equal(false);
  });
});

describe('API keys page', () => {
  it('creates a key and shows it in full exactly once, then lists it by prefix', async () => {
    const owner = await shop();
    const shown = await owner.post('/api-keys', { name: 'Plugin WooCommerce', expires_in_days: ' 30 ' }).expect(201);
    const [row] = await testKnex()('api_keys').where({ workspace_id: owner.workspaceId });
    expect(row.name).to.equal('Plugin WooCommerce');
    const days = (new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()) / 86_400_000;
    expect(days).to.be.closeTo(30, 0.01);

    // Shown in the response to the form post only: never stored in the session.
    expect(shown.headers['cache-control']).to.equal('no-store');
    expect(JSON.stringify(await testKnex()('session').whereRaw("sess->>'userId' = ?", [owner.userId]))).not.to.contain('sk_live_');
    const key = /<input id="new-key" class="key" type="text" readonly value="(sk_live_[\w-]{43})"/.exec(shown.text)?.[1];
    expect(key, 'the full key in a readonly field').to.be.a('string');
    expect(hashKey(key!)).to.equal(row.key_hash);
    expect(shown.text).to.contain('shown only this once').and.contain(`<code>${row.prefix}…</code>`);

    const again = await owner.agent.get('/api-keys').expect(200);
    expect(again.text).not.to.contain(key!).and.not.contain('id="new-key"');
    expect(again.text).to.contain(`<code>${row.prefix}…</code>`).and.contain('Plugin WooCommerce');
    expect(again.text).to.contain('<span class="badge badge-key-active">active</span>');
    expect(again.text).to.match(/data-label="Last used">Never</);

    await owner.post('/api-keys', {}).expect(201);
    expect(await testKnex()('api_keys').where({ workspace_id: owner.workspaceId, expires_at: null })).to.have.length(1);
  });

  it('a bad expiry or name re-renders with the message beside the field, writing nothing', async () => {
    const owner = await shop();
    for (const expires of ['0', '366', '1.5', 'soon']) {
      const res = await owner.post('/api-keys', { name: 'Kept', expires_in_days: expires }).expect(400);
      expect(fieldErrors(res.text), expires).to.deep.equal({ expires_in_days: 'expiresInDays must be a whole number of days from 1 to 365' });
      expect(res.text).to.contain(`value="${expires}"`).and.contain('value="Kept"');
    }
    const long = await owner.post('/api-keys', { name: 'n'.repeat(101) }).expect(400);
    expect(fieldErrors(long.text)).to.deep.equal({ name: 'Name must be at most 100 characters' });
    expect(await testKnex()('api_keys').where({ workspace_id: owner.workspaceId })).to.have.length(0);
  });

  it("revokes a key; another workspace's key is 404", async () => {
    const owner = await shop();
    const other = await shop();
    const mine = (await owner.agent.post('/api/keys').send({ name: 'mine' }).expect(201)).body;
    const theirs = (await other.agent.post('/api/keys').send({ name: 'theirs' }).expect(201)).body;
    await owner.post(`/api-keys/${mine.id}/revoke`).expect(303);
    expect((await testKnex()('api_keys').where({ id: mine.id }).first()).revoked_at).to.be.instanceOf(Date);
    const page = (await owner.agent.get('/api-keys')).text;
    expect(page).to.contain('API key revoked').and.contain('<span class="badge badge-key-revoked">revoked</span>');
    expect(page).not.to.contain(`action="/api-keys/${mine.id}/revoke"`);
    await owner.post(`/api-keys/${theirs.id}/revoke`).expect(404);
    expect((await testKnex()('api_keys').where({ id: theirs.id }).first()).revoked_at).to.equal(null);
  });
});

describe('credits page', () => {
  it('shows the three numbers of the owner balance to every member', async () => {
    const owner = await shop();
    await testKnex()('credit_ledger').insert([
      { user_id: owner.userId, kind: 'grant', amount: 1500 },
      { user_id: owner.userId, kind: 'spend', amount: 250.5 },
    ]);
    const member = await signUp({ invitedBy: owner });
    for (const who of [owner, member]) {
      const res = await who.agent.get('/credits').expect(200);
      expect(res.text).to.contain('<dt>Available</dt><dd>1,249.5</dd>');
      expect(res.text).to.contain('<dt>Granted in total</dt><dd>1,500</dd>');
      expect(res.text).to.contain('<dt>Spent in total</dt><dd>250.5</dd>');
    }
  });
});

describe('copy buttons and the WhatsApp share link (what is shown once or pasted elsewhere)', () => {
  /** The `_once` token of the form that posts to `action`. */
  const onceFrom = (html: string, action: string) => /name="_once" value="([^"]+)"/.exec(html.slice(html.indexOf(`action="${action}"`)))![1];

  /** Posts a creation form and answers the page that shows what was made (the answer itself, or where it sent us). */
  async function created(owner: SignedIn, page: string, action: string, form: Record<string, string>): Promise<string> {
    const html = (await owner.agent.get(page).expect(200)).text;
    const res = await owner.agent
      .post(action)
      .type('form')
      .send({ _csrf: /name="_csrf" value="([^"]+)"/.exec(html)![1], _once: onceFrom(html, action), ...form });
    expect(res.status, res.text.slice(0, 300)).to.be.oneOf([200, 201, 303]);
    return res.status === 303 ? (await owner.agent.get(res.headers.location).expect(200)).text : res.text;
  }

  /**
   * The value a copy button copies: the button names its target, a read-only field whose text stays
   * selectable without JavaScript (the button is hidden until the script runs).
   */
  function copyable(html: string, id: string): string {
    expect(html, `a copy button for #${id}`).to.match(new RegExp(`<button type="button" class="secondary copy" data-copy="${id}"[^>]* hidden>`));
    const field = new RegExp(`<input id="${id}" class="key" type="text" readonly value="([^"]+)"`).exec(html);
    expect(field, `#${id} is a read-only field`).to.not.equal(null);
    return field![1];
  }

  /** No link on the page carries the value, in clear or URL-encoded. */
  function inNoHref(html: string, value: string): void {
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    for (const href of hrefs) {
      expect(href, 'a secret never goes into a URL').not.to.contain(value);
      expect(decodeURIComponent(href.replaceAll('&amp;', '&'))).not.to.contain(value);
    }
    expect(html, 'no WhatsApp share link').not.to.match(/wa\.me|api\.whatsapp\.com/);
  }

  it('a join link: copy button on a read-only field, and a wa.me link whose text carries the link', async () => {
    const owner = await signUp();
    const html = await created(owner, '/workspace', '/workspace/invitations', { email: uniqueEmail('colleague') });
    const joinUrl = copyable(html, 'join-url');
    expect(joinUrl).to.match(/^https?:\/\/[^/]+\/join\//);
    const share = [...html.matchAll(/href="(https:\/\/(?:wa\.me|api\.whatsapp\.com)\/[^"]*)"/g)].map((m) => m[1].replaceAll('&amp;', '&'));
    expect(share).to.have.length(1);
    expect(new URL(share[0]).searchParams.get('text')).to.contain(joinUrl);
  });

  it('an API key: copy button on a read-only field; no link carries it and none shares it', async () => {
    const owner = await signUp();
    const html = await created(owner, '/api-keys', '/api-keys', { name: 'Plugin' });
    const key = copyable(html, 'new-key');
    expect(hashKey(key)).to.equal((await testKnex()('api_keys').where({ workspace_id: owner.workspaceId }).first()).key_hash);
    inNoHref(html, key);
  });

  it("a store connection's intake URL and secret: both with copy buttons; the secret in no link", async () => {
    const owner = await signUp();
    const html = await created(owner, '/stores/new?kind=custom', '/stores', { kind: 'custom', name: 'Sheet' });
    const store = await testKnex()('store_connections').where({ workspace_id: owner.workspaceId }).first();
    expect(copyable(html, 'intake-url')).to.contain(store.id);
    const secret = copyable(html, 'secret');
    inNoHref(html, secret);
  });

  it("a webhook endpoint's and a voice agent's signing secrets: copy buttons; in no link", async () => {
    const owner = await signUp();
    const { body: endpoint } = await owner.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201);
    const hook = (await owner.agent.get(`/webhooks/${endpoint.id}`).expect(200)).text;
    expect(copyable(hook, 'secret')).to.equal(endpoint.secret);
    inNoHref(hook, endpoint.secret);
    const agents = await created(owner, '/agents', '/agents', { name: 'Robot', kind: 'voice', endpoint_url: 'http://127.0.0.1:9/calls' });
    const secret = copyable(agents, 'new-secret');
    inNoHref(agents, secret);
  });
});
