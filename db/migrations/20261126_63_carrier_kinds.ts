import type { Knex } from 'knex';

/**
 * A new kind of carrier connection is one adapter file in services/deliveries/carriers/ and one line
 * in its index.ts (docs/delivery.md, For maintainers): the table no longer lists the kinds, which
 * the adapters are; it keeps a kind to the shape of an adapter's name.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE carrier_connections DROP CONSTRAINT carrier_connections_kind_check');
  await knex.raw("ALTER TABLE carrier_connections ADD CONSTRAINT carrier_connections_kind_check CHECK (kind ~ '^[a-z][a-z0-9_]{0,39}$')");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM carrier_connections WHERE kind <> 'custom'");
  await knex.raw('ALTER TABLE carrier_connections DROP CONSTRAINT carrier_connections_kind_check');
  await knex.raw("ALTER TABLE carrier_connections ADD CONSTRAINT carrier_connections_kind_check CHECK (kind IN ('custom'))");
}
