export { MAX_DAYS, readPeriod, StatsService } from './service';
export { spansOf } from './period';
export type { StatsPage } from './service';
export { TEAM_CSV_COLUMNS, teamCsv } from './team';
export { definition as ordersCountDeliveriesDefinition } from './db/orders_count_deliveries.sql';
