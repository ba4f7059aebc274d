import path from 'node:path';
import type { Knex } from 'knex';
import type pg from 'pg';
import { ROOT } from '../../config';
import type { EmbeddedDatabase } from '../../db/embedded';
import { startEmbeddedPostgres } from '../../db/embedded';
import { JOB_SCHEMA, prepareJobs } from '../../db/jobs';
import { createKnex, createSessionPool } from '../../db/knex';
import { migrateLatest } from '../../db/migrate';

/** 32 bytes in base64: the key third-party secrets are sealed with in the tests' database (TEST_ENV.SECRETS_KEY). */
export const TEST_SECRETS_KEY = 'dGVzdC1zZWNyZXRzLWtleS10ZXN0LXNlY3JldHMta2U=';

let embedded: EmbeddedDatabase | undefined;
let url: string | undefined;
let knex: Knex | undefined;
let sessionPool: pg.Pool | undefined;

/**
 * Under `mocha --parallel` each worker process runs its files on a database of its own: a copy of
 * `<database>_template`, migrated once per run by the main process (`prepareTestDatabases`).
 */
const workerId = process.env.MOCHA_WORKER_ID;

function withDatabase(base: string, name: string): string {
  const next = new URL(base);
  next.pathname = `/${name}`;
  return next.toString();
}

function databaseName(base: string): string {
  return decodeURIComponent(new URL(base).pathname.slice(1)) || 'postgres';
}

function templateName(base: string): string {
  return `${databaseName(base)}_template`;
}

async function migrate(databaseUrl: string): Promise<Knex> {
  const db = createKnex(databaseUrl);
  await migrateLatest(db, { secretsKey: TEST_SECRETS_KEY });
  await prepareJobs(databaseUrl);
  // Jobs left by an earlier run point at its data: each run starts with an empty queue.
  await db.raw(`DELETE FROM ${JOB_SCHEMA}.job`);
  return db;
}

/** Whatever runs the same statements on one connection to the server: each worker's database is made from it. */
async function onServer<T>(base: string, work: (db: Knex) => Promise<T>): Promise<T> {
  const db = createKnex(withDatabase(base, 'postgres'));
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}

function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The main process's part (mocha's global setup): DATABASE_URL, or an embedded Postgres kept under
 * .data/test-postgres; and, for parallel runs, the workers' template migrated.
 */
export async function prepareTestDatabases(parallel: boolean): Promise<void> {
  if (!process.env.DATABASE_URL) {
    embedded = await startEmbeddedPostgres(path.join(ROOT, '.data', 'test-postgres'), 'test');
    process.env.DATABASE_URL = embedded.url;
  }
  if (!parallel) return;
  const base = process.env.DATABASE_URL;
  const template = templateName(base);
  await onServer(base, async (db) => {
    const exists = await db.raw('SELECT 1 FROM pg_database WHERE datname = ?', [template]);
    if (exists.rows.length === 0) await db.raw(`CREATE DATABASE ${quoted(template)}`);
  });
  const migrated = await migrate(withDatabase(base, template));
  await migrated.destroy();
}

export async function releaseTestDatabases(): Promise<void> {
  await embedded?.stop();
  embedded = undefined;
}

/**
 * The settings of the tests' own databases (a worker's, the serial run's), which hold nothing that
 * outlives the run:
 * - no JIT compiler: it compiles again on each execution of a statement whose estimate looks costly
 *   (a trigger's, once per row), time the tests measure nothing of but wait on
 *   (`test/deliveries/report-batches` checks the statements the service sends, not the setting they
 *   leave);
 * - commits not waiting for their WAL to reach the disk (`synchronous_commit = off`): a commit is as
 *   atomic and as visible to every other connection as before, only a crash of Postgres itself may
 *   lose the last fraction of a second, and no test crashes the server these databases live on (the
 *   tests that kill or restart Postgres start one of their own: helpers/throwaway-postgres). On this
 *   machine a commit's flush is ~4.5 ms, and the suite commits tens of thousands of times.
 */
