import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ValidationError, normalizeMoroccanPhone, ownerOnly, msg } from '../../services/shared';
import type { Language, WorkspaceActor } from '../../services/shared';
import { anonymiseOrdersById } from './anonymise';
import { exportCsv } from './export';
import { toOrder } from './model';
import type { Order } from './model';
import { ORDER_FIELDS } from './sql';
import { audit } from '../audit';

/**
 * A customer's request (issue 58, item 3; DESIGN.md "Privacy"): every order of one phone number in
 * a workspace, to show, to export (JSON and CSV) or to erase. A customer is a phone number: the
 * orders the service holds are keyed by nothing else about a person.
 */

/** A customer's orders as the page and GET /api/customers/:phone show them, newest first. */
export interface Customer {
  /** Normalised: `+212` and nine digits. */
  phone: string;
  orders: Order[];
}

/** A call of a customer's order as the export gives it: what was said and noted, and when. */
interface ExportedCall {
  id: string;
  kind: string;
  attempt: number;
  started_at: string;
  ended_at: string | null;
  outcome: string | null;
  duration_seconds: number | null;
  summary: string | null;
  changes: string | null;
  reply: string | null;
  callback_at: string | null;
}

/** An event of an order's delivery history as the export gives it. */
interface ExportedDeliveryEvent {
  status: string;
  carrier: string | null;
  tracking_number: string | null;
  carrier_status: string | null;
  at: string;
  source: string;
}

/** Everything the service holds about a customer: /customers/:phone/export.json. */
export interface CustomerExport {
  phone: string;
  exported_at: string;
  /** The number's block-list entry, or null. */
  blocked: { reason: string | null; created_at: string } | null;
  orders: Array<Order & { calls: ExportedCall[]; delivery_events: ExportedDeliveryEvent[] }>;
}

export interface Erasure {
  phone: string;
  /** How many orders were anonymised. */
  erased: number;
  /** Whether the number's block-list entry was removed. */
  unblocked: boolean;
}

/** The phone's SHA-256 (hex, of its normalised form `+212…`): what `customer.erased` carries. */
export function phoneSha256(phone: string): string {
  return crypto.createHash('sha256').update(phone).digest('hex');
}

/**
 * A phone as a customer's address gives it, in any form an order accepts (06…, +212…, 212…, with
 * spaces or dashes, Arabic-Indic digits), normalised; 400 naming `phone` otherwise.
 */
export function customerPhone(text: unknown): string {
  const phone = typeof text === 'string' ? normalizeMoroccanPhone(text.trim()) : null;
  if (!phone) throw new ValidationError({ phone: msg('phoneInvalid') });
  return phone;
}

const iso = (value: Date | string | null | undefined) => (value ? new Date(value).toISOString() : null);

/** One workspace's customers; every query is scoped by the workspace id it is given. */
export class CustomerService {
  constructor(private readonly knex: Knex) {}

  /** Every order of the phone in the workspace, newest first (an unknown phone has none). */
  async find(workspaceId: string, phoneText: unknown): Promise<Customer> {
    const phone = customerPhone(phoneText);
    const rows = await this.knex
      .from('orders as o')
      .select(ORDER_FIELDS)
      .where({ 'o.workspace_id': workspaceId, 'o.phone': phone })
      .orderBy([
        { column: 'o.created_at', order: 'desc' },
        { column: 'o.id', order: 'desc' },
      ]);
    return { phone, orders: rows.map(toOrder) };
  }

  /** Everything held about the customer: the orders, their calls and delivery histories, the block-list entry. */
  async exportJson(workspaceId: string, phoneText: unknown): Promise<CustomerExport> {
    const { phone, orders } = await this.find(workspaceId, phoneText);
    const ids = orders.map((order) => order.id);
    const [calls, events, blocked] = await Promise.all([
      this.knex('calls as c')
        .join('operations as op', 'op.id', 'c.operation_id')
        .where('op.workspace_id', workspaceId)
        .whereIn('op.order_id', ids)
        .whereNull('c.dropped_at')
        .orderBy([{ column: 'c.started_at' }, { column: 'c.id' }])
        .select(
          'op.order_id',
          'c.id',
          'c.kind',
          'c.attempt',
          'c.started_at',
          'c.ended_at',
          'c.outcome',
          'c.duration_seconds',
          'c.summary',
          'c.changes',
          'c.reply',
          'c.callback_at',
        ),
      this.knex('delivery_events')
        .where({ workspace_id: workspaceId })
        .whereIn('order_id', ids)
        .whereNull('undone_at')
        .orderBy([{ column: 'at' }, { column: 'received_at' }])
        .select('order_id', 'status', 'carrier', 'tracking_number', 'carrier_status', 'at', 'source'),
      this.knex('blocked_phones').where({ workspace_id: workspaceId, phone }).first('reason', 'created_at'),
    ]);
    const byOrder = <T extends { order_id: string }>(rows: T[]) => {
      const map = new Map<string, T[]>();
      for (const row of rows) map.set(row.order_id, [...(map.get(row.order_id) ?? []), row]);
      return map;
    };
    const callsOf = byOrder(calls);
    const eventsOf = byOrder(events);
    await this.exported(workspaceId, phone, 'json', orders.length);
    return {
      phone,
      exported_at: new Date().toISOString(),
      blocked: blocked ? { reason: blocked.reason, created_at: iso(blocked.created_at)! } : null,
      orders: orders.map((order) => ({
        ...order,
        calls: (callsOf.get(order.id) ?? []).map((c) => ({
          id: c.id,
          kind: c.kind,
          attempt: c.attempt,
          started_at: iso(c.started_at)!,
          ended_at: iso(c.ended_at),
          outcome: c.outcome,
          duration_seconds: c.duration_seconds,
          summary: c.summary,
          changes: c.changes,
          reply: c.reply,
          callback_at: iso(c.callback_at),
        })),
        delivery_events: (eventsOf.get(order.id) ?? []).map((e) => ({
          status: e.status,
          carrier: e.carrier,
          tracking_number: e.tracking_number,
          carrier_status: e.carrier_status,
          at: iso(e.at)!,
          source: e.source,
        })),
      })),
    };
  }

