export * from './connections';
export * from './intake';
export * from './write-back';
export * from './connect';
export { ShopifyAdmin } from './shopify-admin';
