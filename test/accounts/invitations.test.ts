import { expect } from 'chai';
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../app';
import { loadConfig } from '../../config';
import { appUrl, csrfFrom, csrfOf, invitationPath, signUp, TEST_ENV, uniqueEmail } from '../helpers/app';
import { testKnex, testSessionPool } from '../helpers/db';
import { waitFor } from '../helpers/loop';

const JOIN_URL_RE = /^http:\/\/127\.0\.0\.1:3000\/join\/([A-Za-z0-9_-]{43})$/;
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** Not cached, and not compressed: the compression filter turned it down (no `Vary: Accept-Encoding`). */
function shownOnce(res: request.Response): void {
  expect(res.headers['cache-control']).to.equal('no-store');
  expect(res.headers['content-encoding']).to.equal(undefined);
  expect(res.headers.vary ?? '').not.to.match(/Accept-Encoding/i);
}

const membershipOf = (userId: string) => testKnex()('workspace_members').where({ user_id: userId }).select('workspace_id', 'role');
const invitationRow = (id: string) => testKnex()('invitations').where({ id }).first();

/** A signed-out visitor signs up through a join link; the form's email is whatever is given. */
async function signUpThrough(path: string, email: string) {
  const agent = request.agent(appUrl());
  const page = await agent.get(path).expect(200);
  const res = await agent
    .post(path)
    .type('form')
    .send({ _csrf: csrfFrom(page.text), name: 'Amina', email, password: 'correct horse battery' });
  return { agent, res };
}

describe('POST /api/workspace/invitations', () => {
  it('201 {id, email, expires_at, join_url}: 32 random bytes in base64url, valid 7 days, not cached or compressed; the database holds only the SHA-256', async () => {
    const owner = await signUp();
    const res = await owner.agent.post('/api/workspace/invitations').set('Accept-Encoding', 'gzip').send({ email: '  Amina@Example.TEST ' }).expect(201);
    shownOnce(res);
    expect(res.body).to.have.all.keys('id', 'email', 'expires_at', 'join_url');
    expect(res.body.email).to.equal('amina@example.test');
    const token = JOIN_URL_RE.exec(res.body.join_url)?.[1];
    expect(token, res.body.join_url).to.be.a('string');
    expect(Buffer.from(token!, 'base64url')).to.have.length(32);
    const row = await invitationRow(res.body.id);
    expect(row).to.include({
      workspace_id: owner.workspaceId,
      email: 'amina@example.test',
      created_by: owner.userId,
      token_hash: sha256(token!),
      used_at: null,
      revoked_at: null,
    });
    expect(JSON.stringify(row)).not.to.contain(token);
    expect(new Date(row.expires_at).toISOString()).to.equal(res.body.expires_at);
    expect(row.expires_at.getTime() - row.created_at.getTime()).to.equal(7 * 24 * 3600 * 1000);
    // Two links for one address: the new one replaces the pending one.
    const again = await owner.agent.post('/api/workspace/invitations').send({ email: 'amina@example.test' }).expect(201);
    expect(again.body.join_url).not.to.equal(res.body.join_url);
    expect((await invitationRow(res.body.id)).revoked_at).to.be.an.instanceOf(Date);
  });

  it('400 VALIDATION_ERROR for a bad address or one of a member already; nothing written', async () => {
    const owner = await signUp();
    for (const body of [{}, { email: 'nope' }, { email: 42 }, { email: owner.email.toUpperCase() }]) {
      const res = await owner.agent.post('/api/workspace/invitations').send(body).expect(400);
      expect(res.body).to.include({ code: 'VALIDATION_ERROR' });
      expect(res.body.fields).to.have.property('email');
    }
    expect(await testKnex()('invitations').where({ workspace_id: owner.workspaceId })).to.have.length(0);
  });
});

