import type { IncomingHttpHeaders } from 'node:http';
import type { Knex } from 'knex';
import type { Prepared } from '../../db/prepared';
import { queryPrepared } from '../../db/prepared';
import type { Secrets } from '../../integrations/secrets';
import type { IncomingFulfillment, IncomingOrder, StoreMessage } from './platforms/reader';
import { applyDeliveryEvents, undoDeliveryNews } from '../deliveries';
import type { DeliveryEvent } from '../deliveries';
import { parseStoreJson, UnreadableMessage } from './platforms/reader';
import { AppError, ValidationError, isUuid, readInboundJson, unsafeTextAt, decode, msg, plain, recode } from '../../services/shared';
import type { OperationService, OrderStatus, Order, OrderService, ValidOrder } from '../orders';
import { amountText, transition, validNewOrder } from '../orders';
import type { EventResult } from './connections';
import type { StoreKind } from './platforms/registry';
import { STORE_PLATFORMS, storePlatform } from './platforms/registry';
import type { Message } from '../../services/shared';

/** The kinds whose pings are answered while a connection is set up in one click, as an SQL list. */
const PINGING_WHILE_PENDING = STORE_PLATFORMS.filter((platform) => 'pingsWhilePending' in platform && platform.pingsWhilePending)
  .map((platform) => `'${platform.kind}'`)
  .join(', ');

/** The connection a message names, read on every message (prepared: a flash sale's hot path). */
const CONNECTION: Prepared = {
  name: 'ocs-store-connection',
  text: `SELECT id, workspace_id, kind, name, shop, connected_by, secret, cod_only, pending FROM store_connections WHERE id = $1 AND (enabled OR (pending AND kind IN (${PINGING_WHILE_PENDING || 'NULL'})))`,
};

/** What the store is answered: refused (401, 404, 400) with nothing recorded, or 200 with the outcome logged. */
export type IntakeAnswer = { status: 200; result: EventResult | 'ignored' } | { status: 400 | 401 | 404 };

/** A connection as the intake reads it, found before the message's body is read. */
export interface IntakeConnection {
  id: string;
  workspace_id: string;
  kind: StoreKind;
  name: string;
  /** The platform's name of the shop (Shopify's `x.myshopify.com`); null for a custom store. */
  shop: string | null;
  /** `oauth` when made by the platform's approval: for Shopify, signed with the app's one client secret. */
  connected_by: 'oauth' | 'manual' | null;
  secret: string;
  cod_only: boolean;
  /** Being set up in one click (a platform that pings, `pingsWhilePending`): its pings are answered, nothing else. */
  pending: boolean;
}

/** An order's row as intake reads it: with the store's time of the newest update applied. */
type StoredOrder = Order & { external_updated_at: Date | null };

interface Outcome {
  result: EventResult;
  orderId?: string | null;
  /** Why it was refused or left alone, each with its code. */
  reasons?: Message[];
}

/** Statuses an upstream cancellation leaves alone: the call's outcome is known, or it was cancelled already. */
const SETTLED: readonly OrderStatus[] = ['confirmed', 'unconfirmed'];

/** The fields a store's update changes while our order is pending, as the order and the columns name them. */
const FOLLOWED = [
  ['client_name', 'clientName'],
  ['phone', 'phone'],
  ['address', 'address'],
  ['products_name', 'productsName'],
  ['external_ref', 'externalRef'],
  ['total_amount', 'totalAmount'],
  ['currency', 'currency'],
  ['note', 'note'],
  ['city', 'city'],
] as const;

/** A field error as the connection's log shows it: the message of each bad field, as a form would. */
function reasonsOf(err: ValidationError): Message[] {
  return Object.values(err.messages());
}

/** Reasons as the log keeps them: in English for the API (`reason`), by their codes for the pages (`reason_codes`). */
function logged(reasons: Message[] | undefined): { reason: string | null; reason_codes: string | null } {
  if (!reasons?.length) return { reason: null, reason_codes: null };
  return { reason: reasons.map(plain).join('; ').slice(0, 500), reason_codes: JSON.stringify(reasons.map((text) => decode(text))) };
}

/**
 * The one intake rule, whatever the store (STYLE 12): the adapter verifies and reads the message;
 * here it is deduplicated by delivery and by (connection, store id), checked by the rules of
 * POST /api/orders, and becomes a created, updated or cancelled order, or a logged refusal. Every
 * signed message we understand is answered 200 (a store that gets 4xx drops its subscription);
 * its outcome is in the connection's event log, written in the same transaction as the order.
 */
