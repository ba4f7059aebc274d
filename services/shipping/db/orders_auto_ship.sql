CREATE OR REPLACE FUNCTION public.orders_auto_ship()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO auto_ship_orders (order_id, workspace_id)
      SELECT NEW.id, NEW.workspace_id
       WHERE EXISTS (SELECT 1 FROM carrier_accounts a WHERE a.workspace_id = NEW.workspace_id AND a.auto_ship)
      ON CONFLICT (order_id) DO NOTHING;
      RETURN NULL;
    END $function$
