export * from './service';
export { CONNECT_ERRORS, ConnectError } from './connector';
