import { DUPLICATE_WINDOW_HOURS } from '../../../db/order-fields';

/**
 * orders_flag_risky: a new order's `flags` (possible_duplicate, blocked_phone, refused_before), its
 * duplicate window the one the order's page shows lookalikes within.
 */
export const definition = `CREATE OR REPLACE FUNCTION public.orders_flag_risky()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
  DECLARE risks text[] := '{}';
  BEGIN
    -- ORDER BY the columns of orders_workspace_phone_idx: under any plan, that index is the cheapest way in.
    PERFORM 1 FROM orders o
     WHERE o.workspace_id = NEW.workspace_id AND o.phone = NEW.phone
       AND o.created_at BETWEEN NEW.created_at - interval '${DUPLICATE_WINDOW_HOURS} hours' AND NEW.created_at + interval '${DUPLICATE_WINDOW_HOURS} hours'
       AND o.status <> 'unconfirmed'
       AND order_products_key(o.products_name) = order_products_key(NEW.products_name)
     ORDER BY o.workspace_id, o.phone, o.created_at DESC, o.id DESC
     LIMIT 1;
    IF FOUND THEN
      risks := risks || 'possible_duplicate'::text;
    END IF;
    IF EXISTS (SELECT 1 FROM blocked_phones b WHERE b.workspace_id = NEW.workspace_id AND b.phone = NEW.phone) THEN
      risks := risks || 'blocked_phone'::text;
      NEW.status := 'unconfirmed';
    END IF;
    -- A customer's parcels refused or returned in the last 180 days: one probe of the partial index
    -- orders_refused_phone_idx (a customer with thousands of orders costs no more than one with one).
    PERFORM 1 FROM orders o
     WHERE o.phone = NEW.phone AND o.workspace_id = NEW.workspace_id
       AND o.delivery_status IN ('refused', 'returned')
       AND o.delivery_at >= NEW.created_at - interval '180 days'
     ORDER BY o.workspace_id, o.phone, o.delivery_at DESC
     LIMIT 1;
    IF FOUND THEN
      risks := risks || 'refused_before'::text;
    END IF;
    NEW.flags := risks;
    RETURN NEW;
  END $function$
`;
