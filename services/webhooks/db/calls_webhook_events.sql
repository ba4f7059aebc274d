CREATE OR REPLACE FUNCTION public.calls_webhook_events()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
    DECLARE o orders;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = NEW.workspace_id) THEN RETURN NULL; END IF;
      SELECT orders.* INTO o FROM orders JOIN operations op ON op.order_id = orders.id WHERE op.id = NEW.operation_id;
      IF FOUND THEN
        PERFORM webhook_event(NEW.workspace_id, 'call.ended', jsonb_build_object('order', webhook_order(o), 'call', to_jsonb(NEW)));
      END IF;
      RETURN NULL;
    END $function$
