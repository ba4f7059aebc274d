import { QUEUES } from '../db/jobs';
import { eachJob, jobHandler } from './job';

/** One order's parcel made at its carrier; the account's limits (rate, calls at once) are kept by the sender. */
export const shipParcel = jobHandler({
  queue: QUEUES.shipParcel.name,
  count: 2,
  batchSize: 4,
  create: ({ services, logger }) =>
    eachJob(async ({ parcelId }) => {
      const result = await services.parcels.send(parcelId);
      if (result !== 'sent' && result !== 'found' && result !== 'nothing_to_do') logger.info({ parcelId, result }, 'parcel not sent yet');
    }),
});
