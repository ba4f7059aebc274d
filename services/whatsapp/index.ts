import type { Knex } from 'knex';
import type { Secrets } from '../../integrations/secrets';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import type { DeliveryResult, OutboundRequest } from '../../integrations/http';
import type { CallService } from '../calls';
import { systemSummary } from '../calls';
import { transition } from '../orders';
import { msg, isUuid, readInboundJson } from '../../services/shared';
import type { MessageContext, SendAnswer } from './cloud-api';
import { readSendAnswer, templateRequest } from './cloud-api';
import type { WhatsAppChange, WhatsAppEvent } from './webhook';
import { readChanges, validSignature } from './webhook';
import { sameSecret } from '../../integrations/secret-compare';

export type { SendAnswer } from './cloud-api';
export { readSendAnswer } from './cloud-api';
export * from './settings';
export { TEMPLATE_TEXTS } from './template';

/** After the first try, a send is retried after about 10 s, 1 min, 5 min and 15 min, as a voice agent's call.requested. */
const SEND_RETRY_SECONDS = [10, 60, 300, 900];
/**
 * A throttled send ("later", not "no": see THROTTLING_CODES) is tried again after 1, 2, 4, 8 then
 * every 15 minutes, inside the calling hours, as long as the call is open: never more than once a
 * minute for the call, and never ending it.
 */
