import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/** How often the sweep runs (it re-schedules itself; a cron each minute restarts the chain if it breaks). */
const SWEEP_EVERY_SECONDS = 15;

/**
 * The safety net: whatever fell due without a job of its own (credits granted, missed deadlines);
 * and the search index's pending list merged, so that searches read a short one.
 */
export const sweep = jobHandler({
  queue: QUEUES.sweep.name,
  count: 1,
  batchSize: 1,
  pollingIntervalSeconds: 2,
  schedule: { cron: '* * * * *', singletonKey: 'sweep', sendAtStart: true },
  create:
    ({ boss, services, logger }) =>
    async () => {
      const result = await services.sweep.run();
      const whatsapp = await services.whatsapp.sweep();
      if (whatsapp.noReply + whatsapp.unsent > 0) logger.info(whatsapp, 'WhatsApp sweep');
      if (result.requeued + result.claimsExpired + result.timedOut + result.unreachable > 0) logger.info(result, 'sweep');
      // The search keys of the orders written since, merged into the index (no request waits for it).
      await services.tidySearchIndex();
      await boss.send(QUEUES.sweep.name, {}, { startAfter: SWEEP_EVERY_SECONDS, singletonKey: 'sweep' });
    },
});
