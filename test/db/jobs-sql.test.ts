import crypto from 'node:crypto';
import { expect } from 'chai';
import { insertJobsSql, Jobs, QUEUES } from '../../db/jobs';
import { HANDLERS } from '../../jobs';
import { testKnex } from '../helpers/db';

/**
 * insertJobsSql writes, in a statement of ours, the job row pg-boss's own send writes. Compared
 * column by column for every queue, in one transaction that is rolled back (no worker sees them).
 */
describe('insertJobsSql: the same job rows as pg-boss', () => {
  const COLUMNS = [
    'name',
    'data',
    'priority',
    'state',
    'retry_limit',
    'retry_count',
    'retry_delay',
    'retry_backoff',
    'expire_in',
    'singleton_on',
    'dead_letter',
    'policy',
    'start_after',
    'keep_until',
    'started_on',
    'completed_on',
    'output',
  ];

  for (const queue of Object.values(QUEUES)) {
    it(`${queue.name}: every column but the id and the singleton key`, async () => {
      const knex = testKnex();
      const viaBoss = crypto.randomUUID();
      const ours = crypto.randomUUID();
      const rollback = new Error('rollback');
      let rows: Array<Record<string, unknown>> = [];
      await knex
        .transaction(async (trx) => {
          await new Jobs(knex).send(trx, queue.name, { operationId: viaBoss }, { singletonKey: viaBoss });
          await trx.raw(insertJobsSql(queue.name, '(SELECT ?::uuid AS id) s', "jsonb_build_object('operationId', s.id)", 's.id::text'), [ours]);
          rows = await trx(`pgboss.job`)
            .where({ name: queue.name })
            .whereIn('singleton_key', [viaBoss, ours])
            .select(['singleton_key', ...COLUMNS]);
          throw rollback;
        })
        .catch((err) => {
          if (err !== rollback) throw err;
        });
      expect(rows).to.have.length(2);
      const boss = rows.find((row) => row.singleton_key === viaBoss)!;
      const mine = rows.find((row) => row.singleton_key === ours)!;
      expect(mine.data).to.deep.equal({ operationId: ours });
      expect(boss.data).to.deep.equal({ operationId: viaBoss });
      for (const column of COLUMNS.filter((c) => c !== 'data')) {
        expect(mine[column], column).to.deep.equal(boss[column]);
      }
      expect(await knex('pgboss.job').whereIn('singleton_key', [viaBoss, ours])).to.have.length(0);
    });
  }

  it('one job per source row, and none for an empty source', async () => {
    const knex = testKnex();
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    const rollback = new Error('rollback');
    let counts: number[] = [];
    await knex
      .transaction(async (trx) => {
        const sql = (source: string) => insertJobsSql('operation-due', source, "jsonb_build_object('operationId', s.id)", 's.id::text');
        await trx.raw(sql('(SELECT unnest(?::uuid[]) AS id) s'), [ids]);
        await trx.raw(sql('(SELECT ?::uuid AS id WHERE false) s'), [crypto.randomUUID()]);
        const rows = await trx('pgboss.job').where({ name: 'operation-due' }).whereRaw("data->>'operationId' = ANY(?)", [ids]);
        counts = [rows.length, new Set(rows.map((row) => row.singleton_key)).size];
        throw rollback;
      })
      .catch((err) => {
        if (err !== rollback) throw err;
      });
    expect(counts).to.deep.equal([2, 2]);
  });
});

describe('queue names: one list', () => {
  const NAMES = Object.values(QUEUES).map((q) => q.name);

  it('every queue has exactly one handler, each in its own file under jobs/', () => {
    expect(HANDLERS.map((h) => h.queue).sort()).to.deep.equal([...NAMES].sort());
  });

  it('every queue a database function writes jobs to is one of QUEUES', async () => {
    // Our functions (pg-boss's own live in its schema).
    const { rows } = await testKnex().raw(
      `SELECT p.proname, p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND (p.prosrc LIKE '%pgboss.job%' OR p.prosrc LIKE '%pgboss.queue%')`,
    );
    expect(rows.map((r: { proname: string }) => r.proname)).to.include('orders_store_write_back');
    for (const { proname, prosrc } of rows as Array<{ proname: string; prosrc: string }>) {
      const named = [...prosrc.matchAll(/q\.name = '([^']+)'/g)].map((m) => m[1]);
      expect(named, proname).to.not.deep.equal([]);
      for (const name of named) expect(NAMES, `${proname} writes to ${name}`).to.include(name);
    }
  });
});
