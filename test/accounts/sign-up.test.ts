import { expect } from 'chai';
import request from 'supertest';
import { appUrl, csrfFrom, csrfOf, signUp, testApp, uniqueEmail } from '../helpers/app';
import { testKnex } from '../helpers/db';

const sessionCookie = (res: request.Response): string | undefined =>
  ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .find((c) => c.startsWith('ocs.sid='))
    ?.split(';')[0];

async function loginForm(agent = request.agent(appUrl())) {
  const page = await agent.get('/login').expect(200);
  return { agent, csrf: csrfFrom(page.text), cookie: sessionCookie(page) };
}

describe('sign-up', () => {
  it('creates the user and their workspace as owner, and signs them in', async () => {
    const { agent, email, userId, workspaceId } = await signUp({ workspace: 'Boutique Atlas' });
    const user = await testKnex()('users').where({ id: userId }).first();
    expect(user.email).to.equal(email);
    expect(user.password_hash).to.match(/^\$2[aby]\$04\$/);
    const workspace = await testKnex()('workspaces').where({ id: workspaceId }).first();
    expect(workspace).to.include({ name: 'Boutique Atlas', owner_id: userId });
    const member = await testKnex()('workspace_members').where({ user_id: userId }).first();
    expect(member.role).to.equal('owner');
    const home = await agent.get('/').expect(303);
    expect(home.headers.location).to.equal('/orders');
  });

  it('without a workspace, the user has none and is sent to /workspace', async () => {
    const { agent, userId, workspaceId } = await signUp({ workspace: null });
    expect(workspaceId).to.equal(null);
    expect(await testKnex()('workspace_members').where({ user_id: userId })).to.have.length(0);
    expect((await agent.get('/').expect(303)).headers.location).to.equal('/workspace');
    const page = await agent.get('/workspace').expect(200);
    expect(page.text).to.contain('Create your workspace');
  });

  it('re-renders the form with every bad field and the input kept, writing nothing', async () => {
    const agent = request.agent(appUrl());
    const page = await agent.get('/signup');
    const res = await agent
      .post('/signup')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), name: '  ', email: 'not-an-email', password: 'short', workspace: 'Kept <b>' })
      .expect(400);
    expect(res.text).to.contain('Name is required');
    expect(res.text).to.contain('Enter a valid email address');
    expect(res.text).to.contain('Password must be at least 8 characters');
    expect(res.text).to.contain('value="Kept &lt;b&gt;"');
    expect(res.text).to.contain('aria-describedby="f-email-error"');
    expect(await testKnex()('users').where({ email: 'not-an-email' })).to.have.length(0);
  });

  it('refuses a second account for the same email, whatever its case', async () => {
    const { email } = await signUp();
    const agent = request.agent(appUrl());
    const page = await agent.get('/signup');
    const res = await agent
      .post('/signup')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), name: 'Other', email: email.toUpperCase(), password: 'another password' })
      .expect(400);
    expect(res.text).to.contain('An account with this email already exists');
    expect(await testKnex()('users').whereRaw('lower(email) = ?', [email])).to.have.length(1);
  });

  it('refuses passwords over 72 bytes (bcrypt would ignore the rest) and accepts exactly 72', async () => {
    const agent = request.agent(appUrl());
    const page = await agent.get('/signup');
    const email = uniqueEmail();
    // 36 Arabic letters are 72 bytes in UTF-8; one more letter is 74.
    const tooLong = 'ب'.repeat(37);
    const res = await agent
      .post('/signup')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), name: 'Amal', email, password: tooLong })
      .expect(400);
    expect(res.text).to.contain('at most 72 bytes');
    expect(await testKnex()('users').where({ email })).to.have.length(0);
    await agent
      .post('/signup')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), name: 'Amal', email, password: 'ب'.repeat(36) })
      .expect(303);
    expect(await testKnex()('users').where({ email })).to.have.length(1);
  });
});

