import { msg, WorkspaceSlots } from '../services/shared';
import type { Logger } from '../logger';
import type { DeliveryResult, SignedSender } from '../integrations/http';
import type { Services } from '../services';
import { callRequestedOrder } from '../services/orders';
import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/** After the first try, a call.requested is retried after about 10 s, 1 min, 5 min and 15 min. */
const RETRY_DELAYS_SECONDS = [10, 60, 300, 900];
/** A call of a workspace that already has its requests in flight waits this long for one to end... */
const SLOT_WAIT_MS = 500;
/** ...then goes back to the queue for this long, as the same try, and the poller serves others. */
const BUSY_DELAY_SECONDS = 5;

export interface CallRequestJob {
  callId: string;
  /** 1 for the first try. */
  attempt: number;
}

/**
 * Sends (or re-sends, with the same webhook-id) the call.requested of a batch of calls, side by side.
 * Accepted → the result is awaited; refused → tried again later, and after the last try the call
 * ends `failed`, "agent unreachable", nothing charged. A call already accepted or ended is skipped:
 * never a second call.requested. A workspace has at most WORKSPACE_IN_FLIGHT requests in flight in
 * this process: an agent that never answers holds that many pollers, never all of them.
 */
export function callRequestHandler(services: Services, sender: SignedSender, logger: Logger, publicBaseUrl: string) {
  const inFlight = new WorkspaceSlots();
  return async (jobs: CallRequestJob[]): Promise<void> => {
    const contexts = await services.calls.requestContexts(jobs.map((job) => job.callId));
    const attemptOf = new Map(jobs.map((job) => [job.callId, job.attempt]));
    await Promise.all(
      contexts.map(async (ctx) => {
        const body = JSON.stringify({
          type: 'call.requested',
          timestamp: new Date().toISOString(),
          data: {
            call_id: ctx.id,
            operation_id: ctx.operation_id,
            attempt: ctx.attempt,
            order: callRequestedOrder({ ...ctx, id: ctx.order_id }),
            workspace: { id: ctx.workspace_id, name: ctx.workspace_name },
            callback_url: `${publicBaseUrl}/hooks/calls/${ctx.id}`,
            respond_by: new Date(Date.now() + services.calls.resultTimeoutMinutes * 60_000).toISOString(),
          },
        });
        const attempt = attemptOf.get(ctx.id) ?? 1;
        if (!(await inFlight.take(ctx.workspace_id, SLOT_WAIT_MS))) {
          await services.calls.retryRequest(ctx.id, attempt, BUSY_DELAY_SECONDS);
          return;
        }
        let result: DeliveryResult;
        try {
          result = await sender.send({ url: ctx.endpoint_url, secret: ctx.secret, messageId: ctx.request_id, body });
        } finally {
          inFlight.give(ctx.workspace_id);
        }
        // Recorded at once, so that a slow agent elsewhere in the batch holds up nothing but its own calls.
        if (result.delivered) {
          await services.calls.accepted([ctx.id]);
          return;
        }
        logger.warn({ callId: ctx.id, attempt, status: result.status, error: result.error }, 'call.requested not accepted');
        const delay = RETRY_DELAYS_SECONDS[attempt - 1];
        if (delay !== undefined) await services.calls.retryRequest(ctx.id, attempt + 1, delay);
        else await services.calls.fail(ctx.id, msg('callAgentUnreachable'));
      }),
    );
  };
}

/** Deliveries wait on the network, side by side. */
export const callRequest = jobHandler({
  queue: QUEUES.callRequest.name,
  count: 8,
  batchSize: 10,
  create: ({ services, sender, logger, publicBaseUrl }) => {
    const requestCall = callRequestHandler(services, sender, logger, publicBaseUrl);
    return (jobs) => requestCall(jobs.map((job) => ({ callId: job.callId, attempt: job.try ?? 1 })));
  },
});
