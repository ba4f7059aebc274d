import { expect } from 'chai';
import { csrfFrom, memberOf, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/** team.md §1: who is working. */
describe('team: shifts (PUT /api/me/shift, the navigation toggle, GET /api/team)', function () {
  this.timeout(60_000);

  const shiftOf = (workspaceId: string, userId: string) => testKnex()('workspace_members').where({ workspace_id: workspaceId, user_id: userId }).first();

  it('PUT /api/me/shift puts the member on and off shift; GET /api/team lists members with shift, open call and calls today', async () => {
    const owner = await signUp();
    const member = await memberOf(owner);
    const on = await member.agent.put('/api/me/shift').send({ on: true }).expect(200);
    expect(on.body).to.deep.equal({ on_shift: true });
    expect((await shiftOf(owner.workspaceId!, member.userId)).on_shift).to.equal(true);
    const team = await owner.agent.get('/api/team').expect(200);
    const row = team.body.members.find((m: { user_id: string }) => m.user_id === member.userId);
    expect(row).to.include({ on_shift: true, open_call: null, calls_today: 0, role: 'member' });
    const ownerRow = team.body.members.find((m: { user_id: string }) => m.user_id === owner.userId);
    expect(ownerRow.on_shift).to.equal(false);
    await member.agent.put('/api/me/shift').send({ on: false }).expect(200);
    expect((await shiftOf(owner.workspaceId!, member.userId)).on_shift).to.equal(false);
  });

  it('a bad body is a 400 naming `on`, and nothing changes', async () => {
    const owner = await signUp();
    const res = await owner.agent.put('/api/me/shift').send({ on: 'yes' }).expect(400);
    expect(res.body.fields).to.have.property('on');
    expect((await shiftOf(owner.workspaceId!, owner.userId)).on_shift).to.equal(false);
  });

  it('the navigation of every page carries the toggle: one form post (CSRF) without JavaScript, back to the same page', async () => {
    const owner = await signUp();
    for (const path of ['/orders', '/calls', '/stats', '/settings']) {
      const page = await owner.agent.get(path).expect(200);
      expect(page.text, path).to.match(/<form method="post" action="\/shift" class="shift-toggle">/);
      expect(page.text, path).to.include('name="on" value="true"');
      expect(page.text, path).to.include('aria-pressed="false"');
    }
    const page = await owner.agent.get('/calls').expect(200);
    // Without the CSRF token: refused, nothing changes.
    await owner.agent.post('/shift').type('form').send({ on: 'true', back: '/calls' }).expect(403);
    expect((await shiftOf(owner.workspaceId!, owner.userId)).on_shift).to.equal(false);
    const res = await owner.agent
      .post('/shift')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), on: 'true', back: '/calls' })
      .expect(303);
    expect(res.headers.location).to.equal('/calls');
    expect((await shiftOf(owner.workspaceId!, owner.userId)).on_shift).to.equal(true);
    const after = await owner.agent.get('/calls').expect(200);
    expect(after.text).to.include('aria-pressed="true"');
    expect(after.text).to.include('name="on" value="false"');
  });

  it('signing out sets the member off shift', async () => {
    const owner = await signUp();
    await owner.agent.put('/api/me/shift').send({ on: true }).expect(200);
    const page = await owner.agent.get('/orders').expect(200);
    await owner.agent
      .post('/logout')
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(303);
    expect((await shiftOf(owner.workspaceId!, owner.userId)).on_shift).to.equal(false);
  });

  it('two hours without a request: off shift (GET /api/team says so); 1 h 59 min: still on', async () => {
    const owner = await signUp();
    const member = await memberOf(owner);
    await member.agent.put('/api/me/shift').send({ on: true }).expect(200);
    await testKnex()('workspace_members')
      .where({ user_id: member.userId })
      .update({ last_seen_at: testKnex().raw("now() - interval '2 hours 1 minute'") });
    const team = await owner.agent.get('/api/team').expect(200);
    expect(team.body.members.find((m: { user_id: string }) => m.user_id === member.userId).on_shift).to.equal(false);
    // A request within the last two hours keeps them on: 1 h 59 ago is still on shift.
    await testKnex()('workspace_members')
      .where({ user_id: owner.userId })
      .update({ on_shift: true, last_seen_at: testKnex().raw("now() - interval '1 hour 59 minutes'") });
    const again = await member.agent.get('/api/team').expect(200);
    expect(again.body.members.find((m: { user_id: string }) => m.user_id === owner.userId).on_shift).to.equal(true);
  });

  it('a request writes the last-seen time at most once a minute per member', async () => {
    const owner = await signUp();
    await owner.agent.get('/api/team').expect(200);
    const first = (await shiftOf(owner.workspaceId!, owner.userId)).last_seen_at;
    expect(first).to.be.an.instanceOf(Date);
    await testKnex()('workspace_members')
      .where({ user_id: owner.userId })
      .update({ last_seen_at: new Date(first.getTime() - 10_000) });
    await owner.agent.get('/api/team').expect(200);
    // Written less than a minute ago by this process: left alone.
    expect((await shiftOf(owner.workspaceId!, owner.userId)).last_seen_at.getTime()).to.equal(first.getTime() - 10_000);
  });
});
