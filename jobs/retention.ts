import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/** Each day at 03:17 UTC (a quiet hour in Morocco): orders past their workspace's retention anonymised, in bounded batches. */
export const retention = jobHandler({
  queue: QUEUES.retention.name,
  count: 1,
  batchSize: 1,
  pollingIntervalSeconds: 10,
  schedule: { cron: '17 3 * * *' },
  create:
    ({ services, logger }) =>
    async () => {
      const done = await services.retention.pass();
      if (done.orders > 0) logger.info(done, 'retention: orders anonymised');
    },
});
