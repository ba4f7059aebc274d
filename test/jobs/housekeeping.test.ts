import crypto from 'node:crypto';
import { expect } from 'chai';
import { Jobs } from '../../db/jobs';
import { sessionStore } from '../../routes/middleware/session';
import { silentLogger, signUp } from '../helpers/app';
import { testKnex, testSessionPool } from '../helpers/db';
import { testWorker, waitFor } from '../helpers/loop';

describe('housekeeping on the worker', function () {
  this.timeout(120_000);

  it('the worker deletes expired sessions and idempotency keys each minute; live ones stay', async () => {
    const owner = await signUp();
    const sid = (label: string) => `${label}-${crypto.randomUUID()}`;
    const [expired, live] = [sid('expired'), sid('live')];
    await testKnex()('session').insert([
      { sid: expired, sess: { cookie: {} }, expire: new Date(Date.now() - 60_000) },
      { sid: live, sess: { cookie: {} }, expire: new Date(Date.now() + 3_600_000) },
    ]);
    await testKnex()('idempotency_keys').insert([
      { workspace_id: owner.workspaceId, key: 'old-key', request_hash: 'x', created_at: new Date(Date.now() - 25 * 3_600_000) },
      { workspace_id: owner.workspaceId, key: 'new-key', request_hash: 'x' },
    ]);
    const worker = await testWorker();
    try {
      const schedule = await testKnex()('pgboss.schedule').where({ name: 'housekeeping' }).first('cron');
      expect(schedule).to.deep.equal({ cron: '* * * * *' });
      // The minute's job, now rather than at the next minute.
      await new Jobs(testKnex()).send(testKnex(), 'housekeeping', {});
      await waitFor(
        'the expired rows to go',
        async () =>
          (await testKnex()('session').where({ sid: expired })).length === 0 &&
          (await testKnex()('idempotency_keys').where({ workspace_id: owner.workspaceId, key: 'old-key' })).length === 0,
        90_000,
      );
      expect(await testKnex()('session').where({ sid: live })).to.have.length(1);
      expect(await testKnex()('idempotency_keys').where({ workspace_id: owner.workspaceId, key: 'new-key' })).to.have.length(1);
    } finally {
      await worker.stop();
      await testKnex()('session').whereIn('sid', [expired, live]).delete();
    }
  });

  it('the web process runs no pruning timer of its own', async () => {
    const store = sessionStore(testSessionPool(), silentLogger);
    // The store arms its timer on first use when pruning is on.
    await new Promise((resolve) => store.get(`absent-${crypto.randomUUID()}`, resolve));
    expect((store as unknown as { pruneTimer?: unknown }).pruneTimer).to.equal(undefined);
  });
});
