import type { Knex } from 'knex';

/**
 * Shopify's expiring offline tokens (issue 52): a connection whose token Shopify no longer refreshes
 * (a refresh refused: the refresh token expired or was revoked) needs the shop owner to approve the
 * app again. `reconnect_needed` says so; the owner's Reconnect (the OAuth flow again for the same
 * shop) clears it and replaces the tokens on the same row, which keeps its id and its orders.
 *
 * The tokens themselves and their expiries stay in `write_back` (jsonb): `access_token` and
 * `refresh_token` sealed with SECRETS_KEY (`v1:<keyId>:…`, AES-256-GCM), `expires_at` and
 * `refresh_token_expires_at` as ISO instants. Rows written before hold a plain `access_token` and no
 * expiry, and are read as they are.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE store_connections ADD COLUMN reconnect_needed boolean NOT NULL DEFAULT false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE store_connections DROP COLUMN reconnect_needed');
}
