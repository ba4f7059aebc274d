import { expect } from 'chai';
import request from 'supertest';
import { sessionStore } from '../../routes/middleware/session';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfOf, signUp, silentLogger, uniqueEmail } from '../helpers/app';
import { testKnex, testSessionPool } from '../helpers/db';
import { createKey, randomIp } from '../helpers/keys';
import { ORDER, openAllDay } from '../helpers/loop';

const ABSENT_ID = '00000000-0000-4000-8000-000000000000';

/** An owner whose workspace has a human order handler, and a member who joined through a link and signed in twice. */
async function team(): Promise<{ owner: SignedIn; member: SignedIn; memberPhone: SignedIn }> {
  const owner = await signUp();
  await owner.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  await openAllDay(owner);
  const email = uniqueEmail('member');
  const member = await signUp({ email, invitedBy: owner });
  // The same member on a second device: a session of its own.
  const memberPhone = { ...member, agent: request.agent(appUrl()) };
  const page = await memberPhone.agent.get('/login').expect(200);
  await memberPhone.agent
    .post('/login')
    .type('form')
    .send({ _csrf: /name="_csrf" value="([^"]+)"/.exec(page.text)![1], email, password: member.password })
    .expect(303);
  expect((await member.agent.get('/api/orders').expect(200)).body).to.have.property('orders');
  return { owner, member, memberPhone };
}

const sessionsOf = (userId: string) => testKnex()('session').whereRaw("sess->>'userId' = ?", [userId]);

describe('removing a member (DELETE /api/workspace/members/:userId and /workspace)', () => {
  it('the owner removes a member: at once every session of theirs ends (401 / sign-in), their keys are revoked, their open claim is released', async () => {
    const { owner, member, memberPhone } = await team();
    const order = (await owner.agent.post('/api/orders').send(ORDER).expect(201)).body;
    const claim = (await member.agent.post('/api/calls/next').expect(200)).body;
    expect((await testKnex()('orders').where({ id: order.id }).first()).status).to.equal('calling');
    const { key } = await createKey(member);
    expect(await sessionsOf(member.userId)).to.have.length(2);

    await owner.agent.delete(`/api/workspace/members/${member.userId}`).expect(204);

    await member.agent.get('/api/orders').expect(401);
    expect((await memberPhone.agent.get('/orders').expect(303)).headers.location).to.equal('/login');
    expect(await sessionsOf(member.userId)).to.have.length(0);
    expect(await testKnex()('workspace_members').where({ user_id: member.userId })).to.have.length(0);
    expect((await testKnex()('api_keys').where({ user_id: member.userId }).first()).revoked_at).to.be.an.instanceOf(Date);
    await request(appUrl()).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key}`).expect(401);
    const call = await testKnex()('calls').where({ id: claim.call.id }).first();
    expect(call.dropped_at).to.be.an.instanceOf(Date);
    expect((await testKnex()('orders').where({ id: order.id }).first()).status).to.equal('pending');
    // The call is due again: the owner can take it now.
    expect((await owner.agent.post('/api/calls/next').expect(200)).body.order.id).to.equal(order.id);
    // The owner keeps their session and workspace.
    await owner.agent.get('/api/orders').expect(200);
  });

  it('a session loaded by a request still in flight cannot come back when that request saves it', async () => {
    const { owner, member } = await team();
    const [row] = await sessionsOf(member.userId).select('sid', 'sess').orderBy('expire', 'desc');
    expect(row.sess.ctx.workspace.id).to.equal(owner.workspaceId);
    await owner.agent.delete(`/api/workspace/members/${member.userId}`).expect(204);
    // What express-session does at the end of that request: the store's set, with the session it loaded.
    const store = sessionStore(testSessionPool(), silentLogger);
    await new Promise<void>((resolve, reject) => store.set(row.sid, row.sess, (err) => (err ? reject(err) : resolve())));
    expect(await testKnex()('session').where({ sid: row.sid })).to.have.length(0);
    await member.agent.get('/api/orders').expect(401);
    // A member's session is still written as usual.
    const [ownerRow] = await sessionsOf(owner.userId).select('sid', 'sess');
    await new Promise<void>((resolve, reject) => store.set(ownerRow.sid, { ...ownerRow.sess, notice: 'still here' }, (err) => (err ? reject(err) : resolve())));
    expect((await testKnex()('session').where({ sid: ownerRow.sid }).first()).sess.notice).to.equal('still here');
  });

  it('the owner cannot be removed (409), a member cannot remove others (403), another workspace’s user or an unknown id is 404', async () => {
    const { owner, member } = await team();
    const res = await owner.agent.delete(`/api/workspace/members/${owner.userId}`).expect(409);
    expect(res.body).to.deep.equal({ error: 'The owner cannot be removed from the workspace', code: 'OWNER_CANNOT_BE_REMOVED' });
    await member.agent.delete(`/api/workspace/members/${owner.userId}`).expect(403);
    const stranger = await signUp();
    for (const id of [stranger.userId, ABSENT_ID, 'nope']) {
      expect((await owner.agent.delete(`/api/workspace/members/${id}`).expect(404)).body).to.deep.equal({ error: 'Member not found' });
    }
    expect(await testKnex()('workspace_members').where({ user_id: member.userId })).to.have.length(1);
    await request(appUrl()).delete(`/api/workspace/members/${member.userId}`).expect(401);
  });

  it('a member leaves: this session stays (without the workspace), the others end', async () => {
    const { owner, member, memberPhone } = await team();
    await member.agent.delete(`/api/workspace/members/${member.userId}`).expect(204);
    expect((await member.agent.get('/api/orders').expect(403)).body).to.deep.equal({ error: 'No workspace found' });
    await memberPhone.agent.get('/api/orders').expect(401);
    expect(await sessionsOf(member.userId)).to.have.length(1);
    const members = await testKnex()('workspace_members').where({ workspace_id: owner.workspaceId });
    expect(members.map((m) => m.user_id)).to.deep.equal([owner.userId]);
  });

  it('the /workspace page: the owner removes with a button, a member leaves with one', async () => {
    const { owner, member } = await team();
    const page = await owner.agent.get('/workspace').expect(200);
    expect(page.text).to.contain(`action="/workspace/members/${member.userId}/remove"`).and.not.contain(`action="/workspace/members/${owner.userId}/remove"`);
    const csrf = await csrfOf(owner.agent);
    await owner.agent.post(`/workspace/members/${member.userId}/remove`).type('form').send({ _csrf: csrf }).expect(303);
    expect((await owner.agent.get('/workspace').expect(200)).text).to.contain('was removed');
    expect((await member.agent.get('/workspace').expect(303)).headers.location).to.equal('/login');

    const other = await team();
    const memberPage = await other.member.agent.get('/workspace').expect(200);
    expect(memberPage.text).to.contain('action="/workspace/leave"').and.not.contain('/remove"');
    await other.member.agent
      .post('/workspace/leave')
      .type('form')
      .send({ _csrf: await csrfOf(other.member.agent) })
      .expect(303);
    expect((await other.member.agent.get('/workspace').expect(200)).text).to.contain('Create your workspace');
  });
});
