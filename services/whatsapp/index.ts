import type { Knex } from 'knex';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import type { DeliveryResult, OutboundRequest } from '../../integrations/http';
import type { CallService } from '../calls';
import { systemSummary } from '../calls';
import { msg, isUuid, readInboundJson } from '../../services/shared';
import type { MessageContext, SendAnswer } from './cloud-api';
import { readSendAnswer, templateRequest } from './cloud-api';
import type { WhatsAppEvent } from './webhook';
import { readEvents, validSignature } from './webhook';
import { sameSecret } from '../../integrations/secret-compare';

export type { SendAnswer } from './cloud-api';
export * from './settings';
export { TEMPLATE_TEXTS } from './template';

/** After the first try, a send is retried after about 10 s, 1 min, 5 min and 15 min, as a voice agent's call.requested. */
const SEND_RETRY_SECONDS = [10, 60, 300, 900];
/** A message Meta never took within this long (its send job lost) ends `failed`. */
const SEND_WITHIN_MINUTES = 25;
const BATCH = 500;

export interface WhatsAppConfig {
  apiOrigin: string;
  apiVersion: string;
}

/** What a signed request to /hooks/whatsapp gets: 200, or a refusal. */
export type HookAnswer = { status: 200; body: string } | { status: 401 | 403 | 404 };

/**
 * WhatsApp agents at work: sending an operation's template message through Meta's Cloud API,
 * reading what Meta's webhook reports (button presses, replies, delivery statuses), and ending
 * the calls that got no reply in their window. The rules of an ended call (the order's status,
 * the charge, the ladder) stay in CallService; this service decides which outcome a call gets.
 */
