import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/** One endpoint's due deliveries: each endpoint drained by its own job, so a slow one holds one slot, no more. */
export const webhookEndpoint = jobHandler({
  queue: QUEUES.webhookEndpoint.name,
  count: 10,
  batchSize: 1,
  pollingIntervalSeconds: 1,
  create:
    ({ services, sender }) =>
    (jobs) =>
      Promise.all(jobs.map((job) => services.webhooks.drain(job.endpointId, (message) => sender.send(message)))),
});
