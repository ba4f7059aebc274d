import { WRITE_BACK_SECRETS } from '../../db/secrets-at-rest';
import type { Secrets } from '../../integrations/secrets';

/**
 * How a connection's row is written and named, for the service and every platform's steps alike
 * (a leaf: the platforms' folders use it without going through the connections' service).
 */

/** A connection's write-back credentials as stored: each of their secrets sealed (the rest, as expiries and `set_status`, in clear). */
export function sealedWriteBack<T extends object>(secrets: Secrets, credentials: T): T {
  return secrets.sealFields(credentials, WRITE_BACK_SECRETS);
}

/** A connection's write-back credentials as read, each of their secrets opened. */
export function openedWriteBack<T extends object>(secrets: Secrets, stored: T): T {
  return secrets.openFields(stored, WRITE_BACK_SECRETS);
}

/** A store connection as the audit log names it. */
export function storeTarget(id: string, name: string) {
  return { type: 'store' as const, id, label: name };
}
