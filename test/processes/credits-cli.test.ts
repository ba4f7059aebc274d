import { expect } from 'chai';
import { signUp } from '../helpers/app';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import { runScript } from '../helpers/process';

const run = (...args: string[]) => runScript('bin/credits.js', args, { DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' });

describe('credits CLI (npm run credits -- grant)', function () {
  this.timeout(30_000);

  it('grants credits to a workspace owner as a ledger row that every member then sees', async () => {
    const owner = await signUp();
    const result = await run('grant', owner.email.toUpperCase(), '150.50', '--note', 'Welcome pack');
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('Balance: 150.5');
    const rows = await testKnex()('credit_ledger').where({ user_id: owner.userId });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ kind: 'grant', amount: 150.5, note: 'Welcome pack' });
    const res = await owner.agent.get('/api/credits').expect(200);
    expect(res.body).to.deep.equal({ credits: 150.5, totalCredits: 150.5, totalSpent: 0 });
  });

  it('refuses an email that is not a workspace owner, writing nothing', async () => {
    const loner = await signUp({ workspace: null });
    const result = await run('grant', loner.email, '10');
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain(`No workspace owner with the email ${loner.email}`);
    expect(await testKnex()('credit_ledger').where({ user_id: loner.userId })).to.have.length(0);
  });

  for (const amount of ['0', '-5', 'abc', '1.234']) {
    it(`refuses the amount ${amount}`, async () => {
      const owner = await signUp();
      const result = await run('grant', owner.email, amount);
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(/Amount must be a positive number|Usage:/);
      expect(await testKnex()('credit_ledger').where({ user_id: owner.userId })).to.have.length(0);
    });
  }

  it('prints usage for a wrong command', async () => {
    const result = await run('take', 'someone@example.test', '5');
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain('Usage: npm run credits -- grant <owner-email> <amount> [--note TEXT]');
  });
});
