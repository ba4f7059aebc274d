/**
 * What an order's `flags` can hold. They are set by the database when
 * the order is inserted, by one trigger whatever path inserts it (see the risky_orders migration).
 */
export const ORDER_FLAGS = ['possible_duplicate', 'blocked_phone', 'refused_before'] as const;
export type OrderFlag = (typeof ORDER_FLAGS)[number];
