import type { Knex } from 'knex';

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

/** webhook_order before and after; before, the amount was the stored one as text (migration 20261124_20). */
const WEBHOOK_ORDER_BEFORE = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id,
      'workspace_id', o.workspace_id,
      'client_name', o.client_name,
      'phone', o.phone,
      'store_name', o.store_name,
      'products_name', o.products_name,
      'address', o.address,
      'status', o.status,
      'created_at', o.created_at,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1),
      'flags', to_jsonb(o.flags),
      'source', o.source,
      'store_connection_id', o.store_connection_id,
      'external_id', o.external_id,
      'external_ref', o.external_ref,
      'total_amount', o.total_amount::text,
      'currency', o.currency)
  $$`;
const WEBHOOK_ORDER = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id,
      'workspace_id', o.workspace_id,
      'client_name', o.client_name,
      'phone', o.phone,
      'store_name', o.store_name,
      'products_name', o.products_name,
      'address', o.address,
      'city', o.city,
      'note', o.note,
      'status', o.status,
      'created_at', o.created_at,
      'placed_at', o.placed_at,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1),
      'flags', to_jsonb(o.flags),
      'source', o.source,
      'store_connection_id', o.store_connection_id,
      'external_id', o.external_id,
      'external_ref', o.external_ref,
      'total_amount', round(o.total_amount, currency_minor_units(o.currency))::text,
      'currency', o.currency)
  $$`;

/** orders_webhook_events before and after: an order.updated names a change of the city or the note too. */
const ORDERS_WEBHOOK_EVENTS_BEFORE = `
    CREATE OR REPLACE FUNCTION orders_webhook_events() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
    DECLARE changed text[];
    BEGIN
      -- Most workspaces have no endpoint: one index probe, nothing built.
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace_id ELSE NEW.workspace_id END) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        PERFORM webhook_event(NEW.workspace_id, 'order.created', jsonb_build_object('order', webhook_order(NEW)));
      ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(name ORDER BY position) INTO changed FROM (VALUES
          (1, 'client_name', NEW.client_name IS DISTINCT FROM OLD.client_name),
          (2, 'phone', NEW.phone IS DISTINCT FROM OLD.phone),
          (3, 'store_name', NEW.store_name IS DISTINCT FROM OLD.store_name),
          (4, 'products_name', NEW.products_name IS DISTINCT FROM OLD.products_name),
          (5, 'address', NEW.address IS DISTINCT FROM OLD.address),
          (6, 'external_ref', NEW.external_ref IS DISTINCT FROM OLD.external_ref),
          (7, 'total_amount', NEW.total_amount IS DISTINCT FROM OLD.total_amount),
          (8, 'currency', NEW.currency IS DISTINCT FROM OLD.currency),
          (9, 'status', NEW.status IS DISTINCT FROM OLD.status)) AS f(position, name, differs)
        WHERE differs;
        IF changed IS NOT NULL THEN
          PERFORM webhook_event(NEW.workspace_id, 'order.updated',
            jsonb_build_object('order', webhook_order(NEW), 'previous_status', OLD.status, 'changed_fields', to_jsonb(changed)));
        END IF;
      ELSE
        PERFORM webhook_event(OLD.workspace_id, 'order.deleted', jsonb_build_object('order', webhook_order(OLD)));
        RETURN OLD;
      END IF;
      RETURN NULL;
    END $$`;
const ORDERS_WEBHOOK_EVENTS = `
    CREATE OR REPLACE FUNCTION orders_webhook_events() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
    DECLARE changed text[];
    BEGIN
      -- Most workspaces have no endpoint: one index probe, nothing built.
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace_id ELSE NEW.workspace_id END) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        PERFORM webhook_event(NEW.workspace_id, 'order.created', jsonb_build_object('order', webhook_order(NEW)));
      ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(name ORDER BY position) INTO changed FROM (VALUES
          (1, 'client_name', NEW.client_name IS DISTINCT FROM OLD.client_name),
          (2, 'phone', NEW.phone IS DISTINCT FROM OLD.phone),
          (3, 'store_name', NEW.store_name IS DISTINCT FROM OLD.store_name),
          (4, 'products_name', NEW.products_name IS DISTINCT FROM OLD.products_name),
          (5, 'address', NEW.address IS DISTINCT FROM OLD.address),
          (6, 'city', NEW.city IS DISTINCT FROM OLD.city),
          (7, 'note', NEW.note IS DISTINCT FROM OLD.note),
          (8, 'external_ref', NEW.external_ref IS DISTINCT FROM OLD.external_ref),
          (9, 'total_amount', NEW.total_amount IS DISTINCT FROM OLD.total_amount),
          (10, 'currency', NEW.currency IS DISTINCT FROM OLD.currency),
          (11, 'status', NEW.status IS DISTINCT FROM OLD.status)) AS f(position, name, differs)
        WHERE differs;
        IF changed IS NOT NULL THEN
          PERFORM webhook_event(NEW.workspace_id, 'order.updated',
            jsonb_build_object('order', webhook_order(NEW), 'previous_status', OLD.status, 'changed_fields', to_jsonb(changed)));
        END IF;
      ELSE
        PERFORM webhook_event(OLD.workspace_id, 'order.deleted', jsonb_build_object('order', webhook_order(OLD)));
        RETURN OLD;
      END IF;
      RETURN NULL;
    END $$`;

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
  await knex.raw(WEBHOOK_ORDER);
  await knex.raw(ORDERS_WEBHOOK_EVENTS);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(ORDERS_WEBHOOK_EVENTS_BEFORE);
  await knex.raw(WEBHOOK_ORDER_BEFORE);
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
