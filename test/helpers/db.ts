import path from 'node:path';
import type { Knex } from 'knex';
import type pg from 'pg';
import { ROOT } from '../../config';
import type { EmbeddedDatabase } from '../../db/embedded';
import { startEmbeddedPostgres } from '../../db/embedded';
import { createKnex, createSessionPool } from '../../db/knex';
import { migrateLatest } from '../../db/migrate';
import { JOB_SCHEMA, prepareJobs } from '../../db/jobs';

/** 32 bytes in base64: the key third-party secrets are sealed with in the tests' database (TEST_ENV.SECRETS_KEY). */
export const TEST_SECRETS_KEY = 'dGVzdC1zZWNyZXRzLWtleS10ZXN0LXNlY3JldHMta2U=';

let embedded: EmbeddedDatabase | undefined;
let url: string | undefined;
let knex: Knex | undefined;
let sessionPool: pg.Pool | undefined;

/** DATABASE_URL when set, else an embedded Postgres kept under .data/test-postgres. Migrated once. */
export async function startTestDatabase(): Promise<void> {
  url = process.env.DATABASE_URL;
  if (!url) {
    embedded = await startEmbeddedPostgres(path.join(ROOT, '.data', 'test-postgres'), 'test');
    url = embedded.url;
  }
  knex = createKnex(url);
  await migrateLatest(knex, { secretsKey: TEST_SECRETS_KEY });
  await prepareJobs(url);
  // Jobs left by an earlier run point at its data: each run starts with an empty queue.
  await knex.raw(`DELETE FROM ${JOB_SCHEMA}.job`);
  // A database kept from earlier runs holds their rows; where autovacuum is off (as on this
  // machine's Postgres) nothing has measured them, and with no statistics Postgres took the calls
  // table for empty and read all of it for every order an export lists (over the statement
  // timeout). Give it the statistics a maintained database has.
  await knex.raw('ANALYZE');
  sessionPool = createSessionPool(url, () => {});
}

export async function stopTestDatabase(): Promise<void> {
  await knex?.destroy();
  await sessionPool?.end();
  await embedded?.stop();
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
