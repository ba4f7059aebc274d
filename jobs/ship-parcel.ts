import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/**
 * Orders' parcels made at their carriers, up to 200 jobs a fetch (a fetch's end waits for its last
 * call, so fewer fetches leave the lanes idle less often): the sender groups them by account
 * and keeps each account's limits (its rate, its calls at once, its parcels per call). One poller:
 * a second one would only compete with the first for the same account's calls at once.
 */
export const shipParcel = jobHandler({
  queue: QUEUES.shipParcel.name,
  count: 1,
  batchSize: 200,
  create:
    ({ services, logger }) =>
    async (jobs) => {
      const results = await services.parcels.sendMany(jobs.map((job) => job.parcelId));
      for (const [parcelId, result] of results)
        if (result !== 'sent' && result !== 'found' && result !== 'nothing_to_do') logger.info({ parcelId, result }, 'parcel not sent yet');
    },
});
