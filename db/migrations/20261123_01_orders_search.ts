import type { Knex } from 'knex';

/**
 * Orders at scale: text search (accent- and case-insensitive, anywhere in the text), a customer's
 * history by phone, and the status filter, each served by an index scoped to the workspace.
 */
export async function up(knex: Knex): Promise<void> {
  // Trusted extensions (Postgres 13+): a database owner may create them; managed Postgres allows them.
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public');
  await knex.raw('CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public');
  await knex.raw('CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public');
  // unaccent() is only STABLE (its dictionary could change), so an index needs an IMMUTABLE wrapper
  // that names the dictionary: the documented way to index unaccented text.
  await knex.raw(`
    CREATE FUNCTION order_search_text(client_name text, store_name text, products_name text, phone text)
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, client_name || ' ' || store_name || ' ' || products_name || ' ' || substr(phone, 5))) $$`);
  await knex.raw(`
    CREATE FUNCTION search_pattern_text(pattern text)
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, pattern)) $$`);
  // Stored, not computed per query: a broad search ("amina") walks the newest orders and tests each
  // one's text, which must be cheap; a narrow one asks the trigram index. The phone is in the text
  // by its national digits (612345678), so "0612…" and "+212 6 12…" both find it.
  await knex.raw(
    'ALTER TABLE orders ADD COLUMN search_text text GENERATED ALWAYS AS (order_search_text(client_name, store_name, products_name, phone)) STORED',
  );
  await knex.raw('CREATE INDEX orders_search_idx ON orders USING gin (workspace_id, search_text gin_trgm_ops)');
  await knex.raw('CREATE INDEX orders_workspace_phone_idx ON orders (workspace_id, phone, created_at DESC, id DESC)');
  await knex.raw('CREATE INDEX orders_workspace_status_newest_idx ON orders (workspace_id, status, created_at DESC, id DESC)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX orders_workspace_status_newest_idx');
  await knex.raw('DROP INDEX orders_workspace_phone_idx');
  await knex.raw('DROP INDEX orders_search_idx');
  await knex.raw('ALTER TABLE orders DROP COLUMN search_text');
  await knex.raw('DROP FUNCTION search_pattern_text(text)');
  await knex.raw('DROP FUNCTION order_search_text(text, text, text, text)');
}