export class StoreIntakeService {
  constructor(
    private readonly knex: Knex,
    private readonly orders: OrderService,
    private readonly operations: OperationService,
    /** Opens the connection's signing key (sealed at rest): microseconds, no query. */
    private readonly secrets: Secrets,
  ) {}

  /**
   * The connection a message is sent to, looked up before its body is read; null answers 404. A
   * WooCommerce connection being set up in one click is found too: WooCommerce pings each webhook we
   * register for it, and the ping must get 200 (anything else it sends is 404 until it is set up).
   */
  async connection(connectionId: string): Promise<IntakeConnection | null> {
    const [connection] = isUuid(connectionId) ? await queryPrepared<IntakeConnection>(this.knex, CONNECTION, [connectionId]) : [];
    return connection ? this.secrets.openFields(connection, ['secret']) : null;
  }

  async receive(connection: IntakeConnection, raw: Buffer, headers: IncomingHttpHeaders): Promise<IntakeAnswer> {
    const platform = storePlatform(connection.kind)!;
    const adapter = platform.reader;
    if (adapter.isPing?.(raw)) return { status: 200, result: 'ignored' };
    if (connection.pending) return { status: 404 };
    if (!adapter.verify(raw, headers, connection.secret)) return { status: 401 };
    if (platform.sentFor && !platform.sentFor(headers, connection)) return { status: 401 };
    // Numbers stay the text the store wrote: ids above 2^53 are never rounded.
    const read = readInboundJson(raw, parseStoreJson);
    if (!read.ok && !read.unsafe) return { status: 400 };
    const body = read.value;
    let message: StoreMessage;
    try {
      // A body holding text Postgres refuses is read for its topic only (then `rejected`, below).
      message = adapter.read(body, headers, raw);
    } catch (err) {
      if (err instanceof SyntaxError || err instanceof UnreadableMessage) return { status: 400 };
      throw err;
    }
    if (message.action === 'ignore') return { status: 200, result: 'ignored' };
    if (!read.ok) return { status: 200, result: await this.rejectUnsafe(connection, message.topic, read) };
    if (message.action === 'uninstalled') {
      // The topic header is not signed: only the shop's own record, naming this connection's shop, uninstalls.
      if (connection.connected_by !== 'oauth' || !platform.uninstalls?.(body, connection.shop)) return { status: 200, result: 'ignored' };
      // The app's token is revoked with it: nothing can be written back any more.
      await this.knex('store_connections').where({ id: connection.id }).update({ enabled: false, disabled_reason: 'uninstalled', write_back: null });
      return { status: 200, result: 'ignored' };
    }
    if (message.action === 'order' && (await this.createFast(connection, message))) return { status: 200, result: 'created' };
    const result = await this.knex.transaction((trx) => this.apply(trx, connection, message));
    return { status: 200, result };
  }

  /**
   * A signed message holding text Postgres refuses (NUL, an unpaired surrogate) or nested too deep:
   * logged as `rejected` with the place it was found, and nothing else of it is kept.
   */
  private async rejectUnsafe(connection: IntakeConnection, topic: string, unsafe: { field: string; message: Message }): Promise<EventResult> {
    const field = unsafeTextAt(unsafe.field) ? 'a field name' : unsafe.field.slice(0, 200);
    await this.knex('store_events').insert({
      connection_id: connection.id,
      topic: topic.slice(0, 100),
      result: 'rejected',
      reason: `${field}: ${plain(unsafe.message)}`.slice(0, 500),
      reason_codes: JSON.stringify([decode(unsafe.message)]),
    });
    return 'rejected';
  }

  /**
   * The flash-sale path: a valid new cash-on-delivery order and its `created` event in one statement.
   * False when anything is not plainly new (a delivery seen before, an order we have, no order
   * handler, a parallel message): nothing was written, and `apply` decides with the locks it takes.
   */
  private async createFast(connection: IntakeConnection, message: Extract<StoreMessage, { action: 'order' }>): Promise<boolean> {
    const incoming = message.order;
    if (incoming.cancelled || (connection.cod_only && !incoming.cashOnDelivery)) return false;
    let data: ValidOrder;
    try {
      data = this.valid(incoming, connection);
    } catch (err) {
      if (err instanceof ValidationError) return false;
      throw err;
    }
    const created = await this.orders.insertFromStoreMessage(
      connection.workspace_id,
      data,
      { source: connection.kind, storeConnectionId: connection.id, externalUpdatedAt: incoming.updatedAt },
      { topic: message.topic.slice(0, 100), key: message.key.slice(0, 300) },
    );
    return created !== null;
  }