const THROTTLE_FIRST_SECONDS = 60;
/** While Meta throttles a number, one of its messages is tried at most this often; the others wait (spread over this many more seconds). */
const NUMBER_PAUSE_SECONDS = 60;
const NUMBER_PAUSE_SPREAD_SECONDS = 30;
const THROTTLE_MAX_SECONDS = 900;
/** A message Meta never took within this long after its last planned try (its send job lost) ends `failed`. */
const SEND_WITHIN_MINUTES = 25;
/** Statuses for a message id no call carries are kept this long: the longest reply window (72 h). */
const EARLY_STATUS_HOURS = 72;
/** The order in which a message's early statuses are applied. */
const STATUS_ORDER = ['sent', 'delivered', 'read', 'failed'] as const;
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
    /** Opens the agents' access tokens, app secrets and verify tokens (sealed at rest). */
    private readonly secrets: Secrets,
    private readonly now: () => Date = () => new Date(),
  ) {}

  // ---- sending ---------------------------------------------------------------------------

  /** The open WhatsApp calls among `callIds` whose message Meta has not taken yet, with what the message needs. */
  async sendContexts(callIds: string[]): Promise<MessageContext[]> {
    if (callIds.length === 0) return [];
    const rows: MessageContext[] = await this.knex('calls as c')
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
    return rows.map((ctx) => this.secrets.openFields(ctx, ['access_token']));
  }

  /** The Cloud API request for one message. */
  request(ctx: MessageContext): OutboundRequest {
    return templateRequest(this.config.apiOrigin, this.config.apiVersion, ctx);
  }

  /**
   * What Meta's answer to try `attempt` of a send means for the call: sent (the wamid kept, the order
   * `calling`, the reply window open, the statuses Meta sent before kept applied), refused (the call
   * `failed` with Meta's message), throttled (tried again later, `throttled` times so far, never
   * failed), or another try later, until the tries run out. Anything but sent is kept on the call
   * and the agent (the order page and the agent's page say it).
   */
  async answered(callId: string, attempt: number, result: DeliveryResult, throttled = 0): Promise<SendAnswer> {
    const answer = readSendAnswer(result);
    if (answer.result === 'sent') await this.sent(callId, answer.messageId);
    else if (answer.result === 'refused') {
      await this.noteError(this.knex, callId, answer.message);
      await this.calls.endCall(callId, { outcome: 'failed', summary: answer.message }, 'system', unsent);
    } else if (answer.result === 'throttled') {
      const delay = Math.min(THROTTLE_FIRST_SECONDS * 2 ** throttled, THROTTLE_MAX_SECONDS);
      if (answer.scope === 'number') await this.pauseNumber(callId);
      await this.later(callId, answer.message, delay, { callId, try: attempt, throttled: throttled + 1 });
    } else {
      const delay = SEND_RETRY_SECONDS[attempt - 1];
      if (delay !== undefined) await this.later(callId, answer.reason, delay, { callId, try: attempt + 1, throttled });
      else {
        await this.noteError(this.knex, callId, answer.reason);
        await this.calls.endCall(callId, { outcome: 'failed', ...systemSummary(msg('callWhatsAppUnreachable')) }, 'system', unsent);
      }
    }
    return answer;
  }

  /**
   * The send of an open call is tried again in `seconds` (moved to the next opening of the calling
   * hours when they are closed then), with why it did not go out kept on the call and its agent.
   */
  private async later(callId: string, reason: string, seconds: number, job: { callId: string; try: number; throttled: number }): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const now = this.now();
      const [call] = await trx('calls as c')
        .update({
          send_error: reason,
          send_error_at: now,
          send_next_at: trx.raw('call_due_at(c.workspace_id, ?::timestamptz + make_interval(secs => ?))', [now, seconds]),
        })
        .where({ id: callId, kind: 'whatsapp' })
        .whereNull('ended_at')
        .whereNull('message_id')
        .returning(['send_next_at']);
      if (!call) return;
      await this.noteError(trx, callId, reason, now);
      await this.jobs.send(trx, QUEUES.whatsappSend.name, job, { startAfter: call.send_next_at });
    });
  }

  /**
   * Whether the message of this call may be sent now: yes, unless Meta throttled its number (a
   * throughput, spam or account limit), in which case one message of the number is tried a minute
   * later (the first to claim it) and the others wait their turn — their job moved to the end of
   * the pause, the call saying why meanwhile. Nothing counts as a try while waiting.
   */
  async mayTry(callId: string, job: { callId: string; try: number; throttled: number }): Promise<boolean> {
    for (let look = 0; look < 2; look++) {
      const now = this.now();
      const agent = await this.agentOfCall(this.knex, callId).first('w.agent_id', 'w.throttled_until');
      if (!agent?.throttled_until) return true;
      if (agent.throttled_until <= now) {
        const claimed = await this.knex('whatsapp_agents')
          .where({ agent_id: agent.agent_id })
          .where('throttled_until', '<=', now)
          .update({ throttled_until: new Date(now.getTime() + NUMBER_PAUSE_SECONDS * 1000) })
          .returning('agent_id');
        if (claimed.length > 0) return true;
        continue; // another message of the number took this minute's turn
      }
      const spread = Math.floor(Math.random() * NUMBER_PAUSE_SPREAD_SECONDS * 1000);
      await this.knex.transaction(async (trx) => {
        const [call] = await trx('calls as c')
          .update({
            send_error: trx.raw('coalesce(c.send_error, (SELECT last_error FROM whatsapp_agents WHERE agent_id = ?))', [agent.agent_id]),
            send_error_at: trx.raw('coalesce(c.send_error_at, ?)', [now]),
            send_next_at: trx.raw('call_due_at(c.workspace_id, ?)', [new Date(agent.throttled_until.getTime() + spread)]),
          })
          .where({ id: callId, kind: 'whatsapp' })
          .whereNull('ended_at')
          .whereNull('message_id')
          .returning(['send_next_at']);
        if (call) await this.jobs.send(trx, QUEUES.whatsappSend.name, job, { startAfter: call.send_next_at });
      });
      return false;
    }
    return true;
  }

  /** Meta throttled the number of this call: its next message goes out in a minute at the earliest. */
  private async pauseNumber(callId: string): Promise<void> {
    const until = new Date(this.now().getTime() + NUMBER_PAUSE_SECONDS * 1000);
    await this.knex('whatsapp_agents').update({ throttled_until: until }).whereIn('agent_id', this.agentOfCall(this.knex, callId).select('w.agent_id'));
  }

  private agentOfCall(db: Knex | Knex.Transaction, callId: string) {
    return db('calls as c').join('operations as op', 'op.id', 'c.operation_id').join('whatsapp_agents as w', 'w.agent_id', 'op.agent_id').where('c.id', callId);
  }

  /** The agent's last error (a send not gone out, a failed status) and when: its page shows it. */
  private async noteError(db: Knex | Knex.Transaction, callId: string, reason: string, at = this.now()): Promise<void> {
    await db('whatsapp_agents')
      .update({ last_error: reason.slice(0, 500), last_error_at: at })
      .whereIn('agent_id', db('calls as c').join('operations as op', 'op.id', 'c.operation_id').where('c.id', callId).select('op.agent_id'));
  }

  private async sent(callId: string, messageId: string): Promise<void> {
    const agentId = await this.knex.transaction(async (trx) => {
      const sentAt = this.now();
      const [call] = await trx('calls as c')
        .update({
          message_id: messageId,
          sent_at: sentAt,
          send_next_at: null,
          result_due_at: trx.raw(
            '?::timestamptz + make_interval(hours => (SELECT w.reply_window_hours FROM operations op JOIN whatsapp_agents w ON w.agent_id = op.agent_id WHERE op.id = c.operation_id))',
            [sentAt],
          ),
        })
        .where({ id: callId })
        .whereNull('ended_at')
        .whereNull('message_id')
        .returning(['workspace_id', 'operation_id', 'result_due_at']);
      if (!call) return undefined;
      await transition(
        trx,
        call.workspace_id,
        trx('operations').where({ id: call.operation_id, status: 'in_progress' }).select('order_id'),
        'calling',
        'message-sent',
      );
      await this.jobs.send(trx, QUEUES.whatsappReplyWindow.name, { callId }, { startAfter: call.result_due_at });
      const agentId = (await trx('operations').where({ id: call.operation_id }).first('agent_id')).agent_id as string;
      // Meta took a message of the number: its other messages need not wait any more.
      await trx('whatsapp_agents').where({ agent_id: agentId }).whereNotNull('throttled_until').update({ throttled_until: null });
      return agentId;
    });
    // Meta may have told us about this message before we stored its id: those statuses apply now.
    if (agentId) await this.applyEarly(agentId, messageId);
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
   * The safety net (run with the sweep): statuses kept for a message whose send is now recorded
   * (applied), windows that closed without their job, and messages Meta never took (their send job
   * lost), so that no WhatsApp call stays open.
   */
  async sweep(now = this.now()): Promise<{ noReply: number; unsent: number }> {
    const early: Array<{ agent_id: string; message_id: string }> = await this.knex('whatsapp_early_statuses as e')
      .whereExists(this.knex('calls as c').whereRaw('c.message_id = e.message_id'))
      .distinct('e.agent_id', 'e.message_id')
      .limit(BATCH);
    for (const row of early) await this.applyEarly(row.agent_id, row.message_id);
    const closed = await this.knex('calls').where({ kind: 'whatsapp' }).whereNull('ended_at').where('result_due_at', '<=', now).limit(BATCH).pluck('id');
    let noReply = 0;
    for (const callId of closed) if (await this.closeWindow(callId, now)) noReply += 1;
    const stale = await this.knex('calls')
      .where({ kind: 'whatsapp' })
      .whereNull('ended_at')
      .whereNull('message_id')
      .whereRaw('coalesce(send_next_at, started_at) <= ?', [new Date(now.getTime() - SEND_WITHIN_MINUTES * 60_000)])
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
    await this.applyChanges(agentId, agent.app_secret, readChanges(body.value));
    return { status: 200, body: '' };
  }

  /** Whether a WhatsApp agent has this id: its webhook's body is read only then. */
  async knows(agentId: string): Promise<boolean> {
    return (await this.connection(agentId)) !== undefined;
  }

  private async connection(agentId: string): Promise<{ verify_token: string; app_secret: string } | undefined> {
    if (!isUuid(agentId)) return undefined;
    const row = await this.knex('whatsapp_agents').where({ agent_id: agentId }).first('verify_token', 'app_secret');
    return row && this.secrets.openFields(row, ['verify_token', 'app_secret']);
  }

  /** Statuses kept for a message id no call carries, older than the longest reply window: deleted (housekeeping). */
  async pruneEarlyStatuses(now = this.now()): Promise<number> {
    return this.knex('whatsapp_early_statuses')
      .where('received_at', '<', new Date(now.getTime() - EARLY_STATUS_HOURS * 3_600_000))
      .delete();
  }

  /**
   * One Meta app has one callback URL for all its numbers: each change is applied to the agent of
   * the number it names (`metadata.phone_number_id`), the URL's agent when it names theirs (or none),
   * else the workspace's WhatsApp agent of that number whose app secret is the one that signed it;
   * a change for a number no such agent has is ignored.
   */
  private async applyChanges(agentId: string, appSecret: string, changes: WhatsAppChange[]): Promise<void> {
    const routes = new Map<string, string | undefined>();
    for (const change of changes) {
      if (change.events.length === 0) continue;
      const numberId = change.phoneNumberId;
      if (numberId !== null && !routes.has(numberId)) routes.set(numberId, await this.agentOfNumber(agentId, appSecret, numberId));
      const target = numberId === null ? agentId : routes.get(numberId);
      if (!target) continue;
      for (const event of change.events) await this.apply(target, event);
    }
  }

  /** The URL's agent when the number is theirs, else the agent of that number in their workspace signed with the same app secret. */
  private async agentOfNumber(agentId: string, appSecret: string, phoneNumberId: string): Promise<string | undefined> {
    const rows: Array<{ agent_id: string; app_secret: string }> = await this.knex('whatsapp_agents as w')
      .join('agents as a', 'a.id', 'w.agent_id')
      .where({ 'w.phone_number_id': phoneNumberId, 'a.kind': 'whatsapp' })
      .where('a.workspace_id', this.knex('agents').where({ id: agentId }).select('workspace_id'))
      .orderByRaw('(w.agent_id = ?) DESC, a.created_at', [agentId])
      .select('w.agent_id', 'w.app_secret');
    return rows.find((row) => sameSecret(this.secrets.open(row.app_secret), appSecret))?.agent_id;
  }

  private async apply(agentId: string, event: WhatsAppEvent): Promise<void> {
    if (event.type === 'status') return this.applyStatus(agentId, event);
    const callId = event.type === 'button' ? event.callId : await this.waitingCall(agentId, event);
    if (!callId) return;
    const details =
      event.type === 'button'
        ? { outcome: event.action === 'confirm' ? ('confirmed' as const) : ('unconfirmed' as const), summary: event.text }
        : { outcome: 'no-answer' as const, summary: event.text, reply: event.text };
    await this.calls.endCall(
      callId,
      details,
      'agent',
      (call) => call.kind === 'whatsapp' && call.agent_id === agentId,
      (trx) => this.firstTime(trx, agentId, event.id),
    );
  }

  /**
   * A delivery status: sent, delivered, read recorded on the call (once, by `{wamid}:{status}`);
   * failed ends it `failed` with the error's title and climbs the ladder. A status for a message id
   * no call of the agent carries yet is kept, and applied when the send is recorded.
   */
  private async applyStatus(agentId: string, event: Extract<WhatsAppEvent, { type: 'status' }>): Promise<void> {
    const callId = await this.callOfMessage(agentId, event.messageId);
    if (!callId) {
      await this.knex('whatsapp_early_statuses')
        .insert({ agent_id: agentId, message_id: event.messageId, status: event.status, at: event.at, error: event.error })
        .onConflict(['agent_id', 'message_id', 'status'])
        .ignore();
      // The send may have been recorded in the meantime, having found nothing kept yet.
      await this.applyEarly(agentId, event.messageId);
      return;
    }
    if (event.status !== 'failed') {
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
    const ended = await this.calls.endCall(
      callId,
      { outcome: 'failed', summary: event.error ?? 'failed' },
      'agent',
      (call) => call.kind === 'whatsapp' && call.agent_id === agentId,
      (trx) => this.firstTime(trx, agentId, event.id),
    );
    if (ended) await this.noteError(this.knex, callId, event.error ?? 'failed', event.at);
  }

  /** The statuses kept for a message id, applied (in their order) once a call of the agent carries it, then deleted. */
  private async applyEarly(agentId: string, messageId: string): Promise<void> {
    const kept: Array<{ status: (typeof STATUS_ORDER)[number]; at: Date; error: string | null }> = await this.knex('whatsapp_early_statuses')
      .where({ agent_id: agentId, message_id: messageId })
      .select('status', 'at', 'error');
    if (kept.length === 0 || !(await this.callOfMessage(agentId, messageId))) return;
    kept.sort((a, b) => STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status));
    for (const row of kept) await this.applyStatus(agentId, { type: 'status', id: `${messageId}:${row.status}`, messageId, ...row });
    await this.knex('whatsapp_early_statuses')
      .where({ agent_id: agentId, message_id: messageId })
      .whereIn(
        'status',
        kept.map((row) => row.status),
      )
      .delete();
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
