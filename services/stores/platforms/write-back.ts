import type { DeliveryResult, OutboundRequest } from '../../../integrations/http';

/**
 * What a store is told when one of its orders reaches its outcome, whatever the platform: the steps
 * (a request, and how the store's answer reads) each platform's `write-back.ts` builds from plain
 * values, nothing of our tables; the credentials go into headers only.
 */
export type Outcome = 'confirmed' | 'unconfirmed';

export interface WriteBackOrder {
  externalId: string;
  status: Outcome;
  /** What the call that reached the outcome noted, if it did. */
  summary: string | null;
}

/** Why a step did not do what we asked, in fixed words the service gives a code: the store, and what happened. */
export type WriteBackFailure =
  | { reason: 'unreachable'; store: string; error: string }
  | { reason: 'answered'; store: string; status: number }
  | { reason: 'unreadable' | 'errors' | 'tagRefused'; store: string };

/** One request and how to read its answer: null when it did what we asked, else why not. */
export interface WriteBackStep {
  request: OutboundRequest;
  failure(result: DeliveryResult): WriteBackFailure | null;
}

/** Why a request got no usable answer. */
export function transportFailure(store: string, result: DeliveryResult): WriteBackFailure | null {
  if (result.delivered) return null;
  return result.status === null
    ? { reason: 'unreachable', store, error: result.error ?? 'connection failed' }
    : { reason: 'answered', store, status: result.status };
}
