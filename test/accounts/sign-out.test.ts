import { expect } from 'chai';
import request from 'supertest';
import { appUrl, csrfFrom, csrfOf, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { waitFor } from '../helpers/loop';

const sessionsOf = (userId: string) => testKnex()('session').whereRaw("sess->>'userId' = ?", [userId]);

describe('sign-out holds (issue 28, item 7)', () => {
  it('a request in flight on the old cookie that saves its session after "Sign out everywhere" cannot bring it back', async () => {
    const user = await signUp();
    const phone = request.agent(appUrl());
    const login = await phone.get('/login').expect(200);
    await phone
      .post('/login')
      .type('form')
      .send({ _csrf: csrfFrom(login.text), email: user.email, password: user.password })
      .expect(303);
    const laptopCsrf = await csrfOf(user.agent, '/agents');
    const phoneCsrf = await csrfOf(phone, '/workspace');
    expect(await sessionsOf(user.userId)).to.have.length(2);

    // The slow request: adding an order handler queues on the workspace's row, which the test holds.
    const knex = testKnex();
    const hold = await knex.transaction();
    let slow: Promise<request.Response> | undefined;
    try {
      await hold.raw('SELECT 1 FROM workspaces WHERE id = ? FOR UPDATE', [user.workspaceId]);
      // It has loaded its session (the middleware runs before the handler) when it waits on the lock.
      slow = user.agent
        .post('/agents')
        .type('form')
        .send({ _csrf: laptopCsrf, name: 'Desk', order_handler: '1' })
        .then((res) => res);
      await waitFor('the request to wait on the workspace row', async () => {
        const { rows } = await knex.raw(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%FROM workspaces%FOR NO KEY UPDATE%'",
        );
        return rows.length > 0;
      });
      const signedOut = await phone.post('/logout/everywhere').type('form').send({ _csrf: phoneCsrf }).expect(303);
      expect(signedOut.headers.location).to.equal('/login');
      expect(await sessionsOf(user.userId)).to.have.length(0);
    } finally {
      await hold.commit();
    }
    // The request finishes its work and saves its session (with a notice for the next page).
    const res = await slow!;
    expect(res.status).to.equal(303);
    expect(await knex('agents').where({ workspace_id: user.workspaceId, name: 'Desk' })).to.have.length(1);

    expect(await sessionsOf(user.userId)).to.have.length(0);
    expect((await user.agent.get('/orders').expect(303)).headers.location).to.equal('/login');
    await request(appUrl()).get('/api/orders').set('Cookie', user.cookie).expect(401);
    expect(await sessionsOf(user.userId)).to.have.length(0);
  });
});
