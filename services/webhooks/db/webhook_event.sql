CREATE OR REPLACE FUNCTION public.webhook_event(workspace uuid, event_type text, data jsonb)
 RETURNS void
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
    DECLARE message uuid;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = workspace AND enabled AND event_type = ANY(events)) THEN
        RETURN;
      END IF;
      INSERT INTO webhook_messages (workspace_id, event_type, data) VALUES (workspace, event_type, data) RETURNING id INTO message;
      INSERT INTO webhook_deliveries (workspace_id, endpoint_id, message_id, next_attempt_at)
        SELECT workspace, id, message, now() FROM webhook_endpoints WHERE workspace_id = workspace AND enabled AND event_type = ANY(events);
    END $function$
