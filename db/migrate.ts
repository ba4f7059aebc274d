import type { Knex } from 'knex';
import * as accounts from './migrations/20261122_01_accounts';
import * as orders from './migrations/20261122_02_orders';
import * as keysAndCredits from './migrations/20261122_03_keys_and_credits';
import * as idempotency from './migrations/20261122_04_idempotency';
import * as confirmationLoop from './migrations/20261122_05_confirmation_loop';
import * as openCallsIndex from './migrations/20261122_06_open_calls_index';
import * as ordersSearch from './migrations/20261123_01_orders_search';
import * as webhooks from './migrations/20261123_02_webhooks';
import * as orderStatusCounts from './migrations/20261123_04_order_status_counts';

type Migration = { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> };

/**
 * Migrations are listed by name without a file extension, so the same history is recorded whether
 * they run from TypeScript sources or compiled JavaScript (knex would otherwise record `.ts` in one
 * place and `.js` in the other, and call the directory corrupt).
 */
const migrations: Array<[string, Migration]> = [
  ['20261122_01_accounts', accounts],
  ['20261122_02_orders', orders],
  ['20261122_03_keys_and_credits', keysAndCredits],
  ['20261122_04_idempotency', idempotency],
  ['20261122_05_confirmation_loop', confirmationLoop],
  ['20261122_06_open_calls_index', openCallsIndex],
  ['20261123_01_orders_search', ordersSearch],
  ['20261123_02_webhooks', webhooks],
  ['20261123_04_order_status_counts', orderStatusCounts],
];

const migrationSource: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => migrations,
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};

/** Applies every pending migration; returns the names it applied. */
export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}
