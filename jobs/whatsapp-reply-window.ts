import { QUEUES } from '../db/jobs';
import { eachJob, jobHandler } from './job';

/** A WhatsApp message's reply window closes: no reply is a no-answer. */
export const whatsappReplyWindow = jobHandler({
  queue: QUEUES.whatsappReplyWindow.name,
  count: 1,
  batchSize: 20,
  create: ({ services }) => eachJob((job) => services.whatsapp.closeWindow(job.callId)),
});
