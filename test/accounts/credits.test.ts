import { expect } from 'chai';
import request from 'supertest';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

describe('GET /api/credits', () => {
  it('200: zeros for a new workspace, as numbers', async () => {
    const { agent } = await signUp();
    expect((await agent.get('/api/credits').expect(200)).body).to.deep.equal({ credits: 0, totalCredits: 0, totalSpent: 0 });
  });

  it('200: the owner and a member see the same numbers from the owner’s ledger', async () => {
    const owner = await signUp();
    const member = await signUp({ invitedBy: owner });
    expect(member.workspaceId).to.equal(owner.workspaceId);
    await testKnex()('credit_ledger').insert([
      { user_id: owner.userId, kind: 'grant', amount: 100, note: 'welcome' },
      { user_id: owner.userId, kind: 'grant', amount: 25.5 },
      { user_id: owner.userId, kind: 'spend', amount: 12.25 },
      // The member's own ledger rows are not the workspace's balance.
      { user_id: member.userId, kind: 'grant', amount: 1000 },
    ]);
    const expected = { credits: 113.25, totalCredits: 125.5, totalSpent: 12.25 };
    expect((await owner.agent.get('/api/credits').expect(200)).body).to.deep.equal(expected);
    expect((await member.agent.get('/api/credits').expect(200)).body).to.deep.equal(expected);
  });

  it('401 without a session', async () => {
    expect((await request(appUrl()).get('/api/credits').expect(401)).body).to.deep.equal({ error: 'Unauthorized' });
  });

  it('403 for a user with no workspace', async () => {
    const { agent } = await signUp({ workspace: null });
    expect((await agent.get('/api/credits').expect(403)).body).to.deep.equal({ error: 'No workspace found' });
  });
});
