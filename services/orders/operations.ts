import type { Knex } from 'knex';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import { AppError, ConflictError, NotFoundError, isUuid, msg } from '../../services/shared';
import type { Outcome } from '../calls/outcomes';
import { transition } from './transition';

type CallKind = 'human' | 'voice' | 'whatsapp';

export interface Call {
  id: string;
  kind: CallKind;
  attempt: number;
  started_at: string;
  ended_at: string | null;
  outcome: Outcome | null;
  duration_seconds: number | null;
  summary: string | null;
  changes: string | null;
  callback_at: string | null;
  made_by: string | null;
  cost: number;
  /** What the customer wrote back to a WhatsApp message instead of pressing a button. */
  reply: string | null;
}

export interface Operation {
  id: string;
  order_id: string;
  agent_id: string;
  status: 'pending' | 'in_progress' | 'completed' | 'cancelled';
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  calls: Call[];
}

const iso = (value: Date | string | null | undefined) => (value ? new Date(value).toISOString() : null);

export const CALL_FIELDS = [
  'id',
  'kind',
  'attempt',
  'started_at',
  'ended_at',
  'outcome',
  'duration_seconds',
  'summary',
  'changes',
  'callback_at',
  'made_by',
  'cost',
  'reply',
];
const OPERATION_FIELDS = ['id', 'order_id', 'agent_id', 'status', 'attempts', 'next_attempt_at', 'created_at'];

// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
export function toCall(row: any): Call {
  return {
    id: row.id,
    kind: row.kind,
    attempt: row.attempt,
    started_at: iso(row.started_at)!,
    ended_at: iso(row.ended_at),
    outcome: row.outcome ?? null,
    duration_seconds: row.duration_seconds ?? null,
    summary: row.summary ?? null,
    changes: row.changes ?? null,
    callback_at: iso(row.callback_at),
    made_by: row.made_by ?? null,
    cost: Number(row.cost ?? 0),
    reply: row.reply ?? null,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
function toOperation(row: any, calls: Call[]): Operation {
  return {
    id: row.id,
    order_id: row.order_id,
    agent_id: row.agent_id,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    created_at: iso(row.created_at)!,
    calls,
  };
}

/** The calls that count (an expired claim is dropped), oldest first. */
function countedCalls(db: Knex | Knex.Transaction, operationIds: string[]) {
  return db('calls')
    .whereIn('operation_id', operationIds)
    .whereNull('dropped_at')
    .orderBy([{ column: 'attempt' }])
    .select([...CALL_FIELDS, 'operation_id']);
}

export async function operationWithCalls(db: Knex | Knex.Transaction, operationId: string): Promise<Operation> {
  const row = await db('operations').where({ id: operationId }).first(OPERATION_FIELDS);
  const calls = await countedCalls(db, [operationId]);
  return toOperation(row, calls.map(toCall));
}

/** Operations of an order: the call history, and "call again". */
export class OperationService {
  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
  ) {}

  async list(workspaceId: string, orderId: string): Promise<Operation[]> {
    await this.orderOf(this.knex, workspaceId, orderId);
    const operations = await this.knex('operations')
      .where({ workspace_id: workspaceId, order_id: orderId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(OPERATION_FIELDS);
    const calls =
      operations.length > 0
        ? await countedCalls(
            this.knex,
            operations.map((o) => o.id),
          )
        : [];
    return operations.map((op) => toOperation(op, calls.filter((c) => c.operation_id === op.id).map(toCall)));
  }

  /** Queues a new confirmation of the order (due now) with the current handler; the order is pending again. */
  async requeue(workspaceId: string, orderId: string): Promise<Operation> {
    return this.knex.transaction(async (trx) => {
      await this.orderOf(trx, workspaceId, orderId, true);
      const open = await trx('operations').where({ order_id: orderId }).whereIn('status', ['pending', 'in_progress']).first('id');
      if (open) throw new ConflictError(msg('OPERATION_OPEN'), 'OPERATION_OPEN');
      const handler = await trx('agents').where({ workspace_id: workspaceId, is_order_handler: true }).first('id');
      if (!handler) {
        throw new AppError(422, msg('noHandlerQueue'), 'NO_ORDER_HANDLER', { redirectTo: '/agents' });
      }
      await transition(trx, workspaceId, [orderId], 'pending', 'requeued');
      const operationId = await this.open(trx, workspaceId, orderId, handler.id);
      return operationWithCalls(trx, operationId);
    });
  }

  /** Creates the order's pending operation, due now (or at the next opening of the calling hours), and the job that acts on it — in the caller's transaction. */
  async open(trx: Knex.Transaction, workspaceId: string, orderId: string, agentId: string): Promise<string> {
    const [operation] = await trx('operations')
      .insert({
        workspace_id: workspaceId,
        order_id: orderId,
        agent_id: agentId,
        direction: 'outbound',
        status: 'pending',
        next_attempt_at: trx.raw('call_due_at(?, now())', [workspaceId]),
      })
      .returning('id');
    await this.jobs.send(trx, QUEUES.operationDue.name, { operationId: operation.id }, { singletonKey: operation.id });
    return operation.id;
  }

  /** A person set a final status: the open operation stops (no call placed or claimed for it any more). */
  async cancelOpen(trx: Knex.Transaction, orderId: string): Promise<void> {
    await trx('operations').where({ order_id: orderId }).whereIn('status', ['pending', 'in_progress']).update({ status: 'cancelled', next_attempt_at: null });
  }

  private async orderOf(db: Knex | Knex.Transaction, workspaceId: string, orderId: string, lock = false): Promise<void> {
    if (!isUuid(orderId)) throw new NotFoundError(msg('orderNotFound'));
    const query = db('orders').where({ id: orderId, workspace_id: workspaceId }).first('id');
    if (lock) query.forUpdate();
    if (!(await query)) throw new NotFoundError(msg('orderNotFound'));
  }
}
