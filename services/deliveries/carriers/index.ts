import type { IncomingHttpHeaders } from 'node:http';
import type { Knex } from 'knex';
import type { Secrets } from '../../../integrations/secrets';
import { z } from 'zod';
import { newSigningSecret } from '../../../integrations/signing';
import { audit } from '../../audit';
import { NotFoundError, ownerOnly, ValidationError, msg, isUuid, parse, readInboundJson, requiredText, unsafeTextAt } from '../../../services/shared';
import { eventTime } from '../time';
import type { WorkspaceActor } from '../../../services/shared';
import { applyDeliveryEvent } from '../apply';
import { isDeliveryWord } from '../../orders';
import { custom } from './custom';
import type { CarrierAdapter, CarrierNews } from './types';
import { CarrierMessageError } from './types';

/** One file per kind of carrier: a new carrier's pushes are a new adapter here. */
const ADAPTERS: Record<string, CarrierAdapter> = { custom };
const KINDS = Object.keys(ADAPTERS) as [string, ...string[]];

export interface CarrierConnection {
  id: string;
  kind: string;
  name: string;
  hook_url: string;
  created_at: string;
}

/** What a carrier is answered: refused with nothing recorded (400, 401, 404), or 200 with the outcome logged. */
export type CarrierAnswer = { status: 200; result: string } | { status: 400 | 401 | 404 };

interface HookConnection {
  id: string;
  workspace_id: string;
  kind: string;
  name: string;
  secret: string;
}

const createSchema = z.object({
  kind: z.enum(KINDS, { error: msg('oneOf', { label: 'kind', allowed: KINDS.join(', ') }) }),
  name: requiredText('Name', 100),
});

/** A `webhook-id` names one message; longer ones are refused (a btree entry holds about 2.7 kB). */
const MAX_KEY = 256;

/** A carrier's text field as given (a string or a number), or null; too long is refused by the caller. */
const textOf = (value: unknown): string | null => (typeof value === 'string' ? value.trim() || null : typeof value === 'number' ? String(value) : null);

/**
 * Carrier connections (docs/delivery.md): a carrier that pushes its news to /hooks/carriers/:id,
 * signed as the custom store source is. Every member sees them; the owner alone makes and removes
 * them (they hold a secret).
 */
export class CarrierConnectionService {
  constructor(
    private readonly knex: Knex,
    private readonly publicBaseUrl: string,
    /** Seals the connections' signing secrets before they are stored; opens them as they are read. */
    private readonly secrets: Secrets,
  ) {}

  private toJson(row: { id: string; kind: string; name: string; created_at: Date | string }): CarrierConnection {
    return {
      id: row.id,
      kind: row.kind,
      name: row.name,
      hook_url: `${this.publicBaseUrl}/hooks/carriers/${row.id}`,
      created_at: new Date(row.created_at).toISOString(),
    };
  }

  async list(workspaceId: string): Promise<CarrierConnection[]> {
    const rows = await this.knex('carrier_connections')
      .where({ workspace_id: workspaceId })
      .orderBy(['created_at', 'id'])
      .select('id', 'kind', 'name', 'created_at');
    return rows.map((row) => this.toJson(row));
  }

  async create(workspace: WorkspaceActor & { id: string }, body: unknown): Promise<CarrierConnection & { secret: string }> {
    ownerOnly(workspace);
    const input = parse(createSchema, body ?? {});
    const secret = newSigningSecret();
    const row = await this.knex.transaction(async (trx) => {
      const [created] = await trx('carrier_connections')
        .insert({ workspace_id: workspace.id, kind: input.kind, name: input.name, secret: this.secrets.seal(secret) })
        .returning(['id', 'kind', 'name', 'created_at']);
      await audit.record(trx, {
        workspaceId: workspace.id,
        action: 'carrier_created',
        target: { type: 'carrier', id: created.id, label: created.name },
        details: { kind: created.kind },
      });
      return created;
    });
    return { ...this.toJson(row), secret };
  }

