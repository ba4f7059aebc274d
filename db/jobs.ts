import type { Knex } from 'knex';
import PgBoss from 'pg-boss';

/** The job engine's schema in our database. */
export const JOB_SCHEMA = 'pgboss';

/**
 * Our queues and their settings. Handlers are idempotent (each locks its rows and checks their state),
 * so a job run twice — a retry after a crash, or a duplicate — does no harm.
 * `expireInSeconds` is a little more than a handler's longest run: a job held by a worker killed
 * with `kill -9` comes back that long after it started.
 */
export const QUEUES = {
  /** An operation may be due: dispatch it (voice), cancel it, or wait for the calling hours. */
  operationDue: { name: 'operation-due', policy: 'short', expireInSeconds: 30, retryLimit: 10, retryDelay: 5 },
  /** Send (or re-send) a call.requested to a voice agent. */
  callRequest: { name: 'call-request', policy: 'standard', expireInSeconds: 30, retryLimit: 10, retryDelay: 5 },
  /** Send (or re-send) a WhatsApp agent's template message to Meta's Cloud API. */
  whatsappSend: { name: 'whatsapp-send', policy: 'standard', expireInSeconds: 30, retryLimit: 10, retryDelay: 5 },
  /** A WhatsApp message's reply window closes: no reply is a no-answer. */
  whatsappReplyWindow: { name: 'whatsapp-reply-window', policy: 'standard', expireInSeconds: 30, retryLimit: 10, retryDelay: 5 },
  /** A voice call's result deadline. */
  callTimeout: { name: 'call-timeout', policy: 'standard', expireInSeconds: 30, retryLimit: 10, retryDelay: 5 },
  /** A human call's claim deadline. */
  claimExpiry: { name: 'claim-expiry', policy: 'standard', expireInSeconds: 30, retryLimit: 10, retryDelay: 5 },
  /** The safety net: whatever fell due without a job of its own (credits granted, missed deadlines). */
  sweep: { name: 'sweep', policy: 'short', expireInSeconds: 60, retryLimit: 2, retryDelay: 5 },
  /** Each minute: expired sessions and idempotency keys deleted, order counters folded, the webhook log pruned. */
  housekeeping: { name: 'housekeeping', policy: 'short', expireInSeconds: 120, retryLimit: 2, retryDelay: 30 },
  /** Each day: orders past their workspace's retention anonymised (services/orders/retention.ts), in bounded batches. */
  retention: { name: 'retention', policy: 'short', expireInSeconds: 3600, retryLimit: 2, retryDelay: 300 },
  /** Each second or so: a drain job for every webhook endpoint with a delivery due. */
  webhookDispatch: { name: 'webhook-dispatch', policy: 'short', expireInSeconds: 30, retryLimit: 2, retryDelay: 1 },
  /**
   * Send one endpoint's due deliveries: one waiting at most per endpoint. Not `stately`: pg-boss
   * fetches the oldest job first, and a waiting job whose endpoint is still being drained would
   * then stop every other endpoint's jobs; the drain itself lets only one run per endpoint.
   */
  webhookEndpoint: { name: 'webhook-endpoint', policy: 'short', expireInSeconds: 200, retryLimit: 5, retryDelay: 5 },
  /**
   * Tell a store an order's outcome (two requests at most). Written by a trigger on orders (migration
   * 20261124_22, now 20261126_38_01's); the handler schedules the next try itself, on the webhooks' schedule. These
   * retries only cover a worker that failed mid-job (Postgres away, a crash).
   */
  storeWriteBack: { name: 'store-write-back', policy: 'standard', expireInSeconds: 300, retryLimit: 5, retryDelay: 30 },
  /**
   * Make one order's parcel at its carrier (services/shipping/send.ts). The handler schedules its own
   * next try (backoff, a carrier's rate window); these retries only cover a worker that failed mid-job.
   */
  /** Each minute: auto-shipping, parcels to cancel, carriers without a push polled, city lists a day old refreshed (services/shipping). */
  carrierUpkeep: { name: 'carrier-upkeep', policy: 'short', expireInSeconds: 600, retryLimit: 2, retryDelay: 30 },
  shipParcel: { name: 'ship-parcel', policy: 'standard', expireInSeconds: 120, retryLimit: 5, retryDelay: 30 },
} as const satisfies Record<string, PgBoss.Queue>;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES]['name'];

/** What a job of each queue carries (`try`: the try number of a request sent again, 1 for the first). */
export interface JobData {
  'operation-due': { operationId: string };
  'call-request': { callId: string; try?: number };
  /** `throttled`: how many times Meta said "later" (a throttling answer) so far; those do not count as tries. */
  'whatsapp-send': { callId: string; try?: number; throttled?: number };
  'whatsapp-reply-window': { callId: string };
  'call-timeout': { callId: string };
  'claim-expiry': { callId: string };
  sweep: Record<string, never>;
  housekeeping: Record<string, never>;
  retention: Record<string, never>;
  'webhook-dispatch': Record<string, never>;
  'webhook-endpoint': { endpointId: string };
  /** The outcome an order reached, told to its store; `done`: requests that succeeded on earlier tries. */
  'store-write-back': { orderId: string; status: string; attempt: number; done?: number };
  'ship-parcel': { parcelId: string };
  'carrier-upkeep': Record<string, never>;
}

