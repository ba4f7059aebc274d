import { QUEUES } from '../db/jobs';
import type { WriteBackJob } from '../services/stores';
import { eachJob, jobHandler } from './job';

/** An order's outcome told to its store: a few requests at a time, each with its own time-out. */
export const storeWriteBack = jobHandler({
  queue: QUEUES.storeWriteBack.name,
  count: 2,
  batchSize: 5,
  create: ({ services, sender, logger }) =>
    eachJob(async (data) => {
      // Written by the orders trigger with an outcome as its status.
      const job = data as WriteBackJob;
      const done = await services.storeWriteBack.perform(job, (request) => sender.request(request));
      if ('reason' in done) logger.warn({ orderId: job.orderId, attempt: job.attempt, result: done.result, reason: done.reason }, 'store write-back not done');
    }),
});
