import type { Logger } from '../logger';
import type { SignedSender } from '../integrations/http';
import type { Services } from '../services';

/** After the first try, a call.requested is retried after about 10 s, 1 min, 5 min and 15 min (spec §8.1). */
export const RETRY_DELAYS_SECONDS = [10, 60, 300, 900];

/**
 * Sends (or re-sends, with the same webhook-id) a call.requested. Accepted → the result is awaited;
 * refused after the last try → the call ends `failed`, "agent unreachable", nothing charged.
 */
export function callRequestHandler(services: Services, sender: SignedSender, logger: Logger, publicBaseUrl: string) {
  return async (callId: string, attempt: number): Promise<void> => {
    const ctx = await services.calls.requestContext(callId);
    if (!ctx) return; // ended or already accepted: never a second call.requested
    const body = JSON.stringify({
      type: 'call.requested',
      timestamp: new Date().toISOString(),
      data: {
        call_id: ctx.id,
        operation_id: ctx.operation_id,
        attempt: ctx.attempt,
        order: {
          id: ctx.order_id, client_name: ctx.client_name, phone: ctx.phone, store_name: ctx.store_name,
          products_name: ctx.products_name, address: ctx.address ?? null, status: ctx.status,
          created_at: new Date(ctx.created_at).toISOString(),
        },
        workspace: { id: ctx.workspace_id, name: ctx.workspace_name },
        callback_url: `${publicBaseUrl}/hooks/calls/${ctx.id}`,
        respond_by: new Date(Date.now() + services.calls.resultTimeoutMinutes * 60_000).toISOString(),
      },
    });
    const result = await sender.send({ url: ctx.endpoint_url, secret: ctx.secret, messageId: ctx.request_id, body });
    if (result.delivered) {
      await services.calls.accepted(callId);
      return;
    }
    logger.warn({ callId, attempt, status: result.status, error: result.error }, 'call.requested not accepted');
    const delay = RETRY_DELAYS_SECONDS[attempt - 1];
    if (delay !== undefined) await services.calls.retryRequest(callId, attempt + 1, delay);
    else await services.calls.fail(callId, 'agent unreachable');
  };
}
