import knexFactory from 'knex';
import type { Knex } from 'knex';
import pg from 'pg';
import { withoutStatementValues } from '../logger';
import { retryConflicts } from './transaction';

// COUNT/SUM come back as int8/numeric strings; our counts and credit amounts fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);
pg.types.setTypeParser(pg.types.builtins.NUMERIC, Number);

const STATEMENT_TIMEOUT_MS = 10_000;

/** Where knex and the session store report their own warnings (defaults to silence). */
export interface DbLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const quiet: DbLog = { warn: () => {}, error: () => {} };

/**
 * `statementTimeoutMs`: the service's statements stop at 10 s; the benchmarks' own seeding (a million
 * orders, their calls, VACUUM) passes 0, none, as a slow machine may need longer.
 */
export function createKnex(databaseUrl: string, poolMax = 10, log: DbLog = quiet, statementTimeoutMs = STATEMENT_TIMEOUT_MS): Knex {
  const knex = knexFactory({
    log: {
      warn: (message: unknown) => log.warn({ message }, 'knex warning'),
      error: (message: unknown) => log.error({ message }, 'knex error'),
      deprecate: (message: unknown) => log.warn({ message }, 'knex deprecation'),
      debug: () => {},
    },
    client: 'pg',
    // A failed statement's error message carries its SQL with placeholders, never the values
    // bound to them: those can be secrets (a signing secret being rotated), and errors are logged.
    compileSqlOnError: false,
    connection: { connectionString: databaseUrl, statement_timeout: statementTimeoutMs, connectionTimeoutMillis: 10_000 },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
  knex.on('query-error', withoutStatementValues);
  return retryConflicts(knex);
}

/** The session store needs a pg.Pool of its own; errors on idle clients must not crash the process. */
export function createSessionPool(databaseUrl: string, onError: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 5,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    connectionTimeoutMillis: 10_000,
  });
  pool.on('error', onError);
  return pool;
}
