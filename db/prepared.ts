import crypto from 'node:crypto';
import type { Knex } from 'knex';

/** A statement Postgres parses and plans once per connection (a named prepared statement). */
export interface Prepared {
  name: string;
  text: string;
}

interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
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
    const { rows } = await client.query({ name: statement.name, text: statement.text, values });
    if (event) knex.emit('query-response', rows, event);
    return rows as Row[];
  } finally {
    await knex.client.releaseConnection(client);
  }
}
