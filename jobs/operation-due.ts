import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/** Due operations are dispatched (or cancelled, or left for the calling hours) a batch per transaction. */
export const operationDue = jobHandler({
  queue: QUEUES.operationDue.name,
  count: 2,
  batchSize: 50,
  create:
    ({ services }) =>
    (jobs) =>
      services.calls.dispatchMany(jobs.map((job) => job.operationId)),
});
