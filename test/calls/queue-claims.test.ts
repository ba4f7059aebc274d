import { expect } from 'chai';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import { signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, humanShop } from '../helpers/loop';

/**
 * Issue 37, item 8: "Start next call" never answers 204 while a due human call exists that no one
 * else holds, even while the worker's dispatch step is looking at the same operations.
 */
describe('the human queue while the worker dispatches (issue 37, item 8)', () => {
  it('50 rounds of two simultaneous claims with two due orders, the worker dispatching a burst meanwhile: always two claims, two different orders', async function () {
    this.timeout(180_000);
    const services = createServices(testKnex(), loadConfig({ ...TEST_ENV }), new Jobs(testKnex()));
    const owner = await humanShop();
    const member = await signUp({ invitedBy: owner });
    // Other orders the worker is busy with: another shop's, due and never claimed here.
    const other = await humanShop();
    const burst: string[] = [];
    for (let i = 0; i < 20; i += 1)
      burst.push((await createOrder(other, { clientName: `O${i}`, phone: '0612345678', storeName: 'S', productsName: 'P' })).operation_id!);

    for (let round = 0; round < 50; round += 1) {
      const due = [
        (await createOrder(owner, { clientName: `A${round}`, phone: '0612345678', storeName: 'S', productsName: 'P' })).operation_id!,
        (await createOrder(owner, { clientName: `B${round}`, phone: '0612345679', storeName: 'S', productsName: 'P' })).operation_id!,
      ];
      let stop = false;
      // The worker's dispatch step, as its operation-due jobs run it: the due orders among a burst of others.
      const worker = (async () => {
        let runs = 0;
        while (!stop || runs === 0) {
          await services.calls.dispatchMany([...due, ...burst]);
          runs += 1;
        }
      })();
      const answers = await Promise.all([owner.agent.post('/api/calls/next'), member.agent.post('/api/calls/next')]);
      stop = true;
      await worker;
      expect(
        answers.map((r) => r.status),
        `round ${round}`,
      ).to.deep.equal([200, 200]);
      const claimed = answers.map((r) => r.body.order.operation_id);
      expect(new Set(claimed).size, `round ${round}`).to.equal(2);
      expect(claimed).to.have.members(due);
      // Each records its outcome: a member holds one open call at a time (issue 53, defect 6).
      await Promise.all(
        answers.map((r, i) => [owner, member][i].agent.post(`/api/calls/${r.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200)),
      );
    }
  });
});
