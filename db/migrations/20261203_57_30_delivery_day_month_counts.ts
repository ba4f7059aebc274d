import type { Knex } from 'knex';

/**
 * Issue 57, item 3: statistics that cost the same at 100,000 orders as at 100. Two more delivery
 * counters beside delivery_counts, written by the same trigger from the same grouped changes:
 *
 * - `delivery_day_counts`: per workspace, Morocco day, currency, final status and confirmer, without
 *   the store and the city. /stats's figures by day and by confirmation, what each channel's
 *   confirmed orders became, and /stats/team's delivered and refused read it: a day holds a few rows
 *   (statuses × confirmers) where delivery_counts holds them again for every store and city.
 * - `delivery_month_counts`: delivery_counts' grain per Morocco month. A period's whole months are
 *   read there and only its ragged ends by day (or a month minus the days it does not include, when
 *   that reads fewer days): a year costs about twelve months' rows, not 365 days'.
 *
 * Both are delta rows, folded by the worker's housekeeping like the others. Filled here from
 * delivery_counts, whose sums they repeat, while orders' writes wait (SHARE lock), so that no
 * statement's changes are counted in one table and not the others. orders_count_deliveries as
 * services/stats/db/orders_count_deliveries.sql.ts generates it (a literal copy: a migration means
 * the same forever).
 */
const COUNT_DELIVERIES = `CREATE OR REPLACE FUNCTION public.orders_count_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    WITH changes AS (
      SELECT workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n) AS n, sum(amount) AS amount FROM (
        SELECT workspace_id, (delivery_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, coalesce(city, '') AS city,
               coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
               delivery_confirmer_id AS confirmer_id, 1 AS n, 1 * coalesce(total_amount, 0) AS amount
          FROM new_rows WHERE delivery_status IN ('delivered', 'refused', 'returned', 'lost')
        UNION ALL
        SELECT workspace_id, (delivery_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, coalesce(city, '') AS city,
               coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
               delivery_confirmer_id AS confirmer_id, -1 AS n, -1 * coalesce(total_amount, 0) AS amount
          FROM old_rows WHERE delivery_status IN ('delivered', 'refused', 'returned', 'lost')) counted
       GROUP BY workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id
      HAVING sum(n) <> 0 OR sum(amount) <> 0),
    by_day AS (
      INSERT INTO delivery_day_counts (workspace_id, day, currency, status, confirmer_kind, confirmer_id, n, amount)
      SELECT workspace_id, day, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM changes
       GROUP BY workspace_id, day, currency, status, confirmer_kind, confirmer_id
      HAVING sum(n) <> 0 OR sum(amount) <> 0),
    by_month AS (
      INSERT INTO delivery_month_counts (workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
      SELECT workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM (SELECT *, date_trunc('month', day::timestamp)::date AS month FROM changes) c
       GROUP BY workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id
      HAVING sum(n) <> 0 OR sum(amount) <> 0)
    INSERT INTO delivery_counts (workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
    SELECT workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount FROM changes;
  ELSE
    WITH changes AS (
      SELECT workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n) AS n, sum(amount) AS amount FROM (
        SELECT workspace_id, (delivery_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, coalesce(city, '') AS city,
               coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
               delivery_confirmer_id AS confirmer_id, -1 AS n, -1 * coalesce(total_amount, 0) AS amount
          FROM old_rows WHERE delivery_status IN ('delivered', 'refused', 'returned', 'lost')) counted
       GROUP BY workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id
      HAVING sum(n) <> 0 OR sum(amount) <> 0),
    by_day AS (
      INSERT INTO delivery_day_counts (workspace_id, day, currency, status, confirmer_kind, confirmer_id, n, amount)
      SELECT workspace_id, day, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM changes
       GROUP BY workspace_id, day, currency, status, confirmer_kind, confirmer_id
      HAVING sum(n) <> 0 OR sum(amount) <> 0),
    by_month AS (
      INSERT INTO delivery_month_counts (workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
      SELECT workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM (SELECT *, date_trunc('month', day::timestamp)::date AS month FROM changes) c
       GROUP BY workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id
      HAVING sum(n) <> 0 OR sum(amount) <> 0)
    INSERT INTO delivery_counts (workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
    SELECT workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount FROM changes;
  END IF;
  RETURN NULL;
END $function$`;

