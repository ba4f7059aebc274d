CREATE OR REPLACE FUNCTION public.operations_sync_order_status()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
  BEGIN
    UPDATE orders o SET op_status = n.status
      FROM new_operations n JOIN old_operations d ON d.id = n.id
     WHERE n.status IS DISTINCT FROM d.status AND o.id = n.order_id AND o.operation_id = n.id
       AND o.op_status IS DISTINCT FROM n.status;
    RETURN NULL;
  END $function$
