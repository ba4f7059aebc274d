import { WEBHOOK_ORDER_SQL } from '../../../db/order-fields';

/** webhook_order: an order as a webhook event stores it, with the webhook fields of db/order-fields.ts. */
export const definition = `CREATE OR REPLACE FUNCTION public.webhook_order(o orders)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
    SELECT jsonb_build_object(
      ${WEBHOOK_ORDER_SQL.map(({ name, sql }) => `'${name}', ${sql}`).join(',\n      ')})
  $function$
`;
