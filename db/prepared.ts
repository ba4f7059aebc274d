import crypto from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';

/** A statement Postgres parses and plans once per connection (a named prepared statement). */
export interface Prepared {
  name: string;
  text: string;
}

interface PgClient {
  query(query: pg.Query, callback: (err: Error | undefined, result: { rows: unknown[] }) => void): void;
}

/**
 * A statement as pg's own Query, to pass to a client's or a pool's `query`. Given a config object
 * (`{ name, text, values }`), pg copies it property descriptor by property descriptor on every
 * call (`cloneQueryConfig`, 8 µs a query in the token exchange's profile); a query built from its
 * text is taken as it is, and its name makes it a named prepared statement all the same.
 */
function preparedQuery(statement: Prepared, values: unknown[]): pg.Query {
  const query = new pg.Query(statement.text, values);
  (query as pg.Query & { name: string }).name = statement.name;
  return query;
}

/**
 * Runs a pre-built statement of a hot path on a connection of knex's pool, as a named prepared
 * statement: no query building, and no parsing or planning in Postgres after a connection's first
 * run. Reported on knex's `query` and `query-response` events like any other statement (the bench
 * captures what a route runs from them).
 */
export async function queryPrepared<Row>(knex: Knex, statement: Prepared, values: unknown[]): Promise<Row[]> {
  const observed = knex.listenerCount('query') > 0;
  const event = observed ? { __knexQueryUid: crypto.randomUUID(), sql: statement.text, bindings: values, method: 'raw' } : undefined;
  if (event) knex.emit('query', event);
  const client = (await knex.client.acquireConnection()) as PgClient;
  try {
    const rows = await new Promise<unknown[]>((resolve, reject) => {
      client.query(preparedQuery(statement, values), (err, result) => (err ? reject(err) : resolve(result.rows)));
    });
    if (event) knex.emit('query-response', rows, event);
    return rows as Row[];
  } finally {
    await knex.client.releaseConnection(client);
  }
}

/** A prepared statement on a connection of a pg.Pool (the session pool), its rows. */
export async function queryPool<Row>(pool: pg.Pool, statement: Prepared, values: unknown[]): Promise<Row[]> {
  // pg-pool hands a Query to its client as it is; its types know only query configs.
  const result = (await pool.query(preparedQuery(statement, values) as unknown as pg.QueryConfig)) as pg.QueryResult;
  return result.rows as Row[];
}