export function createBoss(databaseUrl: string, options: Partial<PgBoss.ConstructorOptions> = {}): PgBoss {
  return new PgBoss({
    connectionString: databaseUrl,
    schema: JOB_SCHEMA,
    application_name: 'ocs-jobs',
    max: 4,
    // A connection attempt that hangs (Postgres restarting) must fail and be retried, never hold a poller forever.
    connectionTimeoutMillis: 10_000,
    // Expired jobs (a killed worker's) are found by maintenance: often enough to recover within 2 minutes.
    maintenanceIntervalSeconds: 30,
    ...options,
  } as PgBoss.ConstructorOptions);
}

/** Creates or migrates the job engine's schema and our queues (the release step, and every start). */
export async function prepareJobs(databaseUrl: string): Promise<void> {
  const boss = createBoss(databaseUrl, { supervise: false, schedule: false, max: 1 });
  boss.on('error', () => {});
  await boss.start();
  try {
    await createQueues(boss);
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

export async function createQueues(boss: PgBoss): Promise<void> {
  const existing = new Set((await boss.getQueues()).map((q) => q.name));
  for (const queue of Object.values(QUEUES)) {
    if (!existing.has(queue.name)) await boss.createQueue(queue.name, { ...queue });
  }
}

/**
 * pg-boss runs its SQL through this when a job must be part of our own transaction: the job exists
 * if and only if the change that needs it commits. The SQL goes to the transaction's own pg client
 * as pg-boss wrote it (`$n` parameters, some used twice), so Postgres types it exactly as for pg-boss.
 */
function executorOn(db: Knex | Knex.Transaction): PgBoss.Db {
  const onTransaction = async (trx: Knex.Transaction, text: string, values: unknown[]) => {
    // Inside a knex transaction, acquireConnection hands back that transaction's connection.
    const client = (await trx.client.acquireConnection()) as { query(text: string, values: unknown[]): Promise<{ rows: unknown[] }> };
    const result = await client.query(text, values);
    return { rows: result.rows };
  };
  return {
    executeSql(text: string, values: unknown[] = []) {
      return (db as Knex.Transaction).isTransaction
        ? onTransaction(db as Knex.Transaction, text, values)
        : db.transaction((trx) => onTransaction(trx, text, values));
    },
  };
}

/** Enqueues jobs on the caller's connection or transaction. */
export class Jobs {
  private readonly boss: PgBoss;

  constructor(knex: Knex) {
    // Never started: it only writes jobs, on our own connections.
    this.boss = new PgBoss({ db: executorOn(knex), schema: JOB_SCHEMA });
  }

  async send<Q extends QueueName>(db: Knex | Knex.Transaction, queue: Q, data: JobData[Q], options: PgBoss.SendOptions = {}): Promise<void> {
    await this.boss.send(queue, data, { ...options, db: executorOn(db) });
  }

  /** Many jobs of one queue in one statement. */
  async sendMany<Q extends QueueName>(
    db: Knex | Knex.Transaction,
    queue: Q,
    jobs: Array<{ data: JobData[Q]; startAfter?: Date; singletonKey?: string }>,
  ): Promise<void> {
    if (jobs.length === 0) return;
    await this.boss.insert(
      jobs.map((job) => ({ name: queue, ...job })),
      { db: executorOn(db) },
    );
  }
}

/**
 * SQL for a statement of ours that enqueues one job per row of `source` (a CTE or table name): the
 * row pg-boss's own `send(queue, data, { singletonKey })` inserts (plans.insertJob of pg-boss 10,
 * with the queue's settings and no per-job options), so a hot path can write its rows and their
 * jobs in one statement. `data` and `singletonKey` are SQL expressions over the source's columns;
 * `where`, when given, a condition on them that picks the rows. test/db/jobs-sql.test.ts compares its
 * rows with pg-boss's, column by column.
 */
export function insertJobsSql(queue: QueueName, source: string, data: string, singletonKey: string, where?: string): string {
  return `INSERT INTO ${JOB_SCHEMA}.job (id, name, data, priority, start_after, singleton_key, singleton_on, dead_letter,
                                 expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy)
     SELECT gen_random_uuid(), q.name, ${data}, 0, now(), ${singletonKey}, NULL, q.dead_letter,
            COALESCE(q.expire_seconds * interval '1s', interval '15 minutes'),
            now() + CAST(COALESCE((q.retention_minutes * 60)::text, '14 days') AS interval),
            COALESCE(q.retry_limit, 2),
            CASE WHEN COALESCE(q.retry_backoff, false) THEN GREATEST(q.retry_delay, 1) ELSE COALESCE(q.retry_delay, 0) END,
            COALESCE(q.retry_backoff, false),
            q.policy
       FROM ${source} JOIN ${JOB_SCHEMA}.queue q ON q.name = '${queue}'${
         where === undefined
           ? ''
           : `
      WHERE ${where}`
       }
     ON CONFLICT DO NOTHING`;
}
