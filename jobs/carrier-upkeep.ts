import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/**
 * Each minute: confirmed orders of auto-shipping accounts shipped, cancelled orders' parcels cancelled,
 * the parcels of carriers without a push asked their status (each at most every 30 minutes), city lists a day old refreshed.
 */
export const carrierUpkeep = jobHandler({
  queue: QUEUES.carrierUpkeep.name,
  count: 1,
  batchSize: 1,
  pollingIntervalSeconds: 2,
  schedule: { cron: '* * * * *' },
  create:
    ({ services, logger }) =>
    async () => {
      const { shipped, cancelled } = await services.autoShipping.run();
      const asked = await services.carrierNews.poll();
      const refreshed = await services.carrierAccounts.refreshDueCities();
      if (shipped + cancelled + asked + refreshed > 0) logger.info({ shipped, cancelled, asked, refreshed }, 'carrier upkeep');
    },
});
