import type { SignedSender } from '../integrations/http';
import type { Logger } from '../logger';
import type { Services } from '../services';
import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

interface WhatsAppSendJob {
  callId: string;
  /** 1 for the first try. */
  attempt: number;
  /** How many times Meta throttled this message so far (its backoff). */
  throttled: number;
}

/**
 * Sends the template message of a batch of WhatsApp calls to Meta's Cloud API, side by side, through
 * the outbound guard (time-out, no redirects, the address check). The service reads each answer:
 * sent, refused (the call `failed` with Meta's message), throttled (tried again later with a
 * backoff, never failed) or tried again later like a call.requested.
 * A call already sent or ended is skipped: never a second message for one call.
 */
function whatsappSendHandler(services: Services, sender: SignedSender, logger: Logger) {
  return async (jobs: WhatsAppSendJob[]): Promise<void> => {
    const contexts = await services.whatsapp.sendContexts(jobs.map((job) => job.callId));
    const jobOf = new Map(jobs.map((job) => [job.callId, job]));
    await Promise.all(
      contexts.map(async (ctx) => {
        const { attempt, throttled } = jobOf.get(ctx.call_id) ?? { attempt: 1, throttled: 0 };
        // A number Meta throttles sends one message a minute; the others wait their turn.
        if (!(await services.whatsapp.mayTry(ctx.call_id, { callId: ctx.call_id, try: attempt, throttled }))) return;
        const result = await sender.request(services.whatsapp.request(ctx));
        const answer = await services.whatsapp.answered(ctx.call_id, attempt, result, throttled);
        if (answer.result !== 'sent') {
          const reason = answer.result === 'retry' ? answer.reason : answer.message;
          logger.warn({ callId: ctx.call_id, attempt, throttled, status: result.status, result: answer.result, reason }, 'WhatsApp message not sent');
        }
      }),
    );
  };
}

export const whatsappSend = jobHandler({
  queue: QUEUES.whatsappSend.name,
  count: 4,
  batchSize: 10,
  create: ({ services, sender, logger }) => {
    const send = whatsappSendHandler(services, sender, logger);
    return (jobs) => send(jobs.map((job) => ({ callId: job.callId, attempt: job.try ?? 1, throttled: job.throttled ?? 0 })));
  },
});
