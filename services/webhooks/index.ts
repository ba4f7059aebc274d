export * from './service';
export { createSchema, MAX_ENDPOINTS, updateSchema, WEBHOOK_EVENTS } from './endpoints';
export { messageBody, RETRY_DELAYS_SECONDS } from './delivery';
