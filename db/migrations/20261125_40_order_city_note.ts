import type { Knex } from 'knex';
import { ordersWebhookEventsSql, webhookOrderSql } from '../order-fields';

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

/** webhook_order's fields before and after; before, the amount was the stored one as text (migration 20261124_20). */
const WEBHOOK_FIELDS_BEFORE = `id workspace_id client_name phone store_name products_name address status created_at
  flags operation_id source store_connection_id external_id external_ref total_amount currency`.split(/\s+/);
const WEBHOOK_FIELDS = [...WEBHOOK_FIELDS_BEFORE, 'city', 'note', 'placed_at'];
const AMOUNT_BEFORE = { total_amount: 'o.total_amount::text' };

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
  // Later migrations replace both functions (20261126_44_01 last).
  await knex.raw(webhookOrderSql(WEBHOOK_FIELDS));
  await knex.raw(ordersWebhookEventsSql(CHANGED_FIELDS, { seqscanOff: true }));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(ordersWebhookEventsSql(CHANGED_FIELDS_BEFORE, { seqscanOff: true }));
  await knex.raw(webhookOrderSql(WEBHOOK_FIELDS_BEFORE, AMOUNT_BEFORE));
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
