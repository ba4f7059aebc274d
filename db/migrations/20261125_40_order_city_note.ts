import type { Knex } from 'knex';
import { ordersWebhookEventsSql } from '../order-fields';

/**
 * What the call and the courier need, and finding an order by what customers say:
 * - `city` (≤ 100), `note` (≤ 1,000) and `placed_at` (when the shop took the order, from an
 *   imported file's date column; `created_at` stays when it reached us).
 * - `total_amount` keeps three decimals (a Tunisian dinar has 3); each currency is shown with its
 *   own (ISO 4217 minor units: MAD 2, TND 3), in webhook_order as in the API.
 * - The search text also holds the store's reference, the city, the address and the note, and is
 *   folded in Arabic too: harakat and tatweel left out, alef with hamza or madda read as alef.
 *   `search_pattern_text` folds what is typed the same way. The search indexes are rebuilt on it.
 *
 * The table is rewritten once (the amount's type and the stored search text in one statement).
 */

/** ISO 4217 minor units other than 2, frozen here (amountText in services/orders/service.ts has the same list). */
const THREE_DECIMALS = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'];
const NO_DECIMALS = ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];
const list = (codes: string[]) => codes.map((c) => `'${c}'`).join(', ');

const FOLD = (expression: string) =>
  `lower(public.unaccent('public.unaccent'::regdictionary, translate(regexp_replace(${expression}, '[\\u064B-\\u065F\\u0670\\u0640]', '', 'g'), 'أإآٱ', 'اااا')))`;

const SEARCH_FUNCTIONS = `
  CREATE FUNCTION order_search_document(client_name text, store_name text, products_name text, phone text,
                                        external_ref text, city text, address text, note text)
    RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT ${FOLD("concat_ws(' ', client_name, store_name, products_name, substr(phone, 5), external_ref, city, address, note)")} $$;
  CREATE OR REPLACE FUNCTION search_pattern_text(pattern text)
    RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT ${FOLD('pattern')} $$;
  CREATE FUNCTION currency_minor_units(currency text) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN currency IN (${list(THREE_DECIMALS)}) THEN 3 WHEN currency IN (${list(NO_DECIMALS)}) THEN 0 ELSE 2 END $$`;

const WEBHOOK_ORDER = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id, 'workspace_id', o.workspace_id, 'client_name', o.client_name, 'phone', o.phone,
      'store_name', o.store_name, 'products_name', o.products_name, 'address', o.address,
      'city', o.city, 'note', o.note,
      'status', o.status, 'created_at', o.created_at, 'placed_at', o.placed_at, 'flags', to_jsonb(o.flags),
      'source', o.source, 'store_connection_id', o.store_connection_id, 'external_id', o.external_id,
      'external_ref', o.external_ref, 'total_amount', round(o.total_amount, currency_minor_units(o.currency))::text, 'currency', o.currency,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1))
  $$`;

const OLD_WEBHOOK_ORDER = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id, 'workspace_id', o.workspace_id, 'client_name', o.client_name, 'phone', o.phone,
      'store_name', o.store_name, 'products_name', o.products_name, 'address', o.address,
      'status', o.status, 'created_at', o.created_at, 'flags', to_jsonb(o.flags),
      'source', o.source, 'store_connection_id', o.store_connection_id, 'external_id', o.external_id,
      'external_ref', o.external_ref, 'total_amount', o.total_amount::text, 'currency', o.currency,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1))
  $$`;

const CHANGED_FIELDS_BEFORE = ['client_name', 'phone', 'store_name', 'products_name', 'address', 'external_ref', 'total_amount', 'currency', 'status'];
const CHANGED_FIELDS = ['client_name', 'phone', 'store_name', 'products_name', 'address', 'city', 'note', 'external_ref', 'total_amount', 'currency', 'status'];

const SEARCH_INDEXES = `
  CREATE INDEX orders_search_idx ON orders USING gin (workspace_id, search_text gin_trgm_ops);
  CREATE INDEX orders_search_keys_idx ON orders USING gin (order_search_keys(workspace_id, search_text))`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE orders
      ADD COLUMN city text CONSTRAINT orders_city_check CHECK (char_length(city) BETWEEN 1 AND 100),
      ADD COLUMN note text CONSTRAINT orders_note_check CHECK (char_length(note) BETWEEN 1 AND 1000),
      ADD COLUMN placed_at timestamptz`);
  await knex.raw(SEARCH_FUNCTIONS);
  await knex.raw(`
    ALTER TABLE orders
      DROP COLUMN search_text,
      ALTER COLUMN total_amount TYPE numeric(15, 3),
      ADD COLUMN search_text text GENERATED ALWAYS AS
        (order_search_document(client_name, store_name, products_name, phone, external_ref, city, address, note)) STORED`);
  await knex.raw(SEARCH_INDEXES);
  await knex.raw(WEBHOOK_ORDER);
  await knex.raw(ordersWebhookEventsSql(CHANGED_FIELDS, { seqscanOff: true }));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(ordersWebhookEventsSql(CHANGED_FIELDS_BEFORE, { seqscanOff: true }));
  await knex.raw(OLD_WEBHOOK_ORDER);
  await knex.raw(`
    ALTER TABLE orders
      DROP COLUMN search_text,
      DROP COLUMN city, DROP COLUMN note, DROP COLUMN placed_at,
      ALTER COLUMN total_amount TYPE numeric(12, 2),
      ADD COLUMN search_text text GENERATED ALWAYS AS (order_search_text(client_name, store_name, products_name, phone)) STORED`);
  await knex.raw(SEARCH_INDEXES);
  await knex.raw('DROP FUNCTION currency_minor_units(text)');
  await knex.raw('DROP FUNCTION order_search_document(text, text, text, text, text, text, text, text)');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION search_pattern_text(pattern text)
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, pattern)) $$`);
}
