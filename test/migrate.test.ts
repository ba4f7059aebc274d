import { expect } from 'chai';
import crypto from 'node:crypto';
import { createKnex } from '../db/knex';
import { testDatabaseUrl, testKnex } from './helpers/db';
import { runScript } from './helpers/process';

describe('npm run migrate (the release step)', function () {
  this.timeout(60_000);

  it('applies every migration to a fresh database, then finds nothing to do', async () => {
    const name = `ocs_migrate_${crypto.randomBytes(4).toString('hex')}`;
    await testKnex().raw('CREATE DATABASE ??', [name]);
    const url = new URL(testDatabaseUrl());
    url.pathname = `/${name}`;
    try {
      const first = await runScript('bin/migrate.js', [], { DATABASE_URL: url.toString() });
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout).to.contain('Applied: 20261122_01_accounts');
      const fresh = createKnex(url.toString(), 1);
      try {
        const tables = await fresh('pg_tables').where({ schemaname: 'public' }).pluck('tablename');
        expect(tables).to.include.members(['users', 'workspaces', 'workspace_members', 'invitations', 'agents', 'orders', 'operations', 'api_keys', 'credit_ledger', 'session', 'idempotency_keys']);
      } finally {
        await fresh.destroy();
      }
      const again = await runScript('bin/migrate.js', [], { DATABASE_URL: url.toString() });
      expect(again.stdout.trim()).to.equal('Already up to date');
    } finally {
      await testKnex().raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    }
  });

  it('records the same migration names as the tests’ own run, so the two paths never disagree', async () => {
    const result = await runScript('bin/migrate.js', [], { DATABASE_URL: testDatabaseUrl() });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout.trim()).to.equal('Already up to date');
    const names = await testKnex()('knex_migrations').orderBy('id').pluck('name');
    expect(names).to.deep.equal(['20261122_01_accounts', '20261122_02_orders', '20261122_03_keys_and_credits', '20261122_04_idempotency']);
  });

  it('refuses to run without DATABASE_URL, saying so', async () => {
    const result = await runScript('bin/migrate.js', [], { DATABASE_URL: '' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain('DATABASE_URL');
  });
});
