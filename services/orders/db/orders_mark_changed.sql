CREATE OR REPLACE FUNCTION public.orders_mark_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      NEW.changed_at := now();
      RETURN NEW;
    END $function$
