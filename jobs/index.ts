import { msg } from '../services/messages';
import type PgBoss from 'pg-boss';
import type { Logger } from '../logger';
import type { SignedSender } from '../integrations/http';
import type { SignedMessage } from '../integrations/http';
import type { Services } from '../services';
import { QUEUES } from '../db/jobs';
import type { WriteBackJob } from '../services/store-write-back';
import { callRequestHandler } from './call-request';
import { whatsappSendHandler } from './whatsapp-send';

/** How often the sweep runs (it re-schedules itself; a cron each minute restarts the chain if it breaks). */
const SWEEP_EVERY_SECONDS = 15;

/** How often due webhook deliveries are looked for (a new event's own job does not wait for this). */
const WEBHOOK_DISPATCH_EVERY_SECONDS = 1;

interface Data extends Partial<WriteBackJob> {
  endpointId?: string;
  operationId?: string;
  callId?: string;
  try?: number;
}

interface Pollers {
  queue: string;
  /** Independent pollers: a batch held up by a slow agent holds up only its own poller. */
  count: number;
  batchSize: number;
  pollingIntervalSeconds?: number;
  handle: (jobs: PgBoss.Job<Data>[]) => Promise<unknown>;
}

/**
 * Registers every handler on a started job engine. Handlers are thin: read the jobs, call a service.
 */
export async function registerHandlers(boss: PgBoss, services: Services, sender: SignedSender, logger: Logger, publicBaseUrl: string): Promise<void> {
  const register = async ({ queue, count, batchSize, pollingIntervalSeconds = 0.5, handle }: Pollers) => {
    for (let i = 0; i < count; i += 1) {
      let workerId = '';
      workerId = await boss.work<Data>(queue, { pollingIntervalSeconds, batchSize }, async (jobs) => {
        // pg-boss waits out its polling interval after every batch; after a full one, more are waiting.
        if (jobs.length === batchSize) boss.notifyWorker(workerId);
        try {
          await handle(jobs);
        } catch (err) {
          logger.error({ err, queue, jobs: jobs.length }, 'job failed; it will be retried');
          throw err;
        }
      });
    }
  };
  const each = (handle: (data: Data) => Promise<unknown>) => (jobs: PgBoss.Job<Data>[]) => Promise.all(jobs.map((job) => handle(job.data)));
  const requestCall = callRequestHandler(services, sender, logger, publicBaseUrl);

  // Due operations are dispatched a batch per transaction.
  await register({
    queue: QUEUES.operationDue.name,
    count: 2,
    batchSize: 50,
    handle: (jobs) => services.calls.dispatchMany(jobs.map((job) => job.data.operationId!)),
  });
  // Deliveries wait on the network, side by side.
  await register({
    queue: QUEUES.callRequest.name,
    count: 8,
    batchSize: 10,
    handle: (jobs) => requestCall(jobs.map((job) => ({ callId: job.data.callId!, attempt: job.data.try ?? 1 }))),
  });
  const sendWhatsApp = whatsappSendHandler(services, sender, logger);
  await register({
    queue: QUEUES.whatsappSend.name,
    count: 4,
    batchSize: 10,
    handle: (jobs) => sendWhatsApp(jobs.map((job) => ({ callId: job.data.callId!, attempt: job.data.try ?? 1 }))),
  });
  await register({ queue: QUEUES.whatsappReplyWindow.name, count: 1, batchSize: 20, handle: each((d) => services.whatsapp.closeWindow(d.callId!)) });
  await register({
    queue: QUEUES.callTimeout.name,
    count: 1,
    batchSize: 20,
    handle: each((d) => services.calls.fail(d.callId!, msg('callNoResult'), 'result')),
  });
  await register({ queue: QUEUES.claimExpiry.name, count: 1, batchSize: 20, handle: each((d) => services.calls.expireClaims(undefined, d.callId)) });
  await register({
    queue: QUEUES.sweep.name,
    count: 1,
    batchSize: 1,
    pollingIntervalSeconds: 2,
    handle: async () => {
      const result = await services.sweep.run();
      const whatsapp = await services.whatsapp.sweep();
      if (whatsapp.noReply + whatsapp.unsent > 0) logger.info(whatsapp, 'WhatsApp sweep');
      if (result.requeued + result.claimsExpired + result.timedOut + result.unreachable > 0) logger.info(result, 'sweep');
      await boss.send(QUEUES.sweep.name, {}, { startAfter: SWEEP_EVERY_SECONDS, singletonKey: 'sweep' });
    },
  });
  await register({
    queue: QUEUES.housekeeping.name,
    count: 1,
    batchSize: 1,
    pollingIntervalSeconds: 2,
    handle: async () => {
      const done = await services.housekeeping();
      if (done.sessions + done.idempotencyKeys > 0) logger.info(done, 'housekeeping');
    },
  });
  await boss.schedule(QUEUES.housekeeping.name, '* * * * *', {});

  // Webhooks: each endpoint drained by its own job, so a slow one holds one of these slots, no more.
  const send = (message: SignedMessage) => sender.send(message);
  await register({
    queue: QUEUES.webhookEndpoint.name,
    count: 10,
    batchSize: 1,
    pollingIntervalSeconds: 1,
    handle: (jobs) => services.webhooks.drain(jobs[0].data.endpointId!, send),
  });
  // An order's outcome told to its store: a few requests at a time, each with its own time-out.
  await register({
    queue: QUEUES.storeWriteBack.name,
    count: 2,
    batchSize: 5,
    handle: each(async (d) => {
      const job = d as WriteBackJob;
      const done = await services.storeWriteBack.perform(job, (request) => sender.request(request));
      if ('reason' in done) logger.warn({ orderId: job.orderId, attempt: job.attempt, result: done.result, reason: done.reason }, 'store write-back not done');
    }),
  });
  await register({
    queue: QUEUES.webhookDispatch.name,
    count: 1,
    batchSize: 1,
    pollingIntervalSeconds: 0.5,
    handle: async () => {
      await services.webhooks.queueDueDrains();
      await boss.send(QUEUES.webhookDispatch.name, {}, { startAfter: WEBHOOK_DISPATCH_EVERY_SECONDS, singletonKey: 'webhook-dispatch' });
    },
  });
  await boss.schedule(QUEUES.webhookDispatch.name, '* * * * *', {}, { singletonKey: 'webhook-dispatch' });
  await boss.send(QUEUES.webhookDispatch.name, {}, { singletonKey: 'webhook-dispatch' });
  await boss.schedule(QUEUES.sweep.name, '* * * * *', {}, { singletonKey: 'sweep' });
  await boss.send(QUEUES.sweep.name, {}, { singletonKey: 'sweep' });
}