async function tuneTestDatabase(db: Knex, name: string): Promise<void> {
  await db.raw(`ALTER DATABASE ${quoted(name)} SET jit = off`);
  await db.raw(`ALTER DATABASE ${quoted(name)} SET synchronous_commit = off`);
}

/** A worker's own database, a fresh copy of the template (so each run starts from the same empty state), tuned as above. */
async function workerDatabase(base: string, id: string): Promise<string> {
  const name = `${databaseName(base)}_w${id}`;
  await onServer(base, async (db) => {
    await db.raw(`DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`);
    await db.raw(`CREATE DATABASE ${quoted(name)} TEMPLATE ${quoted(templateName(base))}`);
    await tuneTestDatabase(db, name);
  });
  return withDatabase(base, name);
}

/** A worker's own Redis database number, so that rate-limit counters of one worker never reach another's. */
function workerRedis(base: string, id: string): string {
  const next = new URL(base);
  const first = Number(next.pathname.slice(1) || '0');
  next.pathname = `/${(first + 1 + Number(id)) % 16}`;
  return next.toString();
}

/** The database of this process, migrated, opened once: a parallel worker keeps it for every file it runs. */
export async function startTestDatabase(): Promise<void> {
  if (knex) return;
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is set by the global setup (test/setup.ts)');
  if (workerId === undefined) {
    url = base;
    await onServer(base, (db) => tuneTestDatabase(db, databaseName(base)));
    knex = await migrate(url);
    // A database kept from earlier runs holds their rows; where autovacuum is off (as on this
    // machine's Postgres) nothing has measured them, and with no statistics Postgres took the calls
    // table for empty and read all of it for every order an export lists (over the statement
    // timeout). Give it the statistics a maintained database has.
    await knex.raw('ANALYZE');
  } else {
    url = await workerDatabase(base, workerId);
    // Whatever this worker starts (a server process, a script) reads the same database and Redis.
    process.env.DATABASE_URL = url;
    if (process.env.REDIS_URL) process.env.REDIS_URL = workerRedis(process.env.REDIS_URL, workerId);
    knex = createKnex(url);
  }
  sessionPool = createSessionPool(url, () => {});
}

/**
 * Before each file of a parallel worker: the statistics of what the worker's earlier files wrote
 * (autovacuum may be off), so that a plan made on empty tables does not outlive them. Only the
 * tables autovacuum would analyze (changed rows above 50 + 10% of the table, its defaults), and any
 * table whose file has grown since it was last measured: a connection may not have reported its
 * changes yet (Postgres gathers them lazily), but a table's size on disk is never late. A whole
 * ANALYZE before each of the hundred-odd files cost Postgres more than a minute of the run.
 */
export async function refreshTestDatabase(): Promise<void> {
  if (!knex) return;
  const { rows } = await knex.raw<{ rows: Array<{ name: string }> }>(
    `SELECT format('%I.%I', s.schemaname, s.relname) AS name
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
         OR pg_relation_size(c.oid) / current_setting('block_size')::int > 1.1 * c.relpages + 4`,
  );
  if (rows.length > 0) await knex.raw(`ANALYZE ${rows.map((r) => r.name).join(', ')}`);
}

export async function stopTestDatabase(): Promise<void> {
  await knex?.destroy();
  await sessionPool?.end();
  knex = undefined;
  sessionPool = undefined;
}

export function testDatabaseUrl(): string {
  if (!url) throw new Error('test database not started');
  return url;
}

export function testKnex(): Knex {
  if (!knex) throw new Error('test database not started');
  return knex;
}

export function testSessionPool(): pg.Pool {
  if (!sessionPool) throw new Error('test database not started');
  return sessionPool;
}

/**
 * A test's seed of many rows in one statement, free of the service's 10 s statement timeout: on a
 * loaded machine (parallel workers, a browser beside them) 20,000 orders through their triggers can
 * take longer, and a seed is not what a test measures.
 */
export async function seed(sql: string, bindings: readonly Knex.RawBinding[]): Promise<void> {
  await testKnex().transaction(async (trx) => {
    await trx.raw('SET LOCAL statement_timeout = 0');
    await trx.raw(sql, bindings);
  });
}
