export * as audit from './record';
export { AUDIT_ACTIONS } from './record';
export { withOrigin } from './origin';
export { AuditService, AUDIT_PAGE_SIZE } from './service';
export type { AuditPage } from './service';
