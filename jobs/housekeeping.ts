import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/** Each minute: what expires or piles up, deleted or folded (services' housekeeping). */
export const housekeeping = jobHandler({
  queue: QUEUES.housekeeping.name,
  count: 1,
  batchSize: 1,
  pollingIntervalSeconds: 2,
  schedule: { cron: '* * * * *' },
  create:
    ({ services, logger }) =>
    async () => {
      const done = await services.housekeeping();
      if (done.sessions + done.idempotencyKeys > 0) logger.info(done, 'housekeeping');
    },
});
