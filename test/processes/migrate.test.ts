import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../config';
import { createKnex } from '../../db/knex';
import { migrationSource } from '../../db/migrate';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import { spawn } from 'node:child_process';
import { runScript } from '../helpers/process';

/** `npx knex <args>` in the project, with the top-level knexfile.ts. */
function knexCli(args: string[], databaseUrl: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'knex', 'bin', 'cli.js'), ...args, '--knexfile', path.join(ROOT, 'knexfile.ts')], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** A new, empty database beside the tests' own: its name (the caller drops it) and its URL. */
async function emptyDatabase(prefix: string): Promise<{ name: string; url: string }> {
  const name = `${prefix}_${crypto.randomBytes(4).toString('hex')}`;
  await testKnex().raw('CREATE DATABASE ??', [name]);
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

describe('npm run migrate (the release step)', function () {
  this.timeout(60_000);

  it('applies every migration to a fresh database, then finds nothing to do', async () => {
    const { name, url } = await emptyDatabase('ocs_migrate');
    try {
      const first = await runScript('bin/migrate.js', [], { DATABASE_URL: url });
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout).to.contain('Applied: 20261122_01_accounts');
      const fresh = createKnex(url, 1);
      try {
        const tables = await fresh('pg_tables').where({ schemaname: 'public' }).pluck('tablename');
        expect(tables).to.include.members([
          'users',
          'workspaces',
          'workspace_members',
          'invitations',
          'agents',
          'orders',
          'operations',
          'api_keys',
          'credit_ledger',
          'session',
          'idempotency_keys',
          'calls',
          'call_settings',
          'call_reports',
        ]);
        // The release step also creates the job engine's schema and our queues.
        const queues = await fresh('pgboss.queue').pluck('name');
        expect(queues).to.include.members(['operation-due', 'call-request', 'call-timeout', 'claim-expiry', 'sweep']);
      } finally {
        await fresh.destroy();
      }
      const again = await runScript('bin/migrate.js', [], { DATABASE_URL: url });
      expect(again.stdout.trim()).to.equal('Already up to date\nJob queues ready');
    } finally {
      await testKnex().raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    }
  });

  it('20261123_07 gives every existing order its latest operation’s id, past a batch of 5,000, and none to an order without one', async () => {
    const { name, url } = await emptyDatabase('ocs_migrate');
    const db = createKnex(url, 1);
    try {
      const before: typeof migrationSource = {
        ...migrationSource,
        getMigrations: async () => (await migrationSource.getMigrations([])).filter((m) => m.file < '20261123_07'),
      };
      await db.migrate.latest({ migrationSource: before });
      await db.raw(`
        WITH u AS (INSERT INTO users (email, name, password_hash) VALUES ('backfill@example.com', 'Backfill', 'x') RETURNING id),
             w AS (INSERT INTO workspaces (name, owner_id) SELECT 'Backfill shop', id FROM u RETURNING id),
             a AS (INSERT INTO agents (workspace_id, name, is_order_handler) SELECT id, 'Handler', true FROM w RETURNING id, workspace_id),
             o AS (INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, created_at)
                   SELECT w.id, 'C' || g, '+212612345678', 'S', 'P', now() - g * interval '1 minute' FROM w, generate_series(1, 6000) g
                   RETURNING id, workspace_id, created_at, client_name)
        INSERT INTO operations (workspace_id, order_id, agent_id, direction, status, created_at)
        SELECT o.workspace_id, o.id, a.id, 'outbound', 'completed', o.created_at + k * interval '1 second'
          FROM o, a, generate_series(1, 3) k
         WHERE substr(o.client_name, 2)::int % 3 <> 0 AND (k = 1 OR (k = 2 AND substr(o.client_name, 2)::int % 5 = 0))
        UNION ALL
        -- Two at the same instant: the greater id is the latest.
        SELECT o.workspace_id, o.id, a.id, 'outbound', 'completed', o.created_at + interval '1 hour'
          FROM o, a, generate_series(1, 2) k
         WHERE substr(o.client_name, 2)::int % 7 = 0`);
      await db.migrate.latest({ migrationSource });
      const { rows } = await db.raw(`
        SELECT count(*)::int AS orders,
               count(*) FILTER (WHERE o.operation_id IS NULL)::int AS empty,
               count(*) FILTER (WHERE o.operation_id IS DISTINCT FROM
                 (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1))::int AS wrong
          FROM orders o`);
      // Orders with no operation: multiples of 3 that are not multiples of 7.
      const empty = Array.from({ length: 6000 }, (_, i) => i + 1).filter((g) => g % 3 === 0 && g % 7 !== 0).length;
      expect(rows[0]).to.deep.equal({ orders: 6000, empty, wrong: 0 });
      // The trigger keeps it from then on: a new, later operation becomes the order's.
      // C1: one operation, a minute old (some others' latest are an hour ahead, later than a new one).
      const order = await db('orders').where({ client_name: 'C1' }).first('id', 'workspace_id');
      const agent = await db('agents').first('id');
      const [op] = await db('operations').insert(
        { workspace_id: order.workspace_id, order_id: order.id, agent_id: agent.id, direction: 'outbound', status: 'pending', next_attempt_at: db.fn.now() },
        ['id'],
      );
      expect((await db('orders').where({ id: order.id }).first('operation_id')).operation_id).to.equal(op.id);
    } finally {
      await db.destroy();
      await testKnex().raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    }
  });

  it('20261124_20 gives existing orders source "api" and no store fields; down and up again', async () => {
    const { name, url } = await emptyDatabase('ocs_migrate');
    const db = createKnex(url, 1);
    try {
      const before: typeof migrationSource = {
        ...migrationSource,
        getMigrations: async () => (await migrationSource.getMigrations([])).filter((m) => m.file < '20261124_20'),
      };
      await db.migrate.latest({ migrationSource: before });
      await db.raw(`
        WITH u AS (INSERT INTO users (email, name, password_hash) VALUES ('owner@example.com', 'Owner', 'x') RETURNING id),
             w AS (INSERT INTO workspaces (name, owner_id) SELECT 'Old shop', id FROM u RETURNING id)
        INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, status)
        SELECT w.id, 'Old', '+212612345678', 'Atlas', 'Oil', 'pending' FROM w`);
      await db.migrate.latest({ migrationSource });
      const fields = ['source', 'store_connection_id', 'external_id', 'external_ref', 'total_amount', 'currency'];
      expect(await db('orders').first(fields)).to.deep.equal({
        source: 'api',
        store_connection_id: null,
        external_id: null,
        external_ref: null,
        total_amount: null,
        currency: null,
      });
      const [order] = await db('orders').select('*');
      expect((await db.raw('SELECT webhook_order(o) AS j FROM orders o')).rows[0].j).to.include({ source: 'api', total_amount: null });
      // This migration alone, whatever came after it but the one whose search text reads its external_ref.
      await db.migrate.down({ migrationSource, name: '20261125_40_order_city_note' });
      await db.migrate.down({ migrationSource, name: '20261124_20_store_fields' });
      expect(Object.keys(await db('orders').first())).not.to.include('source');
      await db.migrate.latest({ migrationSource });
      expect(await db('orders').where({ id: order.id }).first('source')).to.deep.equal({ source: 'api' });
    } finally {
      await db.destroy();
      await testKnex().raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    }
  });

  it('20261124_01 drops invitations made the old way (an address alone) and keeps only hashed, expiring links', async () => {
    const { name, url } = await emptyDatabase('ocs_migrate');
    const db = createKnex(url, 1);
    try {
      const before: typeof migrationSource = {
        ...migrationSource,
        getMigrations: async () => (await migrationSource.getMigrations([])).filter((m) => m.file < '20261124_01'),
      };
      await db.migrate.latest({ migrationSource: before });
      await db.raw(`
        WITH u AS (INSERT INTO users (email, name, password_hash) VALUES ('owner@example.com', 'Owner', 'x') RETURNING id),
             w AS (INSERT INTO workspaces (name, owner_id) SELECT 'Old shop', id FROM u RETURNING id, owner_id)
        INSERT INTO invitations (workspace_id, email, invited_by, accepted_at)
        SELECT w.id, e.email, w.owner_id, e.accepted FROM w, (VALUES ('pending@example.com', NULL::timestamptz), ('joined@example.com', now())) e(email, accepted)`);
      expect(await db('invitations').pluck('email')).to.have.members(['pending@example.com', 'joined@example.com']);
      await db.migrate.latest({ migrationSource });
      expect(await db('invitations').select('id')).to.deep.equal([]);
      const columns = await db('information_schema.columns').where({ table_name: 'invitations' }).select('column_name', 'is_nullable');
      expect(Object.fromEntries(columns.map((c: { column_name: string; is_nullable: string }) => [c.column_name, c.is_nullable])))
        .to.include({
          token_hash: 'NO',
          expires_at: 'NO',
          created_by: 'NO',
          used_at: 'YES',
          revoked_at: 'YES',
        })
        .and.not.to.have.property('accepted_at');
      // The hash is unique: one link, one invitation.
      const [ws] = await db('workspaces').select('id', 'owner_id');
      const row = { workspace_id: ws.id, email: 'a@example.com', created_by: ws.owner_id, token_hash: 'h', expires_at: db.raw("now() + interval '7 days'") };
      await db('invitations').insert(row);
      let duplicate: unknown;
      await db('invitations')
        .insert({ ...row, email: 'b@example.com' })
        .catch((err: unknown) => (duplicate = err));
      expect((duplicate as { code?: string })?.code).to.equal('23505');
    } finally {
      await db.destroy();
      await testKnex().raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    }
  });

  it('records the same migration names as the tests’ own run, so the two paths never disagree', async () => {
    const result = await runScript('bin/migrate.js', [], { DATABASE_URL: testDatabaseUrl() });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout.trim()).to.equal('Already up to date\nJob queues ready');
    // By name: a database kept from earlier runs applied each migration as it arrived, not in name order.
    const names = await testKnex()('knex_migrations').orderBy('name').pluck('name');
    const files = fs
      .readdirSync(path.join(ROOT, 'db', 'migrations'))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => file.replace(/\.ts$/, ''))
      .sort();
    expect(files).to.include('20261122_01_accounts');
    expect(names).to.deep.equal(files);
  });

  it('knexfile.ts: npx knex migrate:latest, migrate:rollback and migrate:make work, recording the names npm run migrate records', async () => {
    const { name, url } = await emptyDatabase('ocs_knexfile');
    const fresh = createKnex(url, 1);
    let made: string | undefined;
    try {
      const latest = await knexCli(['migrate:latest'], url);
      expect(latest.code, latest.output).to.equal(0);
      expect(await fresh('knex_migrations').orderBy('name').pluck('name')).to.deep.equal(await testKnex()('knex_migrations').orderBy('name').pluck('name'));
      const rollback = await knexCli(['migrate:rollback'], url);
      expect(rollback.code, rollback.output).to.equal(0);
      expect(await fresh('knex_migrations').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
      expect(await fresh('pg_tables').where({ schemaname: 'public', tablename: 'orders' })).to.have.length(0);
      // npm run migrate (the release step) reads the same knexfile: it finds everything to do again.
      const release = await runScript('bin/migrate.js', [], { DATABASE_URL: url });
      expect(release.code, release.stderr).to.equal(0);
      expect(release.stdout).to.contain('Applied: 20261122_01_accounts');
      const make = await knexCli(['migrate:make', 'knexfile_probe'], url);
      expect(make.code, make.output).to.equal(0);
      made = fs.readdirSync(path.join(ROOT, 'db', 'migrations')).find((f) => f.endsWith('_knexfile_probe.ts'));
      expect(made, make.output).to.match(/^\d{14}_knexfile_probe\.ts$/);
      const status = await knexCli(['migrate:list'], url);
      expect(status.output)
        .to.match(/Found 1 Pending Migration/)
        .and.contain(made!.replace(/\.ts$/, ''));
    } finally {
      if (made) fs.rmSync(path.join(ROOT, 'db', 'migrations', made));
      await fresh.destroy();
      await testKnex().raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    }
  });

  it('the Procfile releases with npm run migrate, serves the compiled server and runs the worker', () => {
    const lines = fs.readFileSync(path.join(ROOT, 'Procfile'), 'utf8').trim().split('\n');
    expect(lines).to.deep.equal([
      'release: npm run migrate',
      'web: node --max-semi-space-size=8 --heap-growing-percent=100 dist/server.js',
      'worker: node dist/worker.js',
    ]);
    const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts.migrate).to.contain('node dist/bin/migrate.js');
  });

  it('the schema enforces its rules itself: one handler per workspace, the ten statuses, timestamptz', async () => {
    const k = testKnex();
    const [user] = await k('users')
      .insert({ email: `schema-${crypto.randomUUID()}@example.test`, name: 'S', password_hash: 'x' })
      .returning('id');
    const [workspace] = await k('workspaces').insert({ name: 'Schema', owner_id: user.id }).returning('id');
    await k('agents').insert({ workspace_id: workspace.id, name: 'A', is_order_handler: true });
    const second = await k('agents')
      .insert({ workspace_id: workspace.id, name: 'B', is_order_handler: true })
      .then(
        () => null,
        (e: { constraint?: string }) => e.constraint,
      );
    expect(second).to.equal('agents_one_order_handler');
    const order = { workspace_id: workspace.id, client_name: 'C', phone: '+212612345678', store_name: 'S', products_name: 'P' };
    const badStatus = await k('orders')
      .insert({ ...order, status: 'shipped' })
      .then(
        () => null,
        (e: { constraint?: string }) => e.constraint,
      );
    expect(badStatus).to.equal('orders_status_check');
    const badPhone = await k('orders')
      .insert({ ...order, phone: '0612345678' })
      .then(
        () => null,
        (e: { constraint?: string }) => e.constraint,
      );
    expect(badPhone).to.equal('orders_phone_check');
    const types = await k('information_schema.columns')
      .where({ table_schema: 'public', data_type: 'timestamp without time zone' })
      .whereNot({ table_name: 'session' })
      .pluck('table_name');
    expect(types, 'every timestamp but connect-pg-simple’s own is timestamptz').to.deep.equal([]);
  });

  it('refuses to run without DATABASE_URL, saying so', async () => {
    const result = await runScript('bin/migrate.js', [], { DATABASE_URL: '' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain('DATABASE_URL');
  });
});
