CREATE OR REPLACE FUNCTION public.orders_cancel_parcels()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      UPDATE parcels SET cancel_requested_at = now()
       WHERE order_id = OLD.id AND state IN ('queued', 'sending', 'sent', 'uncertain') AND cancel_requested_at IS NULL;
      IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
      RETURN NULL;
    END $function$
