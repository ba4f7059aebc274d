export * from './service';
export { CONNECT_ERRORS, CONNECT_KINDS, ConnectError } from './connector';
export type { ConnectKind } from './connector';
