/**
 * Calls as they are shown: the view the loop answers with (a call, its operation and its order),
 * and the read-only queries of the dashboard's pages (an order's calls, a call's page).
 */
import type { Knex } from 'knex';
import { NotFoundError, isUuid, msg, recode } from '../../services/shared';
import type { Call, Operation, Order } from '../orders';
import type { Outcome } from './outcomes';
import { CALL_FIELDS, operationWithCalls, toCall, toOrder } from '../orders';
import type { Message } from '../../services/shared';

/** A call as the dashboard shows it: who made it (the member, or the voice agent). */
interface CallLine extends Call {
  who: string | null;
  /** The operation's place on the ladder: 1 for the handler's, 2 and 3 for the fallbacks'. */
  step: number;
  /** How far a WhatsApp message got (sent, delivered, read), as Meta reported it. */
  message_status: 'sent' | 'delivered' | 'read' | null;
  /** A summary the service wrote itself, by its code (the page shows it in its language); an agent's words stay in `summary`. */
  summary_message: Message | null;
}

/** The calls of an order, oldest first, and whether (and when) another one is coming. */
export interface OrderCalls {
  calls: CallLine[];
  next_call_at: string | null;
  has_open_operation: boolean;
  /** Who has the open operation, and its step on the ladder (2 or 3 once a fallback took the order over). */
  next_step: { agent_name: string; step: number } | null;
  /** The order's last WhatsApp message when it did not go out or failed: why, and whether it is tried again or who has the order now. */
  whatsapp_problem: WhatsAppProblem | null;
  /** Members' calls left open past their claim (or when the member left): dropped, the order back in the queue. */
  left_open: LeftOpen[];
}

/** A member's call that was never ended: who opened it, when, and when its order went back to the queue. */
export interface LeftOpen {
  who: string | null;
  started_at: string;
  returned_at: string;
}

/**
 * A WhatsApp message that did not go out: `retrying` (Meta throttled it, or could not be reached;
 * the same call is tried again) with the reason, or `failed` (refused, given up, or a failed status)
 * with the call's summary and the agent the order was handed to (null when there is none).
 */
export type WhatsAppProblem =
  | { state: 'retrying'; reason: string; next_try_at: string | null }
  | { state: 'failed'; reason: string | null; reason_message: Message | null; handed_to: string | null };

export interface OrderCallSummary {
  last_outcome: Outcome | null;
  next_call_at: string | null;
}

export interface CallPage {
  call: CallLine;
  order_id: string;
  /** The order's other calls, oldest first. */
  earlier: CallLine[];
  /** Whether this member may still record the outcome (their claim, not ended, not expired). */
  open_for_me: boolean;
  /** A follow-up call (a parcel the courier could not deliver, docs/team.md), not a confirmation. */
  follow_up: boolean;
}

export interface CallView {
  call: Call;
  operation: Operation;
  order: Order;
}

