import type PgBoss from 'pg-boss';
import type { Logger } from '../logger';
import { SignedSender } from '../integrations/http';
import type { Services } from '../services';
import { QUEUES } from '../db/jobs';
import { callRequestHandler } from './call-request';

/** How often the sweep runs (it re-schedules itself; a cron each minute restarts the chain if it breaks). */
export const SWEEP_EVERY_SECONDS = 15;

interface Data {
  operationId?: string;
  callId?: string;
  try?: number;
}

/**
 * Registers every handler on a started job engine. Handlers are thin: read the job, call a service.
 * Jobs of a batch run side by side, so one slow agent never holds up the others.
 */
export async function registerHandlers(boss: PgBoss, services: Services, sender: SignedSender, logger: Logger, publicBaseUrl: string): Promise<void> {
  const each = (name: string, handle: (data: Data) => Promise<unknown>) => async (jobs: PgBoss.Job<Data>[]) => {
    await Promise.all(
      jobs.map(async (job) => {
        try {
          await handle(job.data);
        } catch (err) {
          logger.error({ err, queue: name, jobId: job.id }, 'job failed; it will be retried');
          throw err;
        }
      }),
    );
  };
  const poll = { pollingIntervalSeconds: 0.5 };
  const requestCall = callRequestHandler(services, sender, logger, publicBaseUrl);

  // Due operations are dispatched a batch per transaction.
  for (let i = 0; i < 2; i += 1) {
    await boss.work<Data>(QUEUES.operationDue.name, { ...poll, batchSize: 50 }, async (jobs) => {
      try {
        await services.calls.dispatchMany(jobs.map((job) => job.data.operationId!));
      } catch (err) {
        logger.error({ err, queue: 'operation-due', jobs: jobs.length }, 'job failed; it will be retried');
        throw err;
      }
    });
  }
  // Deliveries wait on the network: several pollers, so slow agents never block the rest.
  for (let i = 0; i < 8; i += 1) {
    await boss.work<Data>(QUEUES.callRequest.name, { ...poll, batchSize: 10 }, async (jobs) => {
      try {
        await requestCall(jobs.map((job) => ({ callId: job.data.callId!, attempt: job.data.try ?? 1 })));
      } catch (err) {
        logger.error({ err, queue: 'call-request', jobs: jobs.length }, 'job failed; it will be retried');
        throw err;
      }
    });
  }
  await boss.work<Data>(QUEUES.callTimeout.name, { ...poll, batchSize: 20 }, each('call-timeout', (d) => services.calls.fail(d.callId!, 'no result from agent', true)));
  await boss.work<Data>(QUEUES.claimExpiry.name, { ...poll, batchSize: 20 }, each('claim-expiry', (d) => services.calls.expireClaims(undefined, d.callId)));
  await boss.work<Data>(QUEUES.sweep.name, { pollingIntervalSeconds: 2 }, each('sweep', async () => {
    const result = await services.sweep.run();
    if (result.requeued + result.claimsExpired + result.timedOut > 0) logger.info(result, 'sweep');
    await boss.send(QUEUES.sweep.name, {}, { startAfter: SWEEP_EVERY_SECONDS, singletonKey: 'sweep' });
  }));
  await boss.schedule(QUEUES.sweep.name, '* * * * *', {}, { singletonKey: 'sweep' });
  await boss.send(QUEUES.sweep.name, {}, { singletonKey: 'sweep' });
}