describe("sign-up: the workspace's first agent, so the first order is taken at once", () => {
  for (const c of [
    { lng: 'en', agent: 'Dar Imane team' },
    { lng: 'fr', agent: 'Équipe Dar Imane' },
    { lng: 'ar', agent: 'فريق Dar Imane' },
  ] as const) {
    it(`${c.lng}: signing up in ${c.lng} makes a human agent "${c.agent}" the order handler; the first order from the form goes to it`, async () => {
      const agent = request.agent(appUrl());
      const page = await agent.get('/signup').set('Accept-Language', c.lng).expect(200);
      expect(page.text).to.contain(`<html lang="${c.lng}"`);
      const email = uniqueEmail();
      await agent
        .post('/signup')
        .set('Accept-Language', c.lng)
        .type('form')
        .send({ _csrf: csrfFrom(page.text), name: 'Imane', email, password: 'correct horse battery', workspace: 'Dar Imane' })
        .expect(303);
      const { workspace_id: workspaceId } = await testKnex()('users as u')
        .join('workspace_members as m', 'm.user_id', 'u.id')
        .where('u.email', email)
        .first('m.workspace_id');
      const agents = await testKnex()('agents').where({ workspace_id: workspaceId });
      expect(agents.map((a) => ({ name: a.name, kind: a.kind, is_order_handler: a.is_order_handler }))).to.deep.equal([
        { name: c.agent, kind: 'human', is_order_handler: true },
      ]);
      // The first-order form takes the order: no detour to /agents.
      const form = await agent.get('/orders/new').expect(200);
      expect(form.text).not.to.contain('class="warning" role="note"');
      const added = await agent
        .post('/orders')
        .type('form')
        .send({ _csrf: csrfFrom(form.text), client_name: 'Amina', phone: '0612345678', store_name: 'Souk', products_name: 'Thé' })
        .expect(303);
      expect(added.headers.location).to.equal('/orders');
      const [order] = await testKnex()('orders').where({ workspace_id: workspaceId });
      expect(order.status).to.equal('pending');
      expect((await testKnex()('operations').where({ order_id: order.id }).first()).agent_id).to.equal(agents[0].id);
    });
  }
});

