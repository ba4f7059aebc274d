import { expect } from 'chai';
import { memberOf } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { humanShop, ORDER } from '../helpers/loop';

/** team.md §2: "the weighted split is exact in aggregate, whatever the concurrency". */
describe('team: the weighted assignment is exact under concurrency', function () {
  this.timeout(600_000);

  it('1,000 orders created by 20 parallel clients over three on-shift confirmers at 50/25/25 land 500/250/250 (± 1 each)', async () => {
    const owner = await humanShop();
    const a = await memberOf(owner);
    const b = await memberOf(owner);
    await owner.agent.put('/api/settings/team').send({ assignment: 'weighted' }).expect(200);
    await owner.agent.put(`/api/team/${owner.userId}`).send({ share: 50 }).expect(200);
    await owner.agent.put(`/api/team/${a.userId}`).send({ share: 25 }).expect(200);
    await owner.agent.put(`/api/team/${b.userId}`).send({ share: 25 }).expect(200);
    for (const who of [owner, a, b]) await who.agent.put('/api/me/shift').send({ on: true }).expect(200);
    // Twenty clients (each of the three members' sessions, in turn), fifty orders each, all at once.
    const clients = Array.from({ length: 20 }, (_, i) => [owner, a, b][i % 3]);
    await Promise.all(
      clients.map(async (client, c) => {
        for (let i = 0; i < 50; i += 1) {
          await client.agent
            .post('/api/orders')
            .send({ ...ORDER, clientName: `C${c}-${i}` })
            .expect(201);
        }
      }),
    );
    const rows = await testKnex()('orders')
      .where({ workspace_id: owner.workspaceId })
      .groupBy('assigned_to')
      .select('assigned_to', testKnex().raw('count(*)::int AS n'));
    const counts = Object.fromEntries(rows.map((r: { assigned_to: string | null; n: number }) => [r.assigned_to ?? 'none', r.n]));
    expect(counts.none).to.equal(undefined);
    expect(counts[owner.userId]).to.be.within(499, 501);
    expect(counts[a.userId]).to.be.within(249, 251);
    expect(counts[b.userId]).to.be.within(249, 251);
    expect(counts[owner.userId] + counts[a.userId] + counts[b.userId]).to.equal(1000);
  });
});
