import { expect } from 'chai';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import { signUp, TEST_ENV } from '../helpers/app';
import { seed, testKnex } from '../helpers/db';

/**
 * A carrier's report is applied a batch of rows per transaction (docs/delivery.md); each batch's
 * statements run without Postgres's JIT compiler, whose compiling once took most of a batch's time
 * (bench/changes.md, issue 57): a batch's estimated cost passes `jit_above_cost`.
 */
describe("a carrier's report, batch by batch", () => {
  it('every batch statement runs in a transaction that turned the JIT compiler off first, and every row is applied', async () => {
    const knex = testKnex();
    const { workspaceId } = await signUp();
    const rows = 1500;
    await seed(
      `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, status, delivery_status, delivery_tracking_number, delivery_at)
       SELECT ?::uuid, 'C' || g, '+2126' || lpad(g::text, 8, '0'), 'S', 'P', 'confirmed', 'shipped', 'BT' || g, now() - interval '1 day'
         FROM generate_series(1, ?) g`,
      [workspaceId!, rows],
    );
    const report = Buffer.from(`N° de suivi;Statut\n${Array.from({ length: rows }, (_, i) => `BT${i + 1};Livré\n`).join('')}`);
    // Each statement of the import with its transaction, in the order sent.
    const sent: Array<{ sql: string; tx: string | undefined }> = [];
    const record = (q: { sql: string; __knexTxId?: string }) => sent.push({ sql: q.sql, tx: q.__knexTxId });
    knex.on('query', record);
    const { deliveries } = createServices(knex, loadConfig({ ...TEST_ENV }), new Jobs(knex));
    let outcome: Awaited<ReturnType<typeof deliveries.reports.run>>;
    try {
      outcome = await deliveries.reports.run(workspaceId!, report, { fileName: 'batches.csv' });
    } finally {
      knex.off('query', record);
    }
    expect(outcome).to.include({ updated: rows, unchanged: 0 });
    const applies = sent.filter((q) => q.sql.trimStart().startsWith('WITH given'));
    expect(applies).to.have.length(2);
    for (const apply of applies) {
      expect(apply.tx, 'a batch in a transaction').to.be.a('string');
      const ofItsTransaction = sent.filter((q) => q.tx === apply.tx).map((q) => q.sql);
      expect(ofItsTransaction.indexOf('SET LOCAL jit = off')).to.be.within(0, ofItsTransaction.indexOf(apply.sql) - 1);
    }
  });
});