  private async apply(
    trx: Knex.Transaction,
    connection: IntakeConnection,
    message: Exclude<StoreMessage, { action: 'ignore' | 'uninstalled' }>,
  ): Promise<EventResult> {
    const externalId =
      message.action === 'order' ? message.order.externalId : message.action === 'fulfillment' ? message.fulfillment.externalId : message.externalId;
    const event = { connection_id: connection.id, topic: message.topic.slice(0, 100), external_id: externalId };
    // The delivery is claimed first: a retry of it running alongside waits here, then finds it taken.
    const claimed = await trx.raw(
      `INSERT INTO store_events (connection_id, topic, message_key, external_id, result) VALUES (?, ?, ?, ?, 'duplicate')
       ON CONFLICT (connection_id, message_key) WHERE message_key IS NOT NULL DO NOTHING RETURNING id`,
      [connection.id, event.topic, message.key.slice(0, 300), externalId],
    );
    const outcome: Outcome = !claimed.rows[0]
      ? { result: 'duplicate' }
      : message.action === 'order'
        ? await this.applyOrder(trx, connection, message.order)
        : message.action === 'fulfillment'
          ? await this.ship(trx, connection, message.fulfillment)
          : message.action === 'delete'
            ? await this.cancel(trx, await this.existing(trx, connection.id, externalId))
            : { result: 'ignored_unchanged', reasons: [msg('cancelUnchanged')] };
    const row = { result: outcome.result, order_id: outcome.orderId ?? null, ...logged(outcome.reasons) };
    if (claimed.rows[0]) await trx('store_events').where({ id: claimed.rows[0].id }).update(row);
    else await trx('store_events').insert({ ...event, ...row });
    return outcome.result;
  }

  /** A shipment of the store's order becomes its delivery (docs/delivery.md), through the one delivery rule. */
  private async ship(trx: Knex.Transaction, connection: IntakeConnection, shipped: IncomingFulfillment): Promise<Outcome> {
    const order = await this.existing(trx, connection.id, shipped.externalId);
    if (!order) return { result: 'ignored_unchanged', reasons: [msg('shipmentUnknownOrder')] };
    if (shipped.cancelled) {
      // A cancelled shipment undoes what it said: the delivery before it, another shipment's, or none.
      const undone = await undoDeliveryNews(trx, { workspaceId: connection.workspace_id, orderId: order.id, source: 'store', key: shipped.id });
      return undone.changed ? { result: 'updated', orderId: order.id } : { result: 'ignored_unchanged', orderId: order.id };
    }
    const current = (order as StoredOrder & { delivery_status: DeliveryEvent['status'] | null }).delivery_status;
    const news = {
      carrier: shipped.carrier,
      trackingNumber: shipped.trackingNumber,
      carrierStatus: shipped.carrierStatus,
      at: shipped.at ?? new Date().toISOString(),
      source: 'store' as const,
      by: connection.name,
      key: shipped.id,
    };
    // A shipment is a parcel handed to the carrier: its first news of an attempt also says it was shipped.
    const events: Array<Omit<DeliveryEvent, 'workspaceId'>> =
      shipped.status === 'attempted' && !current
        ? [
            { ...news, orderId: order.id, status: 'shipped', carrierStatus: null },
            { ...news, orderId: order.id, status: 'attempted' },
          ]
        : [{ ...news, orderId: order.id, status: shipped.status ?? current ?? 'shipped' }];
    const applied = await applyDeliveryEvents(trx, connection.workspace_id, events);
    const isNews = applied.some((one) => one.changed || one.attempted);
    return isNews ? { result: 'updated', orderId: order.id } : { result: 'ignored_unchanged', orderId: order.id };
  }

  private existing(trx: Knex.Transaction, connectionId: string, externalId: string): Promise<StoredOrder | undefined> {
    return trx('orders').where({ store_connection_id: connectionId, external_id: externalId }).forUpdate().first();
  }

