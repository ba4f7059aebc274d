import { FINAL_DELIVERY_STATUSES } from '../../orders';
import { SHOP_TIME_ZONE } from '../../../services/shared';

/**
 * `orders_count_deliveries()`: the statement trigger on `orders` that writes delivery_counts' delta
 * rows for the orders whose delivery is final, by FINAL_DELIVERY_STATUSES (the list every
 * TypeScript reader of the counters uses). The text is what `pg_get_functiondef` shows; a migration
 * applies a literal copy of it.
 */
const FINAL = FINAL_DELIVERY_STATUSES.map((status) => `'${status}'`).join(', ');
const KEY = 'workspace_id, day, store_name, city, currency, status, confirmer_kind, confirmer_id';
const counted = (table: string, sign: string) => `
      SELECT workspace_id, (delivery_at AT TIME ZONE '${SHOP_TIME_ZONE}')::date AS day, store_name, coalesce(city, '') AS city,
             coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind,
             delivery_confirmer_id AS confirmer_id, ${sign} AS n, ${sign} * coalesce(total_amount, 0) AS amount
        FROM ${table} WHERE delivery_status IN (${FINAL})`;

export const definition = `CREATE OR REPLACE FUNCTION public.orders_count_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO delivery_counts (${KEY}, n, amount)
    SELECT ${KEY}, sum(n), sum(amount) FROM (${counted('new_rows', '1')}
      UNION ALL${counted('old_rows', '-1')}) changes
     GROUP BY ${KEY}
    HAVING sum(n) <> 0 OR sum(amount) <> 0;
  ELSE
    INSERT INTO delivery_counts (${KEY}, n, amount)
    SELECT ${KEY}, sum(n), sum(amount) FROM (${counted('old_rows', '-1')}) changes
     GROUP BY ${KEY};
  END IF;
  RETURN NULL;
END $function$`;