/** The text before (20261202_54_11). */
const COUNT_DELIVERIES_BEFORE = `CREATE OR REPLACE FUNCTION public.orders_count_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO delivery_counts (workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
    SELECT workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM (
      SELECT workspace_id, (delivery_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, coalesce(city, '') AS city,
             coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
             delivery_confirmer_id AS confirmer_id, 1 AS n, 1 * coalesce(total_amount, 0) AS amount
        FROM new_rows WHERE delivery_status IN ('delivered', 'refused', 'returned', 'lost')
      UNION ALL
      SELECT workspace_id, (delivery_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, coalesce(city, '') AS city,
             coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
             delivery_confirmer_id AS confirmer_id, -1 AS n, -1 * coalesce(total_amount, 0) AS amount
        FROM old_rows WHERE delivery_status IN ('delivered', 'refused', 'returned', 'lost')) changes
     GROUP BY workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id
    HAVING sum(n) <> 0 OR sum(amount) <> 0;
  ELSE
    INSERT INTO delivery_counts (workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
    SELECT workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM (
      SELECT workspace_id, (delivery_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, coalesce(city, '') AS city,
             coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
             delivery_confirmer_id AS confirmer_id, -1 AS n, -1 * coalesce(total_amount, 0) AS amount
        FROM old_rows WHERE delivery_status IN ('delivered', 'refused', 'returned', 'lost')) changes
     GROUP BY workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id;
  END IF;
  RETURN NULL;
END $function$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE orders IN SHARE MODE');
  await knex.raw(`
    CREATE TABLE delivery_day_counts (
      workspace_id uuid NOT NULL,
      day date NOT NULL,
      currency text NOT NULL,
      status text NOT NULL,
      confirmer_kind text NOT NULL,
      confirmer_id uuid,
      n bigint NOT NULL,
      amount numeric NOT NULL
    )`);
  await knex.raw('CREATE INDEX delivery_day_counts_workspace_day_idx ON delivery_day_counts (workspace_id, day)');
  await knex.raw(`
    CREATE TABLE delivery_month_counts (
      workspace_id uuid NOT NULL,
      month date NOT NULL CHECK (extract(day FROM month) = 1),
      store_name text NOT NULL,
      city text NOT NULL,
      currency text NOT NULL,
      status text NOT NULL,
      confirmer_kind text NOT NULL,
      confirmer_id uuid,
      n bigint NOT NULL,
      amount numeric NOT NULL
    )`);
  await knex.raw('CREATE INDEX delivery_month_counts_workspace_month_idx ON delivery_month_counts (workspace_id, month)');
  await knex.raw(`
    INSERT INTO delivery_day_counts (workspace_id, day, currency, status, confirmer_kind, confirmer_id, n, amount)
    SELECT workspace_id, day, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount) FROM delivery_counts
     GROUP BY workspace_id, day, currency, status, confirmer_kind, confirmer_id
    HAVING sum(n) <> 0 OR sum(amount) <> 0`);
  await knex.raw(`
    INSERT INTO delivery_month_counts (workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id, n, amount)
    SELECT workspace_id, date_trunc('month', day::timestamp)::date, store_name, city, currency, status, confirmer_kind, confirmer_id, sum(n), sum(amount)
      FROM delivery_counts
     GROUP BY workspace_id, date_trunc('month', day::timestamp)::date, store_name, city, currency, status, confirmer_kind, confirmer_id
    HAVING sum(n) <> 0 OR sum(amount) <> 0`);
  await knex.raw(COUNT_DELIVERIES);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(COUNT_DELIVERIES_BEFORE);
  await knex.raw('DROP TABLE delivery_month_counts');
  await knex.raw('DROP TABLE delivery_day_counts');
}
