import { FINAL_DELIVERY_STATUSES } from '../../orders';
import { SHOP_TIME_ZONE } from '../../../services/shared';

/**
 * `orders_count_deliveries()`: the statement trigger on `orders` that writes the delivery counters'
 * delta rows for the orders whose delivery is final, by FINAL_DELIVERY_STATUSES (the list every
 * TypeScript reader of the counters uses), in one statement: the statement's changes grouped once,
 * then written to
 * - delivery_counts: per Morocco day, store, city, currency, status and confirmer (the whole grain);
 * - delivery_day_counts: per Morocco day, currency, status and confirmer (no store, no city: by day,
 *   by confirmer and the team's figures read fewer rows);
 * - delivery_month_counts: delivery_counts' grain per Morocco month (a long period reads its whole
 *   months there, and only its ragged ends by day).
 * The text is what `pg_get_functiondef` shows; a migration applies a literal copy of it.
 */
const FINAL = FINAL_DELIVERY_STATUSES.map((status) => `'${status}'`).join(', ');
const KEY = 'workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id';
const DAY_KEY = 'workspace_id, day, currency, status, confirmer_kind, confirmer_id';
const MONTH_KEY = 'workspace_id, month, store_name, city, currency, status, confirmer_kind, confirmer_id';
const counted = (table: string, sign: string) => `
        SELECT workspace_id, (delivery_at AT TIME ZONE '${SHOP_TIME_ZONE}')::date AS day, store_name, coalesce(city, '') AS city,
               coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
               delivery_confirmer_id AS confirmer_id, ${sign} AS n, ${sign} * coalesce(total_amount, 0) AS amount
          FROM ${table} WHERE delivery_status IN (${FINAL})`;
const written = (changes: string) => `WITH changes AS (
      SELECT ${KEY}, sum(n) AS n, sum(amount) AS amount FROM (${changes}) counted
       GROUP BY ${KEY}
      HAVING sum(n) <> 0 OR sum(amount) <> 0),
    by_day AS (
      INSERT INTO delivery_day_counts (${DAY_KEY}, n, amount)
      SELECT ${DAY_KEY}, sum(n), sum(amount) FROM changes
       GROUP BY ${DAY_KEY}
      HAVING sum(n) <> 0 OR sum(amount) <> 0),
    by_month AS (
      INSERT INTO delivery_month_counts (${MONTH_KEY}, n, amount)
      SELECT ${MONTH_KEY}, sum(n), sum(amount) FROM (SELECT *, date_trunc('month', day::timestamp)::date AS month FROM changes) c
       GROUP BY ${MONTH_KEY}
      HAVING sum(n) <> 0 OR sum(amount) <> 0)
    INSERT INTO delivery_counts (${KEY}, n, amount)
    SELECT ${KEY}, n, amount FROM changes`;

export const definition = `CREATE OR REPLACE FUNCTION public.orders_count_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    ${written(`${counted('new_rows', '1')}
        UNION ALL${counted('old_rows', '-1')}`)};
  ELSE
    ${written(counted('old_rows', '-1'))};
  END IF;
  RETURN NULL;
END $function$`;
