export * from './service';
export * from './outcomes';
export * from './reports';
export * from './settings';
export * from './views';
export * from './ladder';
export * from './sweep';
export { FOLLOW_UP_OUTCOMES } from './follow-ups';
export { definition as callDueAtDefinition } from './db/call_due_at.sql';
