import type { Knex } from 'knex';

/**
 * The parcels an account has at its carrier right now (`sending`), counted under the account's lock
 * by every claim of the shipping jobs (services/shipping/send.ts): found by this small index rather
 * than by a scan of every parcel the workspaces ever sent.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("CREATE INDEX parcels_sending_idx ON parcels (account_id) WHERE state = 'sending'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX parcels_sending_idx');
}
