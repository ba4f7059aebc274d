import { QUEUES } from '../db/jobs';
import { msg } from '../services/shared';
import { eachJob, jobHandler } from './job';

/** A voice call whose agent never reported its result ends `failed`. */
export const callTimeout = jobHandler({
  queue: QUEUES.callTimeout.name,
  count: 1,
  batchSize: 20,
  create: ({ services }) => eachJob((job) => services.calls.fail(job.callId, msg('callNoResult'), 'result')),
});
