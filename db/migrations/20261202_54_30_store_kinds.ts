import type { Knex } from 'knex';

/**
 * A store platform is one folder in services/stores/platforms/ and one line in its registry.ts
 * (services/stores/README.md): the tables no longer list the kinds, which the registry does; they
 * keep a kind (and an order's source) to the shape of a kind's name, as carrier kinds are
 * (20261126_63_carrier_kinds).
 *
 * An order's source is one of its channels (`form`, `api`, `data_api`, `import`: the orders' own
 * words, not kinds), or the kind of the store connection it came by, which it names.
 */
const KIND_SHAPE = "'^[a-z][a-z0-9_]{0,39}$'";
const CONSTRAINTS = [
  ['orders', 'orders_source_check', `source IN ('form', 'api', 'data_api', 'import') OR (store_connection_id IS NOT NULL AND source ~ ${KIND_SHAPE})`],
  ['store_connections', 'store_connections_kind_check', `kind ~ ${KIND_SHAPE}`],
  ['oauth_states', 'oauth_states_kind_check', `kind ~ ${KIND_SHAPE}`],
] as const;

/** Frozen here: the lists as they were. */
const BEFORE: Record<string, string> = {
  orders_source_check: "source IN ('form', 'api', 'data_api', 'import', 'shopify', 'woocommerce', 'youcan', 'custom')",
  store_connections_kind_check: "kind IN ('shopify', 'woocommerce', 'youcan', 'custom')",
  oauth_states_kind_check: "kind IN ('shopify', 'woocommerce', 'youcan')",
};

export async function up(knex: Knex): Promise<void> {
  for (const [table, name, check] of CONSTRAINTS) {
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${name}`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${name} CHECK (${check})`);
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM oauth_states WHERE kind NOT IN ('shopify', 'woocommerce', 'youcan')");
  await knex.raw("DELETE FROM store_connections WHERE kind NOT IN ('shopify', 'woocommerce', 'youcan', 'custom')");
  for (const [table, name] of CONSTRAINTS) {
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${name}`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${name} CHECK (${BEFORE[name]})`);
  }
}
