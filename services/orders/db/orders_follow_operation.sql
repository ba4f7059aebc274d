CREATE OR REPLACE FUNCTION public.orders_follow_operation()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      -- The same statement creates the order's operation: cancelled for a blocked number, else pending.
      IF NEW.operation_id IS NOT NULL THEN
        NEW.op_status := CASE WHEN 'blocked_phone' = ANY(NEW.flags) THEN 'cancelled' ELSE 'pending' END;
      END IF;
    ELSIF NEW.operation_id IS DISTINCT FROM OLD.operation_id THEN
      NEW.op_status := (SELECT p.status FROM operations p WHERE p.id = NEW.operation_id);
    END IF;
    RETURN NEW;
  END $function$
