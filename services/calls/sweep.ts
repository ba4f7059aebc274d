import { msg } from '../../services/shared';
import type { Knex } from 'knex';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import { ACCEPT_WITHIN_MINUTES } from './service';
import type { CallService } from './service';

const BATCH = 500;

/**
 * The worker's safety net, run every few seconds by the job engine: due voice and WhatsApp operations get their
 * job again (those waiting for credits go out soon after a grant; the queue's singleton policy keeps
 * one job per operation), expired claims are dropped, overdue results time out even if their
 * own jobs were lost, and a call no agent accepted in time ends (its request job may have run out
 * of tries without ending it), so no call stays open and keeps its credit reserved.
 */
export class SweepService {
  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    private readonly calls: CallService,
  ) {}

  async run(): Promise<{ requeued: number; claimsExpired: number; timedOut: number; unreachable: number }> {
    const due = await this.knex('operations as op')
      .join('agents as a', 'a.id', 'op.agent_id')
      .where({ 'op.status': 'pending' })
      .whereIn('a.kind', ['voice', 'whatsapp'])
      .where('op.next_attempt_at', '<=', this.knex.fn.now())
      .orderBy('op.next_attempt_at')
      .limit(BATCH)
      .pluck('op.id');
    for (const operationId of due) await this.jobs.send(this.knex, QUEUES.operationDue.name, { operationId }, { singletonKey: operationId });

    const claimsExpired = await this.calls.expireClaims();

    const overdue = await this.knex('calls')
      .where({ kind: 'voice' })
      .whereNull('ended_at')
      .whereNull('dropped_at')
      .where('result_due_at', '<=', this.knex.fn.now())
      .limit(BATCH)
      .pluck('id');
    let timedOut = 0;
    for (const callId of overdue) if (await this.calls.fail(callId, msg('callNoResult'), 'result')) timedOut += 1;

    const unaccepted = await this.knex('calls')
      .where({ kind: 'voice' })
      .whereNull('ended_at')
      .whereNull('dropped_at')
      .whereNull('accepted_at')
      .where('started_at', '<=', this.knex.raw(`now() - make_interval(mins => ?)`, [ACCEPT_WITHIN_MINUTES]))
      .limit(BATCH)
      .pluck('id');
    let unreachable = 0;
    for (const callId of unaccepted) if (await this.calls.fail(callId, msg('callAgentUnreachable'), 'acceptance')) unreachable += 1;
    return { requeued: due.length, claimsExpired, timedOut, unreachable };
  }
}
