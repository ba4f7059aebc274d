export * from './service';
export { definition as ordersCountDeliveriesDefinition } from './db/orders_count_deliveries.sql';