describe('the invitation API is the owner’s', () => {
  it('403 {"error":"Forbidden"} for a member on GET, POST and DELETE; nothing written', async () => {
    const owner = await signUp();
    const member = await signUp({ invitedBy: owner });
    const pending = (await owner.agent.post('/api/workspace/invitations').send({ email: uniqueEmail() }).expect(201)).body;
    expect((await member.agent.get('/api/workspace/invitations').expect(403)).body).to.deep.equal({ error: 'Forbidden' });
    expect((await member.agent.post('/api/workspace/invitations').send({ email: uniqueEmail() }).expect(403)).body).to.deep.equal({ error: 'Forbidden' });
    expect((await member.agent.delete(`/api/workspace/invitations/${pending.id}`).expect(403)).body).to.deep.equal({ error: 'Forbidden' });
    const rows = await testKnex()('invitations').where({ workspace_id: owner.workspaceId }).whereNull('used_at');
    expect(rows.map((r) => [r.id, r.revoked_at])).to.deep.equal([[pending.id, null]]);
  });
});

describe('GET /api/workspace/invitations', () => {
  it('lists the pending invitations, oldest first, never a token or its hash; used, revoked and expired ones are gone', async () => {
    const owner = await signUp();
    const create = async (email: string) => (await owner.agent.post('/api/workspace/invitations').send({ email }).expect(201)).body;
    const [kept, revoked, expired, used] = [
      await create(uniqueEmail('kept')),
      await create(uniqueEmail('revoked')),
      await create(uniqueEmail('expired')),
      await create(uniqueEmail('used')),
    ];
    await owner.agent.delete(`/api/workspace/invitations/${revoked.id}`).expect(204);
    await testKnex()('invitations')
      .where({ id: expired.id })
      .update({ expires_at: testKnex().raw("now() - interval '1 second'") });
    await signUpThrough(new URL(used.join_url).pathname, used.email);
    const res = await owner.agent.get('/api/workspace/invitations').expect(200);
    expect(res.body).to.deep.equal({
      invitations: [{ id: kept.id, email: kept.email, expires_at: kept.expires_at, created_at: (await invitationRow(kept.id)).created_at.toISOString() }],
    });
    const token = JOIN_URL_RE.exec(kept.join_url)![1];
    expect(res.text).not.to.contain(token);
    expect(res.text).not.to.contain(sha256(token));
  });
});

describe('DELETE /api/workspace/invitations/:id', () => {
  it('204 revokes: the link then answers 410, on its page and when joining, and joins nothing', async () => {
    const owner = await signUp();
    const invitee = await signUp({ workspace: null });
    const created = (await owner.agent.post('/api/workspace/invitations').send({ email: invitee.email }).expect(201)).body;
    const path = new URL(created.join_url).pathname;
    const page = await invitee.agent.get(path).expect(200);
    await owner.agent.delete(`/api/workspace/invitations/${created.id}`).expect(204);
    expect((await invitationRow(created.id)).revoked_at).to.be.an.instanceOf(Date);
    expect((await invitee.agent.get(path).expect(410)).text).to.contain('withdrawn');
    await invitee.agent
      .post(path)
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(410);
    expect(await membershipOf(invitee.userId)).to.have.length(0);
    await request(appUrl()).get(path).expect(410);
  });

  it('404 for another workspace’s invitation (which stays usable) and for an id that is not a UUID', async () => {
    const owner = await signUp();
    const other = await signUp();
    const theirs = (await other.agent.post('/api/workspace/invitations').send({ email: uniqueEmail() }).expect(201)).body;
    expect((await owner.agent.delete(`/api/workspace/invitations/${theirs.id}`).expect(404)).body).to.deep.equal({ error: 'Invitation not found' });
    await owner.agent.delete('/api/workspace/invitations/not-a-uuid').expect(404);
    expect((await invitationRow(theirs.id)).revoked_at).to.equal(null);
    await request(appUrl()).get(new URL(theirs.join_url).pathname).expect(200);
  });
});

