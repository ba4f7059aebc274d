import type { Knex } from 'knex';
import { MIGRATIONS_SOURCE_DIRECTORY, migrationSource } from './db/migrate';

// knex ignores a migration source when a directory is set, and `migrate:make` needs only the
// directory: it gets that; every other command (latest, rollback, status…) reads through our source.
const making = process.argv.includes('migrate:make');

/**
 * The one knex configuration for the command line (`npx knex migrate:latest`, `migrate:rollback`,
 * `migrate:make name`) and the release step (`npm run migrate`): DATABASE_URL, no statement time-out
 * (a migration may rewrite a large table), and the migrations of db/migrations.
 */
const config: Knex.Config = {
  client: 'pg',
  // Errors name the failed statement's SQL, never its bound values (as db/knex.ts).
  compileSqlOnError: false,
  connection: { connectionString: process.env.DATABASE_URL, statement_timeout: 0 },
  pool: { min: 0, max: 1 },
  migrations: making ? { directory: MIGRATIONS_SOURCE_DIRECTORY, extension: 'ts' } : { migrationSource },
};

export default config;
