import { expect } from 'chai';
import request from 'supertest';
import { appUrl, signUp } from '../helpers/app';

describe('request guards', () => {
  it('/api without a session → 401 {"error":"Unauthorized"}', async () => {
    const res = await request(appUrl()).get('/api/credits').expect(401);
    expect(res.body).to.deep.equal({ error: 'Unauthorized' });
  });

  it('/api with a forged or unknown session cookie → 401', async () => {
    await request(appUrl()).get('/api/credits').set('Cookie', 'ocs.sid=s%3Aforged.signature').expect(401);
  });

  it('/api refuses a bearer token in place of the session cookie → 401', async () => {
    const res = await request(appUrl()).get('/api/credits').set('Authorization', 'Bearer abc.def.ghi').expect(401);
    expect(res.body).to.deep.equal({ error: 'Unauthorized' });
  });

  it('/api for a signed-in user with no workspace → 403 {"error":"No workspace found"}', async () => {
    const { agent } = await signUp({ workspace: null });
    const res = await agent.get('/api/credits').expect(403);
    expect(res.body).to.deep.equal({ error: 'No workspace found' });
  });

  it('pages redirect a signed-out visitor to /login', async () => {
    for (const page of ['/', '/workspace']) {
      const res = await request(appUrl()).get(page).expect(303);
      expect(res.headers.location, page).to.equal('/login');
    }
  });

  it('pages send a user with no workspace to /workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    expect((await agent.get('/').expect(303)).headers.location).to.equal('/workspace');
  });
});
