export * from './connections';
export * from './intake';
export * from './write-back';
export * from './connect';
export { CONNECT_KINDS, ORDER_SOURCES, STORE_KINDS, STORE_PLATFORMS, storePlatform, WRITE_BACK_KINDS } from './platforms/registry';
export type { ConnectKind } from './platforms/registry';
export { ShopifyAdmin } from './platforms/shopify/admin';
/** The write-back trigger's function as the database must hold it (generated from the registry). */
export { definition as writeBackFunction } from './db/orders_store_write_back.sql';
