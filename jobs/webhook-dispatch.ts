import { QUEUES } from '../db/jobs';
import { jobHandler } from './job';

/** How often due webhook deliveries are looked for (a new event's own job does not wait for this). */
const WEBHOOK_DISPATCH_EVERY_SECONDS = 1;

/** A drain job for every webhook endpoint with a delivery due; re-arms itself each second or so. */
export const webhookDispatch = jobHandler({
  queue: QUEUES.webhookDispatch.name,
  count: 1,
  batchSize: 1,
  pollingIntervalSeconds: 0.5,
  schedule: { cron: '* * * * *', singletonKey: 'webhook-dispatch', sendAtStart: true },
  create:
    ({ boss, services }) =>
    async () => {
      await services.webhooks.queueDueDrains();
      await boss.send(QUEUES.webhookDispatch.name, {}, { startAfter: WEBHOOK_DISPATCH_EVERY_SECONDS, singletonKey: 'webhook-dispatch' });
    },
});