describe('GET and POST /join/{token}', () => {
  it('signed out: the sign-up form with the invited address filled in and fixed, and a sign-in link back to the link; not cached or compressed', async () => {
    const owner = await signUp();
    const email = uniqueEmail('amina');
    const path = await invitationPath(owner, email);
    const res = await request(appUrl()).get(path).set('Accept-Encoding', 'gzip').expect(200);
    shownOnce(res);
    expect(res.text).to.match(new RegExp(`<input id="f-email" name="email" type="email"\\s+value="${email}"[^>]*\\sreadonly`));
    expect(res.text).to.contain(`action="${path}"`).and.contain(`href="/login?next=${path}"`);
    expect(res.text).not.to.contain('name="workspace"');
    // Sign in there, and come back to the link.
    const member = await signUp({ workspace: null, email: uniqueEmail() });
    const agent = request.agent(appUrl());
    const login = await agent.get(`/login?next=${path}`).expect(200);
    const signedIn = await agent
      .post('/login')
      .type('form')
      .send({ _csrf: csrfFrom(login.text), email: member.email, password: member.password, next: path })
      .expect(303);
    expect(signedIn.headers.location).to.equal(path);
  });

  it('signing up through the link makes a member, for the invited address whatever email is posted; the link is then used (410)', async () => {
    const owner = await signUp();
    const email = uniqueEmail('amina');
    const created = (await owner.agent.post('/api/workspace/invitations').send({ email }).expect(201)).body;
    const path = new URL(created.join_url).pathname;
    const { agent, res } = await signUpThrough(path, uniqueEmail('someone-else'));
    expect(res.status).to.equal(303);
    // A member joins to confirm orders: they land on the call queue (issue 53, friction 14).
    expect(res.headers.location).to.equal('/calls');
    expect((await agent.get('/calls').expect(200)).text)
      .to.contain('Welcome')
      .and.contain('Start next call');
    const user = await testKnex()('users').whereRaw('lower(email) = ?', [email]).first();
    expect(await membershipOf(user.id)).to.deep.equal([{ workspace_id: owner.workspaceId, role: 'member' }]);
    expect(await invitationRow(created.id)).to.include({ used_by: user.id });
    expect((await agent.get('/api/orders').expect(200)).body).to.have.property('orders');
    expect((await request(appUrl()).get(path).expect(410)).text).to.contain('already been used');
  });

  it('signing up or in with the invited address without the link joins nothing', async () => {
    const owner = await signUp();
    /** The owner invites through the page's form; the invitation is recorded. */
    const invite = async (email: string) => {
      const res = await owner.agent
        .post('/workspace/invitations')
        .type('form')
        .send({ _csrf: await csrfOf(owner.agent), email });
      expect(res.status).to.be.below(400);
      expect(await testKnex()('invitations').where({ workspace_id: owner.workspaceId, email })).to.have.length(1);
    };
    const email = uniqueEmail('amina');
    await invite(email);
    const stranger = await signUp({ email, workspace: null });
    expect(stranger.workspaceId).to.equal(null);
    expect(await membershipOf(stranger.userId)).to.have.length(0);
    // An account that existed before the invitation, signing in afterwards.
    const existing = await signUp({ workspace: null });
    await invite(existing.email);
    const agent = request.agent(appUrl());
    const login = await agent.get('/login').expect(200);
    await agent
      .post('/login')
      .type('form')
      .send({ _csrf: csrfFrom(login.text), email: existing.email, password: existing.password })
      .expect(303);
    expect(await membershipOf(existing.userId)).to.have.length(0);
    expect((await agent.get('/api/orders').expect(403)).body).to.deep.equal({ error: 'No workspace found' });
  });

  it('signed in as the invited address (any case): a page with a Join button whose POST (with _csrf) joins', async () => {
    const owner = await signUp();
    const invitee = await signUp({ workspace: null });
    const created = (await owner.agent.post('/api/workspace/invitations').send({ email: invitee.email.toUpperCase() }).expect(201)).body;
    const path = new URL(created.join_url).pathname;
    const page = await invitee.agent.get(path).expect(200);
    expect(page.text).to.contain(`<form method="post" action="${path}"`).and.contain('name="_csrf"');
    expect(await membershipOf(invitee.userId)).to.have.length(0);
    await invitee.agent.post(path).type('form').send({}).expect(403);
    const joined = await invitee.agent
      .post(path)
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(303);
    // A member joins to confirm orders: they land on the call queue (issue 53, friction 14).
    expect(joined.headers.location).to.equal('/calls');
    expect(await membershipOf(invitee.userId)).to.deep.equal([{ workspace_id: owner.workspaceId, role: 'member' }]);
    expect((await invitee.agent.get('/calls').expect(200)).text)
      .to.contain('You joined')
      .and.contain('Start next call');
  });

  it('signed in as anyone else: 403 page, and the link stays usable', async () => {
    const owner = await signUp();
    const created = (
      await owner.agent
        .post('/api/workspace/invitations')
        .send({ email: uniqueEmail('invited') })
        .expect(201)
    ).body;
    const path = new URL(created.join_url).pathname;
    const intruder = await signUp({ workspace: null });
    const page = await intruder.agent.get(path).expect(403);
    expect(page.text).to.contain('another email address');
    await intruder.agent
      .post(path)
      .type('form')
      .send({ _csrf: await csrfOf(intruder.agent) })
      .expect(403);
    expect(await membershipOf(intruder.userId)).to.have.length(0);
    expect((await invitationRow(created.id)).used_at).to.equal(null);
  });

  it('expired (7 days passed): 410 page, for the sign-up and the join alike; nothing written', async () => {
    const owner = await signUp();
    const invitee = await signUp({ workspace: null });
    const created = (await owner.agent.post('/api/workspace/invitations').send({ email: invitee.email }).expect(201)).body;
    const path = new URL(created.join_url).pathname;
    const page = await invitee.agent.get(path).expect(200);
    await testKnex()('invitations')
      .where({ id: created.id })
      .update({ expires_at: testKnex().raw("now() - interval '1 second'") });
    expect((await invitee.agent.get(path).expect(410)).text).to.contain('expired');
    await invitee.agent
      .post(path)
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(410);
    expect(await membershipOf(invitee.userId)).to.have.length(0);
    const signedOut = request.agent(appUrl());
    const form = await signedOut.get('/signup').expect(200);
    const newcomer = uniqueEmail('newcomer');
    await signedOut
      .post(path)
      .type('form')
      .send({ _csrf: csrfFrom(form.text), name: 'A', email: newcomer, password: 'correct horse battery' })
      .expect(410);
    expect(await testKnex()('users').whereIn('email', [newcomer, created.email])).to.have.length(1);
  });

  it('used: a second person with the link gets 410; an unknown token is 404', async () => {
    const owner = await signUp();
    const email = uniqueEmail('amina');
    const path = await invitationPath(owner, email);
    expect((await signUpThrough(path, email)).res.status).to.equal(303);
    await request(appUrl()).get(path).expect(410);
    await request(appUrl())
      .get(`/join/${crypto.randomBytes(32).toString('base64url')}`)
      .expect(404);
    await request(appUrl()).get('/join/short').expect(404);
  });

  it('a user who already belongs to a workspace is refused cleanly (409, a clear message) and the link stays usable', async () => {
    const owner = await signUp();
    const busy = await signUp();
    const created = (await owner.agent.post('/api/workspace/invitations').send({ email: busy.email }).expect(201)).body;
    const path = new URL(created.join_url).pathname;
    const page = await busy.agent.get(path).expect(200);
    expect(page.text).to.contain('Leave it first');
    const res = await busy.agent
      .post(path)
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(409);
    expect(res.text).to.contain('You already belong to a workspace');
    expect(await membershipOf(busy.userId)).to.deep.equal([{ workspace_id: busy.workspaceId, role: 'owner' }]);
    expect((await invitationRow(created.id)).used_at).to.equal(null);
  });

  it('two joins through one link at once: exactly one membership, the other 410', async () => {
    const owner = await signUp();
    for (let round = 0; round < 3; round += 1) {
      const invitee = await signUp({ workspace: null });
      const path = await invitationPath(owner, invitee.email);
      const page = await invitee.agent.get(path).expect(200);
      const csrf = csrfFrom(page.text);
      const answers = await Promise.all([1, 2, 3].map(() => invitee.agent.post(path).type('form').send({ _csrf: csrf })));
      expect(answers.map((r) => r.status).sort()).to.deep.equal([303, 410, 410]);
      expect(await membershipOf(invitee.userId)).to.have.length(1);
    }
    expect(await testKnex()('workspace_members').where({ workspace_id: owner.workspaceId })).to.have.length(4);
  });

  it('the token never reaches the request log (its path is logged without it)', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = createApp({ config: loadConfig(TEST_ENV), knex: testKnex(), sessionPool: testSessionPool(), logger: pino({ level: 'info' }, sink) });
    const owner = await signUp();
    const path = await invitationPath(owner, uniqueEmail());
    await request(logged).get(path).set('X-Request-Id', 'join-log-check').expect(200);
    const line = await waitFor('the join page’s log line', async () => lines.find((l) => l.includes('join-log-check')));
    expect(JSON.parse(line).req.url).to.equal('/join/[redacted]');
    expect(lines.join('')).not.to.contain(path.slice('/join/'.length));
  });

  it('a customer’s phone never reaches the request log either (issue 58: personal data)', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = createApp({ config: loadConfig(TEST_ENV), knex: testKnex(), sessionPool: testSessionPool(), logger: pino({ level: 'info' }, sink) });
    const owner = await signUp();
    await request(logged).get('/customers/0612345678').set('Cookie', owner.cookie).set('X-Request-Id', 'customer-log-page').expect(200);
    await request(logged).get('/api/customers/%2B212612345678').set('Cookie', owner.cookie).set('X-Request-Id', 'customer-log-api').expect(200);
    const page = await waitFor('the customer page’s log line', async () => lines.find((l) => l.includes('customer-log-page')));
    const api = await waitFor('the customer API’s log line', async () => lines.find((l) => l.includes('customer-log-api')));
    expect(JSON.parse(page).req.url).to.equal('/customers/[redacted]');
    expect(JSON.parse(api).req.url).to.equal('/api/customers/[redacted]');
    expect(lines.join('')).not.to.match(/612345678/);
  });
});

