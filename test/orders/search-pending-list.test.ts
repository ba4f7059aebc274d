import { expect } from 'chai';
import { loadConfig } from '../../config';
import { createBoss, createQueues, Jobs } from '../../db/jobs';
import { SignedSender } from '../../integrations/http';
import { sweep } from '../../jobs/sweep';
import { createServices } from '../../services';
import { IdempotencyService } from '../../services/shared';
import { OperationService, OrderService, tidySearchIndex } from '../../services/orders';
import { signUp, silentLogger, TEST_ENV } from '../helpers/app';
import { testDatabaseUrl, testKnex } from '../helpers/db';

/**
 * The search index's pending list: a carrier's report lets it grow to 64 MB in its own transactions,
 * so that it does not pay for merging it in the middle of its request; the worker's sweep merges it
 * every 15 seconds (tidySearchIndex). A search reads the pending list too: what waits there is
 * found, and found the same once merged.
 */
describe('the search index’s pending list, merged by the sweep', () => {
  // A probe of the newest 3 only: every search here is answered from the index's candidates.
  const limits = { probe: 3, candidates: 400, countCandidates: 400, commonKey: 5000 };
  const orders = () => new OrderService(testKnex(), new IdempotencyService(testKnex()), new OperationService(testKnex(), new Jobs(testKnex())), limits);

  /** A new workspace with `n` orders named "Zineb Ouazzani <i>" in Tanger. */
  async function workspaceOf(n: number): Promise<string> {
    const { workspaceId } = await signUp();
    await testKnex()('orders').insert(
      Array.from({ length: n }, (_, i) => ({
        workspace_id: workspaceId!,
        client_name: `Zineb Ouazzani ${i}`,
        phone: `+2126110${String(i).padStart(5, '0')}`,
        store_name: 'Atlas',
        products_name: 'Argan oil',
        city: 'Tanger',
        address: `${i} Rue Ibn Batouta`,
        status: 'pending',
      })),
    );
    return workspaceId!;
  }

  const found = async (workspaceId: string, q: string) =>
    (await orders().listPage(workspaceId, { statuses: [], flags: [], q, from: null, to: null }, 50, null)).orders.map((o) => o.id).sort();

  it('the index keeps Postgres’s 4 MB; a carrier’s report lets the list grow past it in its own transactions, for the sweep to merge', async () => {
    const { rows } = await testKnex().raw("SELECT reloptions FROM pg_class WHERE relname = 'orders_search_keys_idx'");
    expect(rows[0].reloptions).to.equal(null);
    // 1,000 confirmed orders with long addresses (~300 search keys each), then a report delivering them all:
    // rewritten, their keys make about 6 MB of pending list.
    const { workspaceId } = await signUp();
    const street = Array.from({ length: 40 }, (_, i) => `Quartier${i} Residence${i}`).join(' ');
    await testKnex()('orders').insert(
      Array.from({ length: 1000 }, (_, i) => ({
        workspace_id: workspaceId!,
        client_name: `Client ${i}`,
        phone: `+2126120${String(i).padStart(5, '0')}`,
        store_name: 'Atlas',
        products_name: 'Argan oil',
        city: 'Tanger',
        address: `${i} ${street}`,
        status: 'confirmed',
      })),
    );
    await tidySearchIndex(testKnex());
    const report = ['Téléphone;Statut', ...Array.from({ length: 1000 }, (_, i) => `06120${String(i).padStart(5, '0')};Livré`)].join('\r\n');
    const { deliveries } = createServices(testKnex(), loadConfig({ ...TEST_ENV }), new Jobs(testKnex()));
    const outcome = await deliveries.reports.run(workspaceId!, Buffer.from(report), { fileName: 'report.csv' });
    expect(outcome.updated).to.equal(1000);
    // Merged at 4 MB, at most 4 MB (512 pages) would be left; the report left all of it for the sweep.
    expect(await tidySearchIndex(testKnex())).to.be.above(512);
    expect(await found(workspaceId!, 'residence39')).to.have.length(50);
  });

  it('orders written wait in the pending list, are found there, and are found the same once tidySearchIndex merged them', async () => {
    const workspaceId = await workspaceOf(120);
    const before = await found(workspaceId, 'ouazzani 11');
    // "ouazzani 11", "ouazzani 110"…"ouazzani 119": 11 orders, read from the pending list.
    expect(before).to.have.length(11);
    expect(await tidySearchIndex(testKnex())).to.be.above(0);
    expect(await found(workspaceId, 'ouazzani 11')).to.deep.equal(before);
    expect(await found(workspaceId, 'ibn batouta')).to.have.length(50);
    // Nothing was written since: nothing is left to merge.
    expect(await tidySearchIndex(testKnex())).to.equal(0);
  });

  it('the worker’s sweep merges it: after a sweep, nothing of the orders just written is pending', async () => {
    const config = loadConfig({ ...TEST_ENV });
    const services = createServices(testKnex(), config, new Jobs(testKnex()));
    const boss = createBoss(testDatabaseUrl());
    await boss.start();
    const sender = new SignedSender(true, 1000);
    try {
      await createQueues(boss);
      const workspaceId = await workspaceOf(40);
      const run = sweep.create({ boss, services, sender, logger: silentLogger, publicBaseUrl: config.publicBaseUrl });
      await run([{}]);
      expect(await tidySearchIndex(testKnex())).to.equal(0);
      expect(await found(workspaceId, 'ouazzani 3')).to.have.length(11);
    } finally {
      sender.close();
      await boss.stop({ graceful: false, wait: true });
    }
  });
});