export class WhatsAppService {
  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    private readonly calls: CallService,
    private readonly config: WhatsAppConfig,
    private readonly now: () => Date = () => new Date(),
  ) {}

  // ---- sending ---------------------------------------------------------------------------

  /** The open WhatsApp calls among `callIds` whose message Meta has not taken yet, with what the message needs. */
  async sendContexts(callIds: string[]): Promise<MessageContext[]> {
    if (callIds.length === 0) return [];
    return this.knex('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .join('whatsapp_agents as w', 'w.agent_id', 'op.agent_id')
      .join('orders as o', 'o.id', 'op.order_id')
      .whereIn('c.id', callIds)
      .where('c.kind', 'whatsapp')
      .whereNull('c.ended_at')
      .whereNull('c.message_id')
      .select(
        'c.id as call_id',
        'o.phone',
        'o.client_name',
        'o.products_name',
        'o.total_amount',
        'o.currency',
        'o.store_name',
        'o.external_ref',
        'w.phone_number_id',
        'w.access_token',
        'w.template_name',
        'w.template_language',
      );
  }

  /** The Cloud API request for one message. */
  request(ctx: MessageContext): OutboundRequest {
    return templateRequest(this.config.apiOrigin, this.config.apiVersion, ctx);
  }

  /**
   * What Meta's answer to try `attempt` of a send means for the call: sent (the wamid kept, the order
   * `calling`, the reply window open), refused (the call `failed` with Meta's message), or another
   * try later, until the tries run out.
   */
  async answered(callId: string, attempt: number, result: DeliveryResult): Promise<SendAnswer> {
    const answer = readSendAnswer(result);
    if (answer.result === 'sent') await this.sent(callId, answer.messageId);
    else if (answer.result === 'refused') await this.calls.endCall(callId, { outcome: 'failed', summary: answer.message }, 'system', unsent);
    else {
      const delay = SEND_RETRY_SECONDS[attempt - 1];
      if (delay !== undefined) await this.jobs.send(this.knex, QUEUES.whatsappSend.name, { callId, try: attempt + 1 }, { startAfter: delay });
      else await this.calls.endCall(callId, { outcome: 'failed', ...systemSummary(msg('callWhatsAppUnreachable')) }, 'system', unsent);
    }
    return answer;
  }

  private async sent(callId: string, messageId: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const sentAt = this.now();
      const [call] = await trx('calls as c')
        .update({
          message_id: messageId,
          sent_at: sentAt,
          result_due_at: trx.raw(
            '?::timestamptz + make_interval(hours => (SELECT w.reply_window_hours FROM operations op JOIN whatsapp_agents w ON w.agent_id = op.agent_id WHERE op.id = c.operation_id))',
            [sentAt],
          ),
        })
        .where({ id: callId })
        .whereNull('ended_at')
        .whereNull('message_id')
        .returning(['operation_id', 'result_due_at']);
      if (!call) return;
      await trx.raw(
        `UPDATE orders SET status = 'calling' WHERE id = (SELECT order_id FROM operations WHERE id = ? AND status = 'in_progress') AND status = 'processing'`,
        [call.operation_id],
      );
      await this.jobs.send(trx, QUEUES.whatsappReplyWindow.name, { callId }, { startAfter: call.result_due_at });
    });
  }

  // ---- the reply window --------------------------------------------------------------------

  /** No reply within the agent's window: the call ends `no-answer` ("no reply"); false when it is not due or already ended. */
  async closeWindow(callId: string, now = this.now()): Promise<boolean> {
    return this.calls.endCall(
      callId,
      { outcome: 'no-answer', ...systemSummary(msg('callNoReply')) },
      'system',
      (call) => call.kind === 'whatsapp' && !!call.result_due_at && call.result_due_at <= now,
    );
  }

  /**
   * The safety net (run with the sweep): windows that closed without their job, and messages Meta
   * never took (their send job lost), so that no WhatsApp call stays open.
   */
  async sweep(now = this.now()): Promise<{ noReply: number; unsent: number }> {
    const closed = await this.knex('calls').where({ kind: 'whatsapp' }).whereNull('ended_at').where('result_due_at', '<=', now).limit(BATCH).pluck('id');
    let noReply = 0;
    for (const callId of closed) if (await this.closeWindow(callId, now)) noReply += 1;
    const stale = await this.knex('calls')
      .where({ kind: 'whatsapp' })
      .whereNull('ended_at')
      .whereNull('message_id')
      .where('started_at', '<=', new Date(now.getTime() - SEND_WITHIN_MINUTES * 60_000))
      .limit(BATCH)
      .pluck('id');
    let unsentCount = 0;
    for (const callId of stale)
      if (await this.calls.endCall(callId, { outcome: 'failed', ...systemSummary(msg('callWhatsAppUnreachable')) }, 'system', unsent)) unsentCount += 1;
    return { noReply, unsent: unsentCount };
  }

  // ---- Meta's webhook ----------------------------------------------------------------------

  /** The subscription check: the challenge back when the verify token is the agent's. */
  async challenge(agentId: string, query: Record<string, unknown>): Promise<HookAnswer> {
    const agent = await this.connection(agentId);
    if (!agent) return { status: 404 };
    const token = query['hub.verify_token'];
    const challenge = query['hub.challenge'];
    const matches = typeof token === 'string' && sameSecret(token, agent.verify_token);
    if (query['hub.mode'] !== 'subscribe' || !matches || typeof challenge !== 'string' || challenge.length > 200) return { status: 403 };
    return { status: 200, body: challenge };
  }

  /**
   * A webhook delivery: the signature over the raw bytes first (nothing is parsed before), then each
   * message and status applied once, by its id. Anything signed gets 200, whatever it holds.
   */
  async receive(agentId: string, raw: Buffer, signature: unknown): Promise<HookAnswer> {
    const agent = await this.connection(agentId);
    if (!agent) return { status: 404 };
    if (!validSignature(raw, signature, agent.app_secret)) return { status: 401 };
    // Meta must get 200 for anything signed: a body the inbound reader refuses is ignored whole.
    const body = readInboundJson(raw);
    if (!body.ok) return { status: 200, body: '' };
    for (const event of readEvents(body.value)) await this.apply(agentId, event);
    return { status: 200, body: '' };
  }

  /** Whether a WhatsApp agent has this id: its webhook's body is read only then. */
  async knows(agentId: string): Promise<boolean> {
    return (await this.connection(agentId)) !== undefined;
  }

  private async connection(agentId: string): Promise<{ verify_token: string; app_secret: string } | undefined> {
    if (!isUuid(agentId)) return undefined;
    return this.knex('whatsapp_agents').where({ agent_id: agentId }).first('verify_token', 'app_secret');
  }

  private async apply(agentId: string, event: WhatsAppEvent): Promise<void> {
    if (event.type === 'status' && event.status !== 'failed') {
      await this.knex.transaction(async (trx) => {
        if (!(await this.firstTime(trx, agentId, event.id))) return;
        const column = `${event.status}_at`;
        await trx('calls as c')
          .where({ 'c.message_id': event.messageId, 'c.kind': 'whatsapp' })
          .whereIn('c.operation_id', trx('operations').where({ agent_id: agentId }).select('id'))
          .update({ [column]: trx.raw(`coalesce(??, ?)`, [column, event.at]) });
      });
      return;
    }
    const callId =
      event.type === 'button'
        ? event.callId
        : event.type === 'status'
          ? await this.callOfMessage(agentId, event.messageId)
          : await this.waitingCall(agentId, event);
    if (!callId) return;
    const details =
      event.type === 'button'
        ? { outcome: event.action === 'confirm' ? ('confirmed' as const) : ('unconfirmed' as const), summary: event.text }
        : event.type === 'reply'
          ? { outcome: 'no-answer' as const, summary: event.text, reply: event.text }
          : { outcome: 'failed' as const, summary: event.error };
    await this.calls.endCall(
      callId,
      details,
      'agent',
      (call) => call.kind === 'whatsapp' && call.agent_id === agentId,
      (trx) => this.firstTime(trx, agentId, event.id),
    );
  }

  /** Records an event's id; false when it was applied before. */
  private async firstTime(trx: Knex.Transaction, agentId: string, key: string): Promise<boolean> {
    const inserted = await trx('whatsapp_events')
      .insert({ agent_id: agentId, event_key: key })
      .onConflict(['agent_id', 'event_key'])
      .ignore()
      .returning('event_key');
    return inserted.length > 0;
  }

  private async callOfMessage(agentId: string, messageId: string): Promise<string | undefined> {
    const row = await this.knex('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .where({ 'c.message_id': messageId, 'op.agent_id': agentId })
      .first('c.id');
    return row?.id;
  }

  /** The call a customer's reply answers: the message it quotes, else their call of this agent sent last that still waits. */
  private async waitingCall(agentId: string, event: Extract<WhatsAppEvent, { type: 'reply' }>): Promise<string | undefined> {
    if (event.quoted) {
      const quoted = await this.callOfMessage(agentId, event.quoted);
      if (quoted) return quoted;
    }
    const row = await this.knex('calls as c')
      .join('operations as op', 'op.id', 'c.operation_id')
      .join('orders as o', 'o.id', 'op.order_id')
      .where({ 'op.agent_id': agentId, 'c.kind': 'whatsapp', 'o.phone': `+${event.from}` })
      .whereNull('c.ended_at')
      .whereNotNull('c.message_id')
      .orderBy('c.sent_at', 'desc')
      .first('c.id');
    return row?.id;
  }
}

/** A send's refusal or give-up ends only a call whose message Meta never took. */
const unsent = (call: Record<string, unknown>) => call.kind === 'whatsapp' && !call.message_id;
