import type { Knex } from 'knex';
import { ConfigError, loadConfig } from './config';
import { MIGRATIONS_SOURCE_DIRECTORY, migrationSource } from './db/migrate';
import type { MigrationParams } from './db/migrate';

// knex ignores a migration source when a directory is set, and `migrate:make` needs only the
// directory: it gets that; every other command (latest, rollback, status…) reads through our source.
const making = process.argv.includes('migrate:make');

/**
 * The one knex configuration for the command line (`npx knex migrate:latest`, `migrate:rollback`,
 * `migrate:make name`) and the release step (`npm run migrate`): DATABASE_URL, no statement time-out
 * (a migration may rewrite a large table), and the migrations of db/migrations.
 */
/**
 * What migrations take from the configuration (db/migrate.ts): SECRETS_KEY, or the development key of
 * `.data/` as the app reads it. A configuration the app would refuse gives none: a migration that
 * needs the key then says so.
 */
function migrationParams(): MigrationParams {
  if (making) return {};
  try {
    return { secretsKey: loadConfig().secretsKey };
  } catch (err) {
    if (err instanceof ConfigError) return {};
    throw err;
  }
}

const config: Knex.Config & { userParams: MigrationParams } = {
  client: 'pg',
  // Errors name the failed statement's SQL, never its bound values (as db/knex.ts).
  compileSqlOnError: false,
  connection: { connectionString: process.env.DATABASE_URL, statement_timeout: 0 },
  pool: { min: 0, max: 1 },
  migrations: making ? { directory: MIGRATIONS_SOURCE_DIRECTORY, extension: 'ts' } : { migrationSource },
  // Read by knex itself (untyped there): each migration finds it as `knex.userParams`.
  userParams: migrationParams(),
};

export default config;