describe('sign-in and sign-out', () => {
  it('signs in with the right password and issues a new session id', async () => {
    const { email, password } = await signUp();
    const { agent, csrf, cookie: before } = await loginForm();
    expect(before, 'the login page starts a session for its CSRF token').to.be.a('string');
    const res = await agent.post('/login').type('form').send({ _csrf: csrf, email, password }).expect(303);
    const after = sessionCookie(res);
    expect(after).to.be.a('string').and.not.equal(before);
    expect((await agent.get('/api/credits').expect(200)).body).to.have.keys('credits', 'totalCredits', 'totalSpent');
    // The pre-login session id no longer signs anybody in.
    await request(appUrl()).get('/api/credits').set('Cookie', before!).expect(401);
  });

  it('answers a wrong password and an unknown email identically', async () => {
    const { email } = await signUp();
    const a = await loginForm();
    const wrong = await a.agent.post('/login').type('form').send({ _csrf: a.csrf, email, password: 'wrong password' });
    const b = await loginForm();
    const unknown = await b.agent
      .post('/login')
      .type('form')
      .send({ _csrf: b.csrf, email: uniqueEmail('nobody'), password: 'wrong password' });
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    const message = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
    expect(message(wrong.text)).to.equal('Invalid email or password');
    expect(message(unknown.text)).to.equal(message(wrong.text));
  });

  it('sign-out destroys the session: the old cookie is rejected afterwards', async () => {
    const { email, password } = await signUp();
    const { agent, csrf } = await loginForm();
    const signedIn = await agent.post('/login').type('form').send({ _csrf: csrf, email, password }).expect(303);
    const cookie = sessionCookie(signedIn)!;
    const sid = decodeURIComponent(cookie.split('=')[1]).slice(2).split('.')[0];
    expect(await testKnex()('session').where({ sid })).to.have.length(1);
    const page = await agent.get('/workspace').expect(200);
    const res = await agent
      .post('/logout')
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(303);
    expect(res.headers.location).to.equal('/login');
    expect(await testKnex()('session').where({ sid })).to.have.length(0);
    await request(appUrl()).get('/api/credits').set('Cookie', cookie).expect(401);
    await agent.get('/api/credits').expect(401);
  });

  it('limits failed sign-in attempts per email, saying when to retry', async () => {
    const limited = testApp({ LOGIN_LIMIT_PER_EMAIL: '3' });
    const { email, password } = await signUp({ target: limited });
    for (let i = 0; i < 3; i++) {
      const { agent, csrf } = await loginForm(request.agent(limited));
      await agent
        .post('/login')
        .type('form')
        .send({ _csrf: csrf, email, password: `guess ${i}` })
        .expect(401);
    }
    const { agent, csrf } = await loginForm(request.agent(limited));
    const res = await agent.post('/login').type('form').send({ _csrf: csrf, email, password }).expect(429);
    expect(res.headers['retry-after']).to.match(/^\d+$/);
    expect(res.text).to.contain('Too many sign-in attempts');
  });

  it('limits failed sign-in attempts per IP across emails', async () => {
    const limited = testApp({ LOGIN_LIMIT_PER_IP: '2' });
    for (let i = 0; i < 2; i++) {
      const { agent, csrf } = await loginForm(request.agent(limited));
      await agent
        .post('/login')
        .type('form')
        .send({ _csrf: csrf, email: uniqueEmail(), password: 'x'.repeat(9) })
        .expect(401);
    }
    const { agent, csrf } = await loginForm(request.agent(limited));
    await agent
      .post('/login')
      .type('form')
      .send({ _csrf: csrf, email: uniqueEmail(), password: 'x'.repeat(9) })
      .expect(429);
  });
});

describe('workspaces and invitations', () => {
  it('a user without a workspace creates one and becomes its owner', async () => {
    const { agent, userId } = await signUp({ workspace: null });
    const csrf = await csrfOf(agent);
    const res = await agent.post('/workspace').type('form').send({ _csrf: csrf, name: 'Dar Nour' }).expect(303);
    expect(res.headers.location).to.equal('/workspace');
    const page = await agent.get('/workspace').expect(200);
    expect(page.text).to.contain('Workspace “Dar Nour” created.');
    const member = await testKnex()('workspace_members as m').join('workspaces as w', 'w.id', 'm.workspace_id').where({ user_id: userId }).first();
    expect(member).to.include({ name: 'Dar Nour', role: 'owner' });
    // A second workspace is refused.
    await agent.post('/workspace').type('form').send({ _csrf: csrf, name: 'Another' }).expect(409);
  });

  it('a person invited signs up through the join link, joins the workspace and sees the members list', async () => {
    const owner = await signUp();
    const invitee = uniqueEmail('invitee');
    const joined = await signUp({ email: invitee, invitedBy: owner });
    expect(joined.workspaceId).to.equal(owner.workspaceId);
    const role = await testKnex()('workspace_members').where({ user_id: joined.userId }).first();
    expect(role.role).to.equal('member');
    const page = await joined.agent.get('/workspace').expect(200);
    expect(page.text).to.contain(owner.email).and.contain(invitee);
    expect(page.text).not.to.contain('Invite a member');
  });

  it('an existing user without a workspace joins through the link once signed in (the address matched case-insensitively)', async () => {
    const loner = await signUp({ workspace: null });
    const owner = await signUp();
    const created = await owner.agent.post('/api/workspace/invitations').send({ email: loner.email.toUpperCase() }).expect(201);
    const path = new URL(created.body.join_url).pathname;
    const { agent, csrf } = await loginForm();
    await agent.post('/login').type('form').send({ _csrf: csrf, email: loner.email, password: loner.password }).expect(303);
    expect(await testKnex()('workspace_members').where({ user_id: loner.userId })).to.have.length(0);
    const page = await agent.get(path).expect(200);
    await agent
      .post(path)
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(303);
    const member = await testKnex()('workspace_members').where({ user_id: loner.userId }).first();
    expect(member).to.include({ workspace_id: owner.workspaceId, role: 'member' });
  });

  it('only the owner invites; a bad email re-renders with the message', async () => {
    const owner = await signUp();
    const res = await owner.agent
      .post('/workspace/invitations')
      .type('form')
      .send({ _csrf: await csrfOf(owner.agent), email: 'nope' })
      .expect(400);
    expect(res.text).to.contain('Enter a valid email address');
    const member = await signUp({ invitedBy: owner });
    const third = uniqueEmail('third');
    await member.agent
      .post('/workspace/invitations')
      .type('form')
      .send({ _csrf: await csrfOf(member.agent), email: third })
      .expect(403);
    expect(await testKnex()('invitations').where({ email: third })).to.have.length(0);
  });
});

