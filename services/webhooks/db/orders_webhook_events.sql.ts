import { CHANGED_FIELDS } from '../../../db/order-fields';

const changes = CHANGED_FIELDS.map((name, i) => `(${i + 1}, '${name}', NEW.${name} IS DISTINCT FROM OLD.${name})`).join(',\n          ');

/**
 * orders_webhook_events: order.created, order.updated when one of the fields db/order-fields.ts
 * marks `changed` differs (named in `changed_fields`, in their order), order.deleted.
 */
export const definition = `CREATE OR REPLACE FUNCTION public.orders_webhook_events()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
    DECLARE changed text[];
    BEGIN
      -- Most workspaces have no endpoint: one index probe, nothing built.
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace_id ELSE NEW.workspace_id END) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        PERFORM webhook_event(NEW.workspace_id, 'order.created', jsonb_build_object('order', webhook_order(NEW)));
      ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(name ORDER BY position) INTO changed FROM (VALUES
          ${changes}) AS f(position, name, differs)
        WHERE differs;
        IF changed IS NOT NULL THEN
          PERFORM webhook_event(NEW.workspace_id, 'order.updated',
            jsonb_build_object('order', webhook_order(NEW), 'previous_status', OLD.status, 'changed_fields', to_jsonb(changed)));
        END IF;
      ELSE
        PERFORM webhook_event(OLD.workspace_id, 'order.deleted', jsonb_build_object('order', webhook_order(OLD)));
        RETURN OLD;
      END IF;
      RETURN NULL;
    END $function$
`;
