import type { Knex } from 'knex';

/**
 * Handing parcels to carriers the service can call (docs/carriers.md):
 * - `carrier_accounts`: a workspace's account at a carrier. `kind` is checked for its shape only
 *   (the kinds are the adapters' registry, as for carrier connections); `credentials` holds
 *   the kind's credentials (a JSON object) sealed whole with SECRETS_KEY; `hook_token` (sealed) is the long
 *   random token in its push URL for carriers that do not sign; `state` says whether it works
 *   (`working`), its credentials were refused, or its carrier has not answered since `state_since`;
 *   `next_call_at` is the earliest time of its next call to the carrier (the carrier's rate, kept
 *   across the worker's processes).
 * - `carrier_cities`: the account's copy of its carrier's city list.
 * - `carrier_city_choices`: the shop's remembered choices, a written city's key → the carrier's city.
 * - `shipments`: one "Ship" of many orders; `parcels`: each order's parcel at a carrier. An order has
 *   at most one live parcel (`parcels_live_order_idx`); `needs_city` and `needs_amount` wait for a
 *   person, `failed` and `cancelled` are not live, so the order can be sent again. `cod_amount`: the cash to collect a person gave on the shipment's page for an
 *   order without an amount (a confirmed order's own amount is not edited). `answer_lost`: a try got no
 *   answer, so the next one asks the carrier first whether the parcel was made.
 */
// Frozen here: a later change to a list needs a migration of its own.
const STATES = ['queued', 'sending', 'sent', 'failed', 'uncertain', 'needs_city', 'needs_amount', 'cancelled'];
const LIVE = ['queued', 'sending', 'sent', 'uncertain'];
const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE carrier_accounts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind ~ '^[a-z][a-z_]{0,39}$'),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
      credentials text NOT NULL CHECK (char_length(credentials) <= 8000),
      hook_token text NOT NULL CHECK (char_length(hook_token) BETWEEN 1 AND 500),
      pickup_city_id text CHECK (char_length(pickup_city_id) <= 100),
      allow_open boolean NOT NULL DEFAULT true,
      auto_ship boolean NOT NULL DEFAULT false,
      store_names text[] NOT NULL DEFAULT '{}',
      state text NOT NULL DEFAULT 'working' CHECK (state IN ('working', 'credentials_refused', 'unreachable')),
      state_since timestamptz,
      state_reason text CHECK (char_length(state_reason) <= 300),
      unknown_words jsonb NOT NULL DEFAULT '{}',
      cities_refreshed_at timestamptz,
      next_call_at timestamptz NOT NULL DEFAULT '-infinity',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw('CREATE INDEX carrier_accounts_workspace_idx ON carrier_accounts (workspace_id, created_at, id)');
  await knex.raw(`
    CREATE TABLE carrier_cities (
      account_id uuid NOT NULL REFERENCES carrier_accounts(id) ON DELETE CASCADE,
      city_id text NOT NULL CHECK (char_length(city_id) BETWEEN 1 AND 100),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      arabic_name text CHECK (char_length(arabic_name) <= 200),
      price numeric(12, 2),
      PRIMARY KEY (account_id, city_id)
    )`);
  await knex.raw(`
    CREATE TABLE carrier_city_choices (
      account_id uuid NOT NULL REFERENCES carrier_accounts(id) ON DELETE CASCADE,
      written_key text NOT NULL CHECK (char_length(written_key) BETWEEN 1 AND 200),
      city_id text NOT NULL CHECK (char_length(city_id) BETWEEN 1 AND 100),
      chosen_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, written_key)
    )`);
  await knex.raw(`
    CREATE TABLE shipments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      account_id uuid NOT NULL REFERENCES carrier_accounts(id) ON DELETE CASCADE,
      created_by uuid REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw('CREATE INDEX shipments_workspace_idx ON shipments (workspace_id, created_at DESC)');
  await knex.raw(`
    CREATE TABLE parcels (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      order_id uuid REFERENCES orders(id) ON DELETE SET NULL,
      account_id uuid NOT NULL REFERENCES carrier_accounts(id) ON DELETE CASCADE,
      shipment_id uuid REFERENCES shipments(id) ON DELETE SET NULL,
      state text NOT NULL CHECK (state IN (${list(STATES)})),
      reference text NOT NULL CHECK (char_length(reference) BETWEEN 1 AND 200),
      city_id text CHECK (char_length(city_id) <= 100),
      cod_amount numeric(12, 2) CHECK (cod_amount >= 0),
      tracking text CHECK (char_length(tracking) <= 100),
      label_url text CHECK (char_length(label_url) <= 2000),
      reason text CHECK (char_length(reason) <= 300),
      carrier_status text CHECK (char_length(carrier_status) <= 200),
      tries integer NOT NULL DEFAULT 0,
      answer_lost boolean NOT NULL DEFAULT false,
      first_try_at timestamptz,
      sent_at timestamptz,
      last_news_at timestamptz,
      next_poll_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw(`CREATE UNIQUE INDEX parcels_live_order_idx ON parcels (order_id) WHERE state IN (${list(LIVE)})`);
  await knex.raw('CREATE INDEX parcels_order_idx ON parcels (order_id, created_at DESC)');
  await knex.raw('CREATE INDEX parcels_shipment_idx ON parcels (shipment_id, created_at, id) WHERE shipment_id IS NOT NULL');
  await knex.raw('CREATE UNIQUE INDEX parcels_tracking_idx ON parcels (account_id, tracking) WHERE tracking IS NOT NULL');
  await knex.raw(`CREATE INDEX parcels_poll_idx ON parcels (next_poll_at) WHERE next_poll_at IS NOT NULL AND state = 'sent'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE parcels');
  await knex.raw('DROP TABLE shipments');
  await knex.raw('DROP TABLE carrier_city_choices');
  await knex.raw('DROP TABLE carrier_cities');
  await knex.raw('DROP TABLE carrier_accounts');
}
