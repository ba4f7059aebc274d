import { firstOperationStatusSql } from '../flags';

/**
 * `orders_follow_operation()`: an order's op_status follows its current operation. At insert the
 * same statement creates the operation, not yet visible: its status is the one that statement gives
 * it (firstOperationStatusSql). The text is what `pg_get_functiondef` shows.
 */
export const definition = `CREATE OR REPLACE FUNCTION public.orders_follow_operation()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      -- The same statement creates the order's operation: cancelled for a blocked number, else pending.
      IF NEW.operation_id IS NOT NULL THEN
        NEW.op_status := ${firstOperationStatusSql('NEW.flags')};
      END IF;
    ELSIF NEW.operation_id IS DISTINCT FROM OLD.operation_id THEN
      NEW.op_status := (SELECT p.status FROM operations p WHERE p.id = NEW.operation_id);
    END IF;
    RETURN NEW;
  END $function$`;
