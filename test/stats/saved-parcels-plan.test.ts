import { expect } from 'chai';
import { signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { StatsService } from '../../services/stats';

/**
 * The /stats/team page's saved parcels (issue 57, item 3): its statement reads the workspace's
 * ended human calls through `calls_human_ended_idx`, never every call of every workspace. Without
 * `kind = 'human'` in the statement the partial index cannot serve it, and Postgres scanned the
 * whole `calls` table twice per page (2.05× at 100,000 orders among a million).
 */
describe('saved parcels: the statement reads the workspace’s human calls by their index', () => {
  it('each of its two reads of calls goes through calls_human_ended_idx, with sequential scans priced out', async () => {
    const { workspaceId } = await signUp();
    const knex = testKnex();
    const statements: Array<{ sql: string; bindings: unknown[] }> = [];
    const record = (query: { sql: string; bindings: unknown[] }) => statements.push(query);
    knex.on('query', record);
    try {
      const lines = await new StatsService(knex).saved(workspaceId!, { from: '2026-11-01', to: '2026-11-29' });
      // The owner's line, with nothing followed up.
      expect(lines.map((l) => [l.follow_ups, l.saved])).to.deep.equal([[0, 0]]);
    } finally {
      knex.removeListener('query', record);
    }
    const saved = statements.find((s) => s.sql.includes("op.purpose = 'follow_up'"));
    expect(saved, 'the saved parcels statement').to.not.equal(undefined);
    const plan = await knex.transaction(async (trx) => {
      // A test database's calls are few: a sequential scan is priced out so that the plan shows which
      // indexes the statement can use at all.
      await trx.raw('SET LOCAL enable_seqscan = off');
      const { rows } = await trx.raw(`EXPLAIN ${saved!.sql.replace(/\$\d+/g, '?')}`, saved!.bindings as never[]);
      return rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
    });
    expect(plan.match(/calls_human_ended_idx on calls/g) ?? [], plan).to.have.length(2);
    expect(plan).to.not.match(/Seq Scan on calls/);
  });
});