describe('/workspace: the owner’s invitations', () => {
  it('the form shows the link once, in a read-only field, saying to send it by WhatsApp or SMS (not cached or compressed); the list revokes with a button', async () => {
    const owner = await signUp();
    const email = uniqueEmail('amina');
    const res = await owner.agent
      .post('/workspace/invitations')
      .set('Accept-Encoding', 'gzip')
      .type('form')
      .send({ _csrf: await csrfOf(owner.agent), email })
      .expect(201);
    shownOnce(res);
    const url = /<input id="join-url" class="key" type="text" readonly value="([^"]+)"/.exec(res.text)?.[1];
    expect(url).to.match(JOIN_URL_RE);
    expect(res.text).to.contain('WhatsApp or SMS');
    const row = await testKnex()('invitations').where({ workspace_id: owner.workspaceId, email }).first();
    expect(row.token_hash).to.equal(sha256(JOIN_URL_RE.exec(url!)![1]));
    // The link is not on the page afterwards; the pending invitation is, with its revoke button.
    const page = await owner.agent.get('/workspace').expect(200);
    expect(page.text).not.to.contain(url);
    expect(page.text).to.contain(email);
    expect(page.text).to.contain(`action="/workspace/invitations/${row.id}/revoke"`);
    await owner.agent
      .post(`/workspace/invitations/${row.id}/revoke`)
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(303);
    expect((await invitationRow(row.id)).revoked_at).to.be.an.instanceOf(Date);
    await request(appUrl()).get(new URL(url!).pathname).expect(410);
    // A member sees neither the invitations nor the form.
    const member = await signUp({ invitedBy: owner });
    const theirs = await member.agent.get('/workspace').expect(200);
    expect(theirs.text).not.to.contain('/revoke"');
    expect(theirs.text).not.to.contain('Invite a member');
  });
});
