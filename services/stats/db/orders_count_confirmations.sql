CREATE OR REPLACE FUNCTION public.orders_count_confirmations()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      
  INSERT INTO order_counts (workspace_id, day, store_name, status, currency, finished, blocked, n, amount, calls, called)
  SELECT workspace_id, day, store_name, status, currency, finished, blocked, sum(n), sum(amount), sum(calls), sum(called) FROM (
  SELECT workspace_id, (created_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, status, coalesce(currency, '') AS currency,
         coalesce(op_status IN ('completed', 'cancelled'), false) AS finished,
         (status = 'unconfirmed' AND 'blocked_phone' = ANY(flags) AND op_status IS NOT DISTINCT FROM 'cancelled') AS blocked,
         1 AS n, 1 * coalesce(total_amount, 0) AS amount,
         1 * ended_calls AS calls, 1 * (CASE WHEN ended_calls > 0 THEN 1 ELSE 0 END) AS called
    FROM new_rows) changes
   GROUP BY workspace_id, day, store_name, status, currency, finished, blocked HAVING sum(n) <> 0 OR sum(amount) <> 0 OR sum(calls) <> 0 OR sum(called) <> 0;
    ELSIF TG_OP = 'UPDATE' THEN
      
  INSERT INTO order_counts (workspace_id, day, store_name, status, currency, finished, blocked, n, amount, calls, called)
  SELECT workspace_id, day, store_name, status, currency, finished, blocked, sum(n), sum(amount), sum(calls), sum(called) FROM (
  SELECT workspace_id, (created_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, status, coalesce(currency, '') AS currency,
         coalesce(op_status IN ('completed', 'cancelled'), false) AS finished,
         (status = 'unconfirmed' AND 'blocked_phone' = ANY(flags) AND op_status IS NOT DISTINCT FROM 'cancelled') AS blocked,
         1 AS n, 1 * coalesce(total_amount, 0) AS amount,
         1 * ended_calls AS calls, 1 * (CASE WHEN ended_calls > 0 THEN 1 ELSE 0 END) AS called
    FROM new_rows UNION ALL 
  SELECT workspace_id, (created_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, status, coalesce(currency, '') AS currency,
         coalesce(op_status IN ('completed', 'cancelled'), false) AS finished,
         (status = 'unconfirmed' AND 'blocked_phone' = ANY(flags) AND op_status IS NOT DISTINCT FROM 'cancelled') AS blocked,
         -1 AS n, -1 * coalesce(total_amount, 0) AS amount,
         -1 * ended_calls AS calls, -1 * (CASE WHEN ended_calls > 0 THEN 1 ELSE 0 END) AS called
    FROM old_rows) changes
   GROUP BY workspace_id, day, store_name, status, currency, finished, blocked HAVING sum(n) <> 0 OR sum(amount) <> 0 OR sum(calls) <> 0 OR sum(called) <> 0;
    ELSE
      
  INSERT INTO order_counts (workspace_id, day, store_name, status, currency, finished, blocked, n, amount, calls, called)
  SELECT workspace_id, day, store_name, status, currency, finished, blocked, sum(n), sum(amount), sum(calls), sum(called) FROM (
  SELECT workspace_id, (created_at AT TIME ZONE 'Africa/Casablanca')::date AS day, store_name, status, coalesce(currency, '') AS currency,
         coalesce(op_status IN ('completed', 'cancelled'), false) AS finished,
         (status = 'unconfirmed' AND 'blocked_phone' = ANY(flags) AND op_status IS NOT DISTINCT FROM 'cancelled') AS blocked,
         -1 AS n, -1 * coalesce(total_amount, 0) AS amount,
         -1 * ended_calls AS calls, -1 * (CASE WHEN ended_calls > 0 THEN 1 ELSE 0 END) AS called
    FROM old_rows) changes
   GROUP BY workspace_id, day, store_name, status, currency, finished, blocked HAVING sum(n) <> 0 OR sum(amount) <> 0 OR sum(calls) <> 0 OR sum(called) <> 0;
    END IF;
    RETURN NULL;
  END $function$
