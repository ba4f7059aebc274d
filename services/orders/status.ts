import { FINAL_OUTCOMES } from '../calls/outcomes';

/** The statuses an order can have: shared by orders, their operations and calls, stats and the pages. */
export const ORDER_STATUSES = [
  'pending',
  'processing',
  'calling',
  'confirmed',
  'unconfirmed',
  'failed',
  'no-answer',
  'postponed',
  'order-changed',
  'unrecognized',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** A person setting one of these statuses ends the order's open operation: a final outcome, or `failed`. */
export const CANCELLING_STATUSES: readonly OrderStatus[] = [...FINAL_OUTCOMES, 'failed'];
