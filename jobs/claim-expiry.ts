import { QUEUES } from '../db/jobs';
import { eachJob, jobHandler } from './job';

/** A member's claim on a call runs out: the call is dropped and its order is due again. */
export const claimExpiry = jobHandler({
  queue: QUEUES.claimExpiry.name,
  count: 1,
  batchSize: 20,
  create: ({ services }) => eachJob((job) => services.calls.expireClaims(undefined, job.callId)),
});