  private async applyOrder(trx: Knex.Transaction, connection: IntakeConnection, incoming: IncomingOrder): Promise<Outcome> {
    const current = await this.existing(trx, connection.id, incoming.externalId);
    if (current) return incoming.cancelled ? this.cancel(trx, current) : this.follow(trx, current, incoming, connection);
    // An update for an order we never saw creates it (a store may send the update first).
    if (incoming.cancelled) return { result: 'ignored_unchanged' };
    if (connection.cod_only && !incoming.cashOnDelivery) return { result: 'ignored_paid' };
    let data: ValidOrder;
    try {
      data = this.valid(incoming, connection);
    } catch (err) {
      if (err instanceof ValidationError) return { result: 'rejected', reasons: reasonsOf(err) };
      throw err;
    }
    try {
      const order = await this.orders.insertFromStore(trx, connection.workspace_id, data, {
        source: connection.kind,
        storeConnectionId: connection.id,
        externalUpdatedAt: incoming.updatedAt,
      });
      if (order) return { result: 'created', orderId: order.id };
    } catch (err) {
      // No order handler: the store still gets its 200; the log says what to set up.
      if (err instanceof AppError && err.code === 'NO_ORDER_HANDLER') return { result: 'rejected', reasons: [recode(err.page)] };
      throw err;
    }
    // Created by another message meanwhile (committed before our insert gave way): follow it.
    // (A conflict is only with a committed row: one rolled back would not have stopped our insert.)
    const created = await this.existing(trx, connection.id, incoming.externalId);
    return this.follow(trx, created!, incoming, connection);
  }

  private valid(incoming: IncomingOrder, connection: IntakeConnection): ValidOrder {
    return validNewOrder({
      clientName: incoming.clientName,
      phone: incoming.phone,
      storeName: connection.name,
      productsName: incoming.productsName,
      address: incoming.address,
      externalId: incoming.externalId,
      externalRef: incoming.externalRef,
      totalAmount: incoming.totalAmount,
      currency: incoming.currency,
      // A note or city longer than an order keeps is cut rather than costing the order.
      note: incoming.note?.slice(0, 1000) ?? null,
      city: incoming.city?.slice(0, 100) ?? null,
    });
  }

  /** While our order is pending, its content follows the store's; afterwards it is left alone. */
  private async follow(trx: Knex.Transaction, current: StoredOrder, incoming: IncomingOrder, connection: IntakeConnection): Promise<Outcome> {
    if (current.status !== 'pending') return { result: 'ignored_unchanged', orderId: current.id };
    // Webhooks are not ordered: an update older than the newest one applied changes nothing. One of
    // the same time is applied when its content differs (two edits within the store's clock tick).
    const applied = current.external_updated_at ? new Date(current.external_updated_at).getTime() : null;
    const given = incoming.updatedAt ? new Date(incoming.updatedAt).getTime() : null;
    if (applied !== null && given !== null && given < applied) return { result: 'ignored_unchanged', orderId: current.id };
    let data: ValidOrder;
    try {
      data = this.valid(incoming, connection);
    } catch (err) {
      if (err instanceof ValidationError) return { result: 'rejected', orderId: current.id, reasons: reasonsOf(err) };
      throw err;
    }
    // Amounts compared as each currency shows them (`349.00`, TND `89.350`).
    const before: Record<string, unknown> = { ...current, total_amount: amountText(current.total_amount, current.currency) };
    const after: Record<string, unknown> = { ...data, totalAmount: amountText(data.totalAmount, data.currency) };
    const patch: Record<string, unknown> = Object.fromEntries(
      FOLLOWED.filter(([column, field]) => (after[field] ?? null) !== (before[column] ?? null)).map(([column, field]) => [column, data[field] ?? null]),
    );
    const newer = given !== null && (applied === null || given > applied);
    if (Object.keys(patch).length === 0) {
      if (newer) await trx('orders').where({ id: current.id }).update({ external_updated_at: incoming.updatedAt });
      return { result: 'ignored_unchanged', orderId: current.id };
    }
    if (newer) patch.external_updated_at = incoming.updatedAt;
    await trx('orders').where({ id: current.id }).update(patch);
    return { result: 'updated', orderId: current.id };
  }

  /** Cancelled upstream: no call is placed any more and the order is unconfirmed, unless its outcome is known. */
  private async cancel(trx: Knex.Transaction, current: Order | undefined): Promise<Outcome> {
    if (!current) return { result: 'ignored_unchanged' };
    if (SETTLED.includes(current.status)) {
      return { result: 'ignored_unchanged', orderId: current.id, reasons: [msg('alreadyHere', { status: current.status })] };
    }
    // The store made this outcome: the write-back trigger (migration 20261124_22) does not tell it back.
    await trx.raw("SELECT set_config('ocs.store_cancellation', 'on', true)");
    await transition(trx, current.workspace_id, [current.id], 'unconfirmed', 'store-cancelled');
    await this.operations.cancelOpen(trx, current.id);
    return { result: 'cancelled', orderId: current.id };
  }
}
