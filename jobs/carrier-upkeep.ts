import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/** Every five minutes: the parcels of carriers without a push asked their status, and city lists a day old refreshed. */
export const carrierUpkeep = jobHandler({
  queue: QUEUES.carrierUpkeep.name,
  count: 1,
  batchSize: 1,
  pollingIntervalSeconds: 2,
  schedule: { cron: '*/5 * * * *' },
  create:
    ({ services, logger }) =>
    async () => {
      const asked = await services.carrierNews.poll();
      const refreshed = await services.carrierAccounts.refreshDueCities();
      if (asked > 0 || refreshed > 0) logger.info({ asked, refreshed }, 'carrier upkeep');
    },
});
