/**
 * What an order's `flags` can hold. They are set by the database when
 * the order is inserted, by one trigger whatever path inserts it (see the risky_orders migration).
 */
export const ORDER_FLAGS = ['possible_duplicate', 'blocked_phone', 'refused_before'] as const;
export type OrderFlag = (typeof ORDER_FLAGS)[number];

const BLOCKED: OrderFlag = 'blocked_phone';

/**
 * The status of a new order's first operation, as SQL over the order's flags (`flags`: the
 * expression that holds them): cancelled for a blocked number, which nobody calls, else pending.
 * The statement that creates orders with their operations (sql.ts) and the orders_follow_operation
 * trigger (db/orders_follow_operation.sql.ts), which sets the order's op_status in the same
 * statement, both write it from here.
 */
export const firstOperationStatusSql = (flags: string) => `CASE WHEN '${BLOCKED}' = ANY(${flags}) THEN 'cancelled' ELSE 'pending' END`;
