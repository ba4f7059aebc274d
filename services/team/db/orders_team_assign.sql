CREATE OR REPLACE FUNCTION public.orders_team_assign()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
  BEGIN
    IF NEW.assigned_to IS NULL AND coalesce(NEW.status, 'pending') = 'pending' THEN
      NEW.assigned_to := team_assign_order(NEW.workspace_id, NEW.store_name);
      IF NEW.assigned_to IS NOT NULL THEN NEW.assigned_at := now(); END IF;
    END IF;
    RETURN NEW;
  END $function$