  /**
   * Records in the audit log that the customer's data was exported (by whom and from where: the
   * request's). The log names the customer by the phone's SHA-256, never the phone: an erasure must
   * leave nothing of it behind.
   */
  async exported(workspaceId: string, phoneText: unknown, format: 'json' | 'csv', orders?: number): Promise<void> {
    const phone = customerPhone(phoneText);
    await audit.record(this.knex, {
      workspaceId,
      action: 'customer_exported',
      target: customerTarget(phone),
      details: { format, ...(orders === undefined ? {} : { orders }) },
    });
  }

  /** The customer's orders as the orders export writes them (same columns, same defusing), newest first. */
  exportCsv(workspaceId: string, phoneText: unknown, language: Language = 'en'): AsyncGenerator<string> {
    const phone = customerPhone(phoneText);
    return exportCsv(this.knex, workspaceId, { statuses: [], flags: [], deliveries: [], q: null, from: null, to: null }, language, phone);
  }

  /**
   * Erases the customer at once (the workspace owner only): every order of the phone anonymised
   * (anonymiseOrdersById), the webhook messages about them rewritten, the block-list entry removed when
   * `unblock`, and `customer.erased` ({phone_sha256, order_count, erased_at}) sent to the endpoints
   * subscribed to it when an order was erased. All or nothing.
   */
  async erase(workspace: WorkspaceActor, phoneText: unknown, options: { unblock: boolean }): Promise<Erasure> {
    const phone = customerPhone(phoneText);
    ownerOnly(workspace);
    return this.knex.transaction(async (trx) => {
      const rows: Array<{ id: string; created_at: Date }> = await trx('orders')
        .where({ workspace_id: workspace.id, phone })
        .orderBy('created_at')
        .forUpdate()
        .select('id', 'created_at');
      const ids = rows.map((row) => row.id);
      const erased = await anonymiseOrdersById(trx, workspace.id, ids);
      await scrubWebhookMessages(trx, workspace.id, rows);
      const unblocked = options.unblock ? (await trx('blocked_phones').where({ workspace_id: workspace.id, phone }).delete()) > 0 : false;
      await audit.record(trx, { workspaceId: workspace.id, action: 'customer_erased', target: customerTarget(phone), details: { orders: erased, unblocked } });
      if (erased > 0) {
        const data = { phone_sha256: phoneSha256(phone), order_count: erased, erased_at: new Date().toISOString() };
        await trx.raw("SELECT webhook_event(?::uuid, 'customer.erased', ?::jsonb)", [workspace.id, JSON.stringify(data)]);
      }
      return { phone, erased, unblocked };
    });
  }
}

/** A customer as the audit log names them: by the phone's SHA-256 (its first twelve characters shown). */
function customerTarget(phone: string): { type: 'customer'; id: string; label: string } {
  const hash = phoneSha256(phone);
  return { type: 'customer', id: hash, label: `SHA-256 ${hash.slice(0, 12)}…` };
}

/**
 * The webhook messages about the erased orders (their `order`, a `call.ended`'s `call`), kept for
 * the delivery log and its "Resend" and still to be sent when a delivery is pending, rewritten
 * with the orders as they are now: nothing sent or resent after the erasure carries the customer.
 * A message about an order is never older than the order: the log is read from the oldest one's
 * creation on (webhook_messages_created_at_index).
 */
async function scrubWebhookMessages(trx: Knex.Transaction, workspaceId: string, orders: Array<{ id: string; created_at: Date }>): Promise<void> {
  if (orders.length === 0) return;
  // The orders come oldest first.
  const since = orders[0].created_at;
  await trx.raw(
    `UPDATE webhook_messages m
        SET data = jsonb_set(m.data, '{order}', webhook_order(o))
                   || CASE WHEN m.data->'call' IS NOT NULL THEN jsonb_build_object('call', m.data->'call'
                        || jsonb_build_object(
                             'summary', NULL,
                             'changes', NULL,
                             'reply', CASE WHEN m.data->'call'->>'reply' IS NULL THEN NULL ELSE to_jsonb(''::text) END))
                      ELSE '{}'::jsonb END
       FROM orders o
      WHERE m.workspace_id = ? AND m.created_at >= ? AND m.data->'order' IS NOT NULL
        AND o.workspace_id = m.workspace_id AND o.id = ANY(?::uuid[]) AND (m.data->'order'->>'id')::uuid = o.id`,
    [workspaceId, since, orders.map((row) => row.id)],
  );
}
