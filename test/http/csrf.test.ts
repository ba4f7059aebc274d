import { expect } from 'chai';
import request from 'supertest';
import { appUrl, csrfFrom, csrfOf, signUp, uniqueEmail } from '../helpers/app';
import { testKnex } from '../helpers/db';

describe('CSRF protection', () => {
  it('refuses a form post without _csrf and writes nothing', async () => {
    const agent = request.agent(appUrl());
    await agent.get('/signup').expect(200);
    const email = uniqueEmail();
    const res = await agent.post('/signup').type('form').send({ name: 'No Token', email, password: 'long enough password' }).expect(403);
    expect(res.text).to.contain('Your form has expired');
    expect(await testKnex()('users').where({ email })).to.have.length(0);
  });

  it('refuses a form post whose _csrf belongs to another session', async () => {
    const { agent } = await signUp({ workspace: null });
    const other = await signUp({ workspace: null });
    const foreignToken = await csrfOf(other.agent);
    await agent.post('/workspace').type('form').send({ _csrf: foreignToken, name: 'Stolen' }).expect(403);
    expect(await testKnex()('workspaces').where({ name: 'Stolen' })).to.have.length(0);
  });

  it('re-issues the token at sign-in: the anonymous token no longer works', async () => {
    const { email, password } = await signUp({ workspace: null });
    const agent = request.agent(appUrl());
    const anonymousToken = csrfFrom((await agent.get('/login')).text);
    await agent.post('/login').type('form').send({ _csrf: anonymousToken, email, password }).expect(303);
    await agent.post('/workspace').type('form').send({ _csrf: anonymousToken, name: 'Old token' }).expect(403);
    const fresh = await csrfOf(agent);
    expect(fresh).not.to.equal(anonymousToken);
    await agent.post('/workspace').type('form').send({ _csrf: fresh, name: 'New token' }).expect(303);
  });

  describe('cross-site requests (Fetch-Metadata and Origin)', () => {
    it('refuses a page form post marked Sec-Fetch-Site: cross-site, even with a valid token', async () => {
      const { agent, userId } = await signUp({ workspace: null });
      const csrf = await csrfOf(agent);
      const res = await agent.post('/workspace').set('Sec-Fetch-Site', 'cross-site').type('form').send({ _csrf: csrf, name: 'Cross' }).expect(403);
      expect(res.text).to.contain('Cross-site request refused');
      expect(await testKnex()('workspace_members').where({ user_id: userId })).to.have.length(0);
    });

    it('refuses Sec-Fetch-Site: same-site on /api with the JSON error', async () => {
      const { agent } = await signUp();
      const res = await agent.post('/api/agents').set('Sec-Fetch-Site', 'same-site').send({ name: 'x' }).expect(403);
      expect(res.body).to.deep.equal({ error: 'Cross-site request refused' });
    });

    it('refuses a foreign Origin when Fetch-Metadata is absent', async () => {
      const { agent } = await signUp();
      const res = await agent.post('/api/agents').set('Origin', 'https://evil.example').send({ name: 'x' }).expect(403);
      expect(res.body).to.deep.equal({ error: 'Cross-site request refused' });
      await agent.post('/api/agents').set('Origin', 'null').send({ name: 'x' }).expect(403);
    });

    it('accepts Origin: null with Sec-Fetch-Site: same-origin (a same-origin form post)', async () => {
      const { agent, userId } = await signUp({ workspace: null });
      const csrf = await csrfOf(agent);
      await agent
        .post('/workspace')
        .set('Origin', 'null')
        .set('Sec-Fetch-Site', 'same-origin')
        .type('form')
        .send({ _csrf: csrf, name: 'Same origin' })
        .expect(303);
      expect(await testKnex()('workspace_members').where({ user_id: userId })).to.have.length(1);
    });

    it('accepts our own Origin, and requests with neither header (servers, curl)', async () => {
      const { agent } = await signUp({ workspace: null });
      await agent
        .post('/workspace')
        .set('Origin', 'http://127.0.0.1:3000')
        .type('form')
        .send({ _csrf: await csrfOf(agent), name: 'Own origin' })
        .expect(303);
    });

    it('lets safe methods through whatever their origin', async () => {
      await request(appUrl()).get('/login').set('Sec-Fetch-Site', 'cross-site').expect(200);
    });
  });
});
