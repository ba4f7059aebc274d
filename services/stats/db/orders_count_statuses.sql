CREATE OR REPLACE FUNCTION public.orders_count_statuses()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO order_status_counts (workspace_id, status, n)
          SELECT workspace_id, status, count(*) FROM new_rows GROUP BY workspace_id, status;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO order_status_counts (workspace_id, status, n)
          SELECT workspace_id, status, -count(*) FROM old_rows GROUP BY workspace_id, status;
      ELSE
        INSERT INTO order_status_counts (workspace_id, status, n)
          SELECT workspace_id, status, sum(d) FROM (
            SELECT workspace_id, status, 1 AS d FROM new_rows
            UNION ALL
            SELECT workspace_id, status, -1 AS d FROM old_rows) changes
          GROUP BY workspace_id, status HAVING sum(d) <> 0;
      END IF;
      RETURN NULL;
    END $function$
