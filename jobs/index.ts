import type PgBoss from 'pg-boss';
import type { JobData, QueueName } from '../db/jobs';
import type { SignedSender } from '../integrations/http';
import type { Logger } from '../logger';
import type { Services } from '../services';
import { callRequest } from './call-request';
import { callTimeout } from './call-timeout';
import { carrierUpkeep } from './carrier-upkeep';
import { claimExpiry } from './claim-expiry';
import { housekeeping } from './housekeeping';
import type { JobContext, JobHandler } from './job';
import { operationDue } from './operation-due';
import { retention } from './retention';
import { shipParcel } from './ship-parcel';
import { storeWriteBack } from './store-write-back';
import { sweep } from './sweep';
import { webhookDispatch } from './webhook-dispatch';
import { webhookEndpoint } from './webhook-endpoint';
import { whatsappReplyWindow } from './whatsapp-reply-window';
import { whatsappSend } from './whatsapp-send';

/** Every queue's handler, one file each. */
export const HANDLERS: ReadonlyArray<JobHandler<QueueName>> = [
  operationDue,
  callRequest,
  whatsappSend,
  whatsappReplyWindow,
  callTimeout,
  claimExpiry,
  sweep,
  housekeeping,
  retention,
  webhookEndpoint,
  storeWriteBack,
  webhookDispatch,
  shipParcel,
  carrierUpkeep,
] as ReadonlyArray<JobHandler<QueueName>>;

/** Registers every handler on a started job engine, then the schedules of the queues that re-arm themselves. */
export async function registerHandlers(boss: PgBoss, services: Services, sender: SignedSender, logger: Logger, publicBaseUrl: string): Promise<void> {
  const context: JobContext = { boss, services, sender, logger, publicBaseUrl };
  for (const handler of HANDLERS) {
    const { queue, count, batchSize, pollingIntervalSeconds = 0.5 } = handler;
    const handle = handler.create(context);
    for (let i = 0; i < count; i += 1) {
      let workerId = '';
      workerId = await boss.work<JobData[QueueName]>(queue, { pollingIntervalSeconds, batchSize }, async (jobs) => {
        // pg-boss waits out its polling interval after every batch; after a full one, more are waiting.
        if (jobs.length === batchSize) boss.notifyWorker(workerId);
        try {
          await handle(jobs.map((job) => job.data));
        } catch (err) {
          logger.error({ err, queue, jobs: jobs.length }, 'job failed; it will be retried');
          throw err;
        }
      });
    }
  }
  for (const { queue, schedule } of HANDLERS) {
    if (!schedule) continue;
    const key = schedule.singletonKey ? { singletonKey: schedule.singletonKey } : {};
    await boss.schedule(queue, schedule.cron, {}, key);
    if (schedule.sendAtStart) await boss.send(queue, {}, key);
  }
}
