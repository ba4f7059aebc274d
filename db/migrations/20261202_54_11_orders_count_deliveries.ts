import type { Knex } from 'knex';

/**
 * orders_count_deliveries as services/stats/db/orders_count_deliveries.sql.ts generates it from
 * FINAL_DELIVERY_STATUSES (a literal copy: a migration means the same forever). The same rows are
 * counted as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE OR REPLACE FUNCTION public.orders_count_deliveries()
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
END $function$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE OR REPLACE FUNCTION public.orders_count_deliveries()
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
    FROM new_rows WHERE delivery_status IN ('delivered', 'refused', 'returned', 'lost') UNION ALL 
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
  END $function$`);
}