/** A call as the loop answers it (a claim, an outcome): with its operation and its order. */
export async function callView(trx: Knex.Transaction, callId: string): Promise<CallView> {
  const call = await trx('calls')
    .where({ id: callId })
    .first([...CALL_FIELDS, 'operation_id']);
  const operation = await operationWithCalls(trx, call.operation_id);
  const order = await trx('orders').where({ id: operation.order_id }).first();
  return { call: toCall(call), operation, order: toOrder({ ...order, operation_id: operation.id }) };
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** Read-only queries for the dashboard pages of the confirmation loop; the rules stay in CallService. */
export class CallViewService {
  constructor(
    private readonly knex: Knex,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private lines(workspaceId: string, withDropped = false) {
    return this.knex('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .join('agents as a', 'a.id', 'op.agent_id')
      .leftJoin('users as u', 'u.id', 'c.made_by')
      .where({ 'c.workspace_id': workspaceId })
      .modify((q) => {
        if (!withDropped) q.whereNull('c.dropped_at');
      })
      .orderBy([{ column: 'c.started_at' }, { column: 'c.attempt' }])
      .select([
        ...CALL_FIELDS.map((f) => `c.${f}`),
        'op.order_id',
        'op.ladder_step',
        'c.sent_at',
        'c.delivered_at',
        'c.read_at',
        'c.summary_code',
        'c.message_id',
        'c.send_error',
        'c.send_next_at',
        'a.name as agent_name',
        'u.name as member_name',
      ]);
  }

  async forOrder(workspaceId: string, orderId: string): Promise<OrderCalls> {
    const [rows, operations] = await Promise.all([
      this.lines(workspaceId).where({ 'op.order_id': orderId }),
      this.knex('operations as op')
        .join('agents as a', 'a.id', 'op.agent_id')
        .where({ 'op.workspace_id': workspaceId, 'op.order_id': orderId })
        .whereIn('op.status', ['pending', 'in_progress'])
        .select('op.status', 'op.next_attempt_at', 'op.ladder_step', 'a.name as agent_name'),
    ]);
    const pending = operations.find((op) => op.status === 'pending');
    const open = operations[0];
    return {
      calls: rows.map(toLine),
      next_call_at: iso(pending?.next_attempt_at ?? null),
      has_open_operation: operations.length > 0,
      next_step: open ? { agent_name: open.agent_name, step: open.ladder_step } : null,
      whatsapp_problem: await this.whatsappProblem(workspaceId, orderId, rows),
      left_open: await this.leftOpen(workspaceId, orderId),
    };
  }

  /** The order's dropped claims, oldest first: a call is dropped only when it was left open (see dropClaims). */
  private async leftOpen(workspaceId: string, orderId: string): Promise<LeftOpen[]> {
    const rows = await this.knex('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .leftJoin('users as u', 'u.id', 'c.made_by')
      .where({ 'c.workspace_id': workspaceId, 'op.order_id': orderId, 'c.kind': 'human' })
      .whereNotNull('c.dropped_at')
      .orderBy('c.started_at')
      .select('c.started_at', 'c.dropped_at', 'u.name as who');
    return rows.map((r) => ({ who: r.who ?? null, started_at: r.started_at.toISOString(), returned_at: r.dropped_at.toISOString() }));
  }

  /** What the order page says of the order's last WhatsApp message when it did not go out (see WhatsAppProblem). */
  // biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them (lines), read field by field
  private async whatsappProblem(workspaceId: string, orderId: string, rows: any[]): Promise<WhatsAppProblem | null> {
    const last = rows.filter((row) => row.kind === 'whatsapp').at(-1);
    if (!last) return null;
    if (!last.ended_at && !last.message_id && last.send_error) return { state: 'retrying', reason: last.send_error, next_try_at: iso(last.send_next_at) };
    if (last.outcome !== 'failed') return null;
    const next = await this.knex('operations as op')
      .join('agents as a', 'a.id', 'op.agent_id')
      .where({ 'op.workspace_id': workspaceId, 'op.order_id': orderId, 'op.ladder_step': last.ladder_step + 1 })
      .orderBy('op.created_at', 'desc')
      .first('a.name');
    return {
      state: 'failed',
      reason: last.summary_code ? null : last.summary,
      reason_message: last.summary_code ? recode(last.summary_code) : null,
      handed_to: next?.name ?? null,
    };
  }

  /** Each order's last outcome and next call time, in one query for a whole page of orders. */
  async summaries(workspaceId: string, orderIds: string[]): Promise<Map<string, OrderCallSummary>> {
    if (orderIds.length === 0) return new Map();
    const { rows } = await this.knex.raw(
      `SELECT o.id,
         (SELECT c.outcome FROM calls c JOIN operations op ON op.id = c.operation_id
           WHERE op.order_id = o.id AND c.outcome IS NOT NULL ORDER BY c.ended_at DESC LIMIT 1) AS last_outcome,
         (SELECT min(op.next_attempt_at) FROM operations op WHERE op.order_id = o.id AND op.status = 'pending') AS next_call_at
       FROM orders o WHERE o.workspace_id = ? AND o.id = ANY(?::uuid[])`,
      [workspaceId, orderIds],
    );
    return new Map(
      rows.map((r: { id: string; last_outcome: Outcome | null; next_call_at: Date | null }) => [
        r.id,
        { last_outcome: r.last_outcome, next_call_at: iso(r.next_call_at) },
      ]),
    );
  }

  /** A call of the workspace with its order's other calls; 404 for an unknown or another workspace's call. */
  async callPage(workspaceId: string, userId: string, callId: string): Promise<CallPage> {
    if (!isUuid(callId)) throw callNotFound();
    const row = await this.knex('calls')
      .where({ id: callId, workspace_id: workspaceId })
      .first('operation_id', 'kind', 'made_by', 'ended_at', 'dropped_at', 'claim_expires_at');
    if (!row) throw callNotFound();
    const { order_id: orderId, purpose } = await this.knex('operations').where({ id: row.operation_id }).first('order_id', 'purpose');
    const lines: CallLine[] = (await this.lines(workspaceId).where({ 'op.order_id': orderId })).map(toLine);
    // An expired claim is not among the calls that count, but its page still says what became of it.
    const call = lines.find((line) => line.id === callId) ?? toLine((await this.lines(workspaceId, true).where({ 'c.id': callId }))[0]);
    const openForMe = row.kind === 'human' && !row.ended_at && !row.dropped_at && row.made_by === userId && row.claim_expires_at > this.now();
    return { call, order_id: orderId, earlier: lines.filter((line) => line.id !== callId), open_for_me: openForMe, follow_up: purpose === 'follow_up' };
  }

  /** The member's own call still waiting for its outcome, if any. */
  async openCallOf(workspaceId: string, userId: string): Promise<string | null> {
    const row = await this.knex('calls')
      .where({ workspace_id: workspaceId, made_by: userId, kind: 'human' })
      .whereNull('ended_at')
      .whereNull('dropped_at')
      .where('claim_expires_at', '>', this.now())
      .orderBy('started_at', 'desc')
      .first('id');
    return row?.id ?? null;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
function toLine(row: any): CallLine {
  const messageStatus = row.read_at ? 'read' : row.delivered_at ? 'delivered' : row.sent_at ? 'sent' : null;
  return {
    ...toCall(row),
    who: row.kind === 'human' ? (row.member_name ?? null) : row.agent_name,
    step: row.ladder_step,
    message_status: messageStatus,
    summary_message: row.summary_code ? recode(row.summary_code) : null,
  };
}

function callNotFound(): NotFoundError {
  return new NotFoundError(msg('callNotFound'));
}
