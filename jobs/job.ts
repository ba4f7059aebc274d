import type PgBoss from 'pg-boss';
import type { JobData, QueueName } from '../db/jobs';
import type { SignedSender } from '../integrations/http';
import type { Logger } from '../logger';
import type { Services } from '../services';

/** What a handler may use: the services, the outbound sender, the log, the job engine itself. */
export interface JobContext {
  boss: PgBoss;
  services: Services;
  sender: SignedSender;
  logger: Logger;
  publicBaseUrl: string;
}

/**
 * One queue's handler: how many pollers take how many jobs at a time, and what a batch of jobs'
 * payloads does (made once per worker, so a handler may keep state such as in-flight slots).
 */
export interface JobHandler<Q extends QueueName = QueueName> {
  queue: Q;
  /** Independent pollers: a batch held up by a slow agent holds up only its own poller. */
  count: number;
  batchSize: number;
  pollingIntervalSeconds?: number;
  /** A cron (and the job sent at start): queues that re-arm themselves, restarted each minute if the chain breaks. */
  schedule?: { cron: string; singletonKey?: string; sendAtStart?: boolean };
  create: (context: JobContext) => (jobs: Array<JobData[Q]>) => Promise<unknown>;
}

export function jobHandler<Q extends QueueName>(handler: JobHandler<Q>): JobHandler<Q> {
  return handler;
}

/** A batch handled one job at a time, side by side. */
export function eachJob<T>(handle: (data: T) => Promise<unknown>): (jobs: T[]) => Promise<unknown> {
  return (jobs) => Promise.all(jobs.map(handle));
}