  async remove(workspace: WorkspaceActor & { id: string }, id: string): Promise<void> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw new NotFoundError(msg('carrierNotFound'));
    await this.knex.transaction(async (trx) => {
      const [row] = await trx('carrier_connections').where({ id, workspace_id: workspace.id }).delete(['id', 'kind', 'name']);
      if (!row) throw new NotFoundError(msg('carrierNotFound'));
      await audit.record(trx, {
        workspaceId: workspace.id,
        action: 'carrier_deleted',
        target: { type: 'carrier', id: row.id, label: row.name },
        details: { kind: row.kind },
      });
    });
  }

  /** The connection's log, newest first. */
  async events(workspaceId: string, id: string): Promise<Array<{ received_at: string; result: string; order_id: string | null; reason: string | null }>> {
    const found = isUuid(id) && (await this.knex('carrier_connections').where({ id, workspace_id: workspaceId }).first('id'));
    if (!found) throw new NotFoundError(msg('carrierNotFound'));
    const rows = await this.knex('carrier_events')
      .where({ connection_id: id })
      .orderBy([
        { column: 'received_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(100)
      .select('received_at', 'result', 'order_id', 'reason');
    return rows.map((row) => ({ ...row, received_at: new Date(row.received_at).toISOString() }));
  }

  /** The connection a hook's path names, found before its body is read; null answers 404. */
  async connection(id: string): Promise<HookConnection | null> {
    if (!isUuid(id)) return null;
    const row = await this.knex('carrier_connections').where({ id }).first('id', 'workspace_id', 'kind', 'name', 'secret');
    return row ? this.secrets.openFields(row, ['secret']) : null;
  }

  /** A signed message: nothing is read or written before the signature holds. */
  async receive(connection: HookConnection, raw: Buffer, headers: IncomingHttpHeaders): Promise<CarrierAnswer> {
    // A connection of a kind this build has no adapter for (one taken out) cannot verify anything.
    const adapter = Object.hasOwn(ADAPTERS, connection.kind) ? ADAPTERS[connection.kind] : null;
    if (!adapter?.verify(raw, headers, connection.secret)) return { status: 401 };
    const id = adapter.messageId ? adapter.messageId(headers, raw) : headers['webhook-id'];
    const key = typeof id === 'string' ? id : '';
    if (!key || key.length > MAX_KEY) return { status: 400 };
    const read = readInboundJson(raw);
    if (!read.ok && !read.unsafe) return { status: 400 };
    let news: CarrierNews | null;
    try {
      // A body holding text Postgres refuses is read for what it is only (then `rejected`, below).
      news = adapter.read(read.value, headers);
    } catch (err) {
      if (err instanceof SyntaxError || err instanceof CarrierMessageError) return { status: 400 };
      throw err;
    }
    if (!read.ok)
      return this.log(connection, key, 'rejected', null, `${unsafeTextAt(read.field) ? 'a field name' : read.field.slice(0, 200)}: ${read.message}`);
    if (!news) return this.log(connection, key, 'ignored', null, 'Not a delivery.updated message');
    const checked = checkNews(news);
    if ('reason' in checked) return this.log(connection, key, 'rejected', null, checked.reason);
    return this.knex.transaction(async (trx) => {
      // The message is claimed first: a replay (the same webhook-id) finds it taken and changes nothing.
      const claimed = await trx.raw(
        `INSERT INTO carrier_events (connection_id, message_key, result) VALUES (?, ?, 'unmatched')
         ON CONFLICT (connection_id, message_key) DO NOTHING RETURNING id`,
        [connection.id, key],
      );
      if (!claimed.rows[0]) return { status: 200 as const, result: 'duplicate' };
      const orderId = await this.findOrder(trx, connection.workspace_id, checked);
      if (!orderId) {
        await trx('carrier_events').where({ id: claimed.rows[0].id }).update({ reason: 'No order of the workspace has this id, tracking number or reference' });
        return { status: 200 as const, result: 'unmatched' };
      }
      const applied = await applyDeliveryEvent(trx, {
        workspaceId: connection.workspace_id,
        orderId,
        status: checked.status,
        trackingNumber: checked.trackingNumber,
        carrierStatus: checked.carrierStatus,
        at: checked.at,
        source: 'carrier',
        by: connection.name,
      });
      const result = applied.changed ? 'updated' : 'unchanged';
      await trx('carrier_events').where({ id: claimed.rows[0].id }).update({ result, order_id: orderId });
      return { status: 200 as const, result };
    });
  }

  private async log(connection: HookConnection, key: string, result: string, orderId: string | null, reason: string): Promise<CarrierAnswer> {
    await this.knex('carrier_events')
      .insert({ connection_id: connection.id, message_key: key, result, order_id: orderId, reason: reason.slice(0, 500) })
      .onConflict(['connection_id', 'message_key'])
      .ignore();
    return { status: 200, result };
  }

  /** The order the news names in the workspace: our id, else the tracking number, else the store's reference. */
  private async findOrder(trx: Knex.Transaction, workspaceId: string, news: CheckedNews): Promise<string | null> {
    const scoped = () => trx('orders').where({ workspace_id: workspaceId });
    if (news.orderId) return (await scoped().where({ id: news.orderId }).first('id'))?.id ?? null;
    if (news.trackingNumber) {
      const found = await scoped().where({ delivery_tracking_number: news.trackingNumber }).first('id');
      if (found) return found.id;
    }
    if (news.externalRef) {
      const rows = await scoped()
        .whereRaw("ltrim(external_ref, '# ') = ?", [news.externalRef.replace(/^#\s*/, '')])
        .limit(2)
        .select('id');
      if (rows.length === 1) return rows[0].id;
    }
    return null;
  }
}

interface CheckedNews {
  orderId: string | null;
  trackingNumber: string | null;
  externalRef: string | null;
  status: Parameters<typeof applyDeliveryEvent>[1]['status'];
  carrierStatus: string | null;
  at: string;
}

/** The news's values by the rules of PUT /api/orders/:id/delivery; a reason when any is wrong. */
function checkNews(news: CarrierNews): CheckedNews | { reason: string } {
  if (!isDeliveryWord(news.status))
    return { reason: 'status must be one of: shipped, in_transit, out_for_delivery, delivered, refused, returned, lost, attempted' };
  const orderId = textOf(news.orderId);
  const trackingNumber = textOf(news.trackingNumber);
  const externalRef = textOf(news.externalRef);
  const carrierStatus = textOf(news.carrierStatus);
  if (orderId && !isUuid(orderId)) return { reason: 'order_id is not an order id of ours' };
  if (!orderId && !trackingNumber && !externalRef) return { reason: 'Name the order: order_id, tracking_number or external_ref' };
  if ((trackingNumber?.length ?? 0) > 100 || (externalRef?.length ?? 0) > 200 || (carrierStatus?.length ?? 0) > 200) return { reason: 'A field is too long' };
  try {
    return { orderId, trackingNumber, externalRef, status: news.status, carrierStatus, at: eventTime(news.at).toISOString() };
  } catch (err) {
    if (err instanceof ValidationError) return { reason: err.fields.at };
    throw err;
  }
}