describe('session lifetime', () => {
  const expiryOf = async (sid: string) => (await testKnex()('session').where({ sid }).first()).expire as Date;
  const sidOf = (cookie: string) => decodeURIComponent(cookie.split('=')[1]).slice(2).split('.')[0];

  it('requests on an unchanged session write nothing to the session table', async () => {
    const user = await signUp();
    const sid = sidOf(user.cookie);
    const before = await expiryOf(sid);
    for (let i = 0; i < 3; i++) {
      const res = await user.agent.get('/api/orders').expect(200);
      expect(res.headers['set-cookie']).to.equal(undefined);
    }
    expect((await expiryOf(sid)).getTime()).to.equal(before.getTime());
  });

  it("an active user's expiry slides forward once the last slide is over an hour old", async () => {
    const user = await signUp();
    const sid = sidOf(user.cookie);
    const twoHoursAgo = Date.now() - 2 * 3600_000;
    await testKnex()('session')
      .where({ sid })
      .update({
        sess: testKnex().raw("jsonb_set(sess::jsonb, '{slidAt}', ?::jsonb)::json", [String(twoHoursAgo)]),
        expire: testKnex().raw("now() + interval '1 day'"),
      });
    const res = await user.agent.get('/api/orders').expect(200);
    expect(String(res.headers['set-cookie'])).to.match(/^ocs\.sid=.*Expires=/);
    const expire = await expiryOf(sid);
    expect(expire.getTime() - Date.now()).to.be.greaterThan(6.9 * 86_400_000);
  });

  it('the user and workspace are read from the session, and re-read from the database at the hourly slide', async () => {
    const user = await signUp({ workspace: 'Old name' });
    const sid = sidOf(user.cookie);
    await testKnex()('workspaces').where({ id: user.workspaceId }).update({ name: 'New name' });
    expect((await user.agent.get('/credits').expect(200)).text).to.contain('Old name');
    await testKnex()('session')
      .where({ sid })
      .update({ sess: testKnex().raw("jsonb_set(sess::jsonb, '{slidAt}', ?::jsonb)::json", [String(Date.now() - 2 * 3600_000)]) });
    expect((await user.agent.get('/credits').expect(200)).text).to.contain('New name');
  });

  it('a session whose user no longer exists signs nobody in after the refresh', async () => {
    const user = await signUp({ workspace: null });
    const sid = sidOf(user.cookie);
    await testKnex()('session')
      .where({ sid })
      .update({ sess: testKnex().raw("jsonb_set(sess::jsonb, '{slidAt}', '0'::jsonb)::json") });
    await testKnex()('users').where({ id: user.userId }).delete();
    await user.agent.get('/api/credits').expect(401);
  });
});
