import { expect } from 'chai';
import { sign } from 'cookie-signature';
import request from 'supertest';
import { signedSessionId } from '../../routes/middleware/api-session';
import { appUrl, signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';

/**
 * /api's fast session path (one prepared read of the row when its context is cached and fresh)
 * must answer exactly as express-session and loadUser would: same user, same refusals, nothing
 * written, and every change to the session row seen by the very next request.
 */
describe('the JSON routes’ session read', () => {
  const sidOf = (cookie: string) => decodeURIComponent(cookie.split('=')[1]).slice(2).split('.')[0];
  const cookieFor = (sid: string, secret = TEST_ENV.SESSION_SECRET) => `ocs.sid=${encodeURIComponent(`s:${sign(sid, secret)}`)}`;
  const rowOf = (sid: string) => testKnex()('session').where({ sid }).first();

  it('reads the cookie as express-session does: signed with our secret, URL-encoded, first of its name', () => {
    const secret = TEST_ENV.SESSION_SECRET;
    expect(signedSessionId(cookieFor('abc'), secret)).to.equal('abc');
    expect(signedSessionId(`theme=dark; ${cookieFor('abc')}; ocs.sid=${encodeURIComponent(`s:${sign('other', secret)}`)}`, secret)).to.equal('abc');
    expect(signedSessionId(cookieFor('abc', 'another secret'), secret)).to.equal(undefined);
    expect(signedSessionId('ocs.sid=abc', secret)).to.equal(undefined);
    expect(signedSessionId(`ocs.sid=s%3Aabc.`, secret)).to.equal(undefined);
    expect(signedSessionId(undefined, secret)).to.equal(undefined);
    expect(signedSessionId('ocs.sid=%E0%A4%A', secret)).to.equal(undefined);
  });

  it('a signed-in session answers as its user, and writes nothing', async () => {
    const user = await signUp();
    const sid = sidOf(user.cookie);
    const before = await rowOf(sid);
    const res = await request(appUrl()).get('/api/credits').set('Cookie', user.cookie).expect(200);
    expect(res.headers['set-cookie']).to.equal(undefined);
    expect(res.body).to.have.all.keys('credits', 'totalCredits', 'totalSpent');
    const after = await rowOf(sid);
    expect(after.sess).to.deep.equal(before.sess);
    expect(after.expire.getTime()).to.equal(before.expire.getTime());
  });

  it('a session id with a forged signature, an expired row and a deleted row are 401, and nothing is written', async () => {
    const user = await signUp();
    const sid = sidOf(user.cookie);
    await request(appUrl()).get('/api/credits').set('Cookie', cookieFor(sid, 'a guessed secret')).expect(401, { error: 'Unauthorized' });
    await request(appUrl()).get('/api/credits').set('Cookie', `ocs.sid=${sid}`).expect(401);

    await testKnex()('session')
      .where({ sid })
      .update({ expire: testKnex().raw("now() - interval '1 second'") });
    const expired = await request(appUrl())
      .post('/api/orders')
      .set('Cookie', user.cookie)
      .send({ clientName: 'A', phone: '0612345678', storeName: 'S', productsName: 'P' });
    expect(expired.status).to.equal(401);
    expect(await testKnex()('orders').where({ workspace_id: user.workspaceId })).to.have.length(0);

    await testKnex()('session').where({ sid }).delete();
    await request(appUrl()).get('/api/credits').set('Cookie', user.cookie).expect(401);
    expect(await testKnex()('session').whereRaw("sess->>'userId' = ?", [user.userId])).to.have.length(0);
  });

  it('a session without its cached context takes the full path: the context is read and saved once', async () => {
    const user = await signUp();
    const sid = sidOf(user.cookie);
    await testKnex()('session')
      .where({ sid })
      .update({ sess: testKnex().raw("(sess::jsonb - 'ctx')::json") });
    const res = await request(appUrl()).get('/api/orders').set('Cookie', user.cookie).expect(200);
    expect(res.body).to.deep.equal({ orders: [] });
    const row = await rowOf(sid);
    expect(row.sess.ctx.workspace.id).to.equal(user.workspaceId);
    expect(row.sess.ctx.user.id).to.equal(user.userId);
  });

  it('a user without a workspace is 403 on workspace routes, signed in or not cached', async () => {
    const user = await signUp({ workspace: null });
    await request(appUrl()).get('/api/orders').set('Cookie', user.cookie).expect(403, { error: 'No workspace found' });
    await request(appUrl()).get('/api/orders').set('Cookie', user.cookie).expect(403, { error: 'No workspace found' });
  });
});
