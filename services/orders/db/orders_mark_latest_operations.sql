CREATE OR REPLACE FUNCTION public.orders_mark_latest_operations()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
  DECLARE stale uuid[];
  BEGIN
    SELECT array_agg(DISTINCT n.order_id) INTO stale FROM new_operations n
     WHERE (SELECT o.operation_id FROM orders o WHERE o.id = n.order_id) IS DISTINCT FROM n.id;
    IF stale IS NULL THEN RETURN NULL; END IF;
    EXECUTE 'UPDATE orders o SET operation_id = l.id
               FROM unnest($1::uuid[]) AS s(order_id),
                    LATERAL (SELECT p.id FROM operations p WHERE p.order_id = s.order_id
                              ORDER BY p.created_at DESC, p.id DESC LIMIT 1) l
              WHERE o.id = s.order_id AND o.operation_id IS DISTINCT FROM l.id' USING stale;
    RETURN NULL;
  END $function$
