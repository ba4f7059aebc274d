import { AsyncLocalStorage } from 'node:async_hooks';

/** Who acts and from where: the signed-in user, the client's address and its browser (as sent). */
export interface AuditOrigin {
  actorId: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** The system's own work (the worker, the CLI, a store's or carrier's message): no one, from nowhere. */
const SYSTEM: AuditOrigin = { actorId: null, ip: null, userAgent: null };

/**
 * The origin of the request being handled, read when an event is recorded (the user is known only
 * once the session is read). Set once per request by the routes (`routes/middleware/audit-origin.ts`),
 * so a service that records an event in its transaction need not be handed the request.
 */
const current = new AsyncLocalStorage<() => AuditOrigin>();

/** Runs `work` (the rest of a request) with `origin` as who acts and from where. */
export function withOrigin<T>(origin: () => AuditOrigin, work: () => T): T {
  return current.run(origin, work);
}

/** Who acts now: the request's user and address, or the system outside a request. */
export function currentOrigin(): AuditOrigin {
  return current.getStore()?.() ?? SYSTEM;
}
