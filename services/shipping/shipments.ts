import type { Knex } from 'knex';
import { z } from 'zod';
import type { Jobs } from '../../db/jobs';
import { QUEUES } from '../../db/jobs';
import { ConflictError, NotFoundError, ValidationError, isUuid, msg, parse, parseAmount } from '../../services/shared';
import type { FieldErrors, WorkspaceActor } from '../../services/shared';
import type { CarrierAccountService } from './accounts';
import { matchCity } from './cities';
import { shippingAdapter } from './carriers/registry';
import { mergeLabels } from './labels';
import type { MergedLabels } from './labels';

/** A parcel's state as the ship page and `GET /api/shipments/:id` give it. */
type ParcelState = 'queued' | 'sending' | 'sent' | 'failed' | 'uncertain' | 'needs_city' | 'needs_amount' | 'cancelled';

interface ParcelView {
  order_id: string | null;
  reference: string;
  client_name: string | null;
  city: string | null;
  state: ParcelState;
  tracking_number: string | null;
  label_url: string | null;
  reason: string | null;
  city_id: string | null;
}

export interface ShipmentView {
  id: string;
  account_id: string;
  created_at: string;
  counts: Record<ParcelState, number>;
  done: boolean;
  parcels: ParcelView[];
}

/** How many orders one "Ship" takes (carriers.md 3). */
const SHIP_MAX = 500;
const LIVE: ParcelState[] = ['queued', 'sending', 'sent', 'uncertain'];
const STATES: ParcelState[] = ['queued', 'sending', 'sent', 'failed', 'uncertain', 'needs_city', 'needs_amount', 'cancelled'];

const shipSchema = z.object({
  accountId: z.string({ error: msg('required', { label: 'accountId' }) }),
  orderIds: z
    .array(z.string(), { error: msg('required', { label: 'orderIds' }) })
    .min(1, msg('required', { label: 'orderIds' }))
    .max(SHIP_MAX, msg('shipTooMany', { max: SHIP_MAX })),
  /** A person's choice of the carrier's city for orders that needed one: order id → city id. */
  cities: z.record(z.string(), z.string().max(100)).optional(),
});

/** An order's parcel as its page shows it. */
export interface OrderParcel {
  state: ParcelState;
  account_name: string;
  carrier: string;
  tracking_number: string | null;
  reason: string | null;
  carrier_status: string | null;
  cancel_at_carrier: boolean;
  /** Its cancellation is asked of the carrier (the minute pass). */
  cancelling: boolean;
  shipment_id: string | null;
  has_label: boolean;
}

/** An order as the ship page lists it. */
export interface ShippableOrder {
  id: string;
  client_name: string;
  city: string | null;
  total_amount: string | null;
  currency: string | null;
  external_ref: string | null;
  products_name: string | null;
}

interface OrderToShip {
  id: string;
  status: string;
  delivery_status: string | null;
  city: string | null;
  total_amount: string | null;
  external_ref: string | null;
}

/**
 * Shipping confirmed orders (docs/carriers.md): a "Ship" of up to 500 orders becomes one parcel row
 * per order, each a job of its own (`ship-parcel`) so no request waits on a carrier; an order whose
 * city the carrier's list does not name without doubt, or that has no amount, waits for a person.
 * An order has at most one live parcel: a second ship of it is a 409 naming its tracking number.
 */
export class ShipmentService {
  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    private readonly accounts: CarrierAccountService,
  ) {}

  async ship(workspace: WorkspaceActor & { id: string; userId?: string | null }, body: unknown): Promise<{ shipment_id: string }> {
    const input = parse(shipSchema, body ?? {});
    const account = await this.accounts.open(workspace.id, input.accountId);
    if (!account) throw new NotFoundError(msg('carrierAccountNotFound'));
    const ids = [...new Set(input.orderIds)];
    const bad = ids.filter((id) => !isUuid(id));
    if (bad.length > 0) throw new ValidationError({ orderIds: msg('shipUnknownOrders', { ids: bad.slice(0, 5).join(', ') }) });
    const [cities, remembered] = await Promise.all([this.accounts.cities(account.id), this.accounts.choices(account.id)]);
    const chosen = input.cities ?? {};
    return this.knex.transaction(async (trx) => {
      const orders: OrderToShip[] = await trx('orders')
        .where({ workspace_id: workspace.id })
        .whereIn('id', ids)
        .orderBy('id')
        .forUpdate()
        .select('id', 'status', 'city', 'total_amount', 'external_ref', 'delivery_status');
      const missing = ids.filter((id) => !orders.some((o) => o.id === id));
      if (missing.length > 0) throw new ValidationError({ orderIds: msg('shipUnknownOrders', { ids: missing.slice(0, 5).join(', ') }) });
      const unconfirmed = orders.filter((o) => o.status !== 'confirmed');

      if (unconfirmed.length > 0) throw new ValidationError({ orderIds: msg('shipNotConfirmed', { count: unconfirmed.length }) });
      // Under the orders' row locks: a parallel ship of the same orders waits here, then finds their parcels.
      const live = await trx('parcels').whereIn('order_id', ids).whereIn('state', LIVE).select('order_id', 'tracking', 'state');
      if (live.length > 0) {
        const tracking = live.find((p) => p.tracking)?.tracking ?? null;
        throw new ConflictError(
          tracking ? msg('shipAlreadyShipped', { count: live.length, tracking }) : msg('shipAlreadyQueued', { count: live.length }),
          'already_shipped',
        );
      }
      const delivered = orders.filter((o) => o.delivery_status !== null);
      if (delivered.length > 0) throw new ConflictError(msg('shipAlreadyDelivered', { count: delivered.length }), 'already_shipped');
      // A waiting parcel of an earlier ship (a city or an amount to give) gives way to this one.
      await trx('parcels').whereIn('order_id', ids).whereIn('state', ['needs_city', 'needs_amount']).delete();
      const [shipment] = await trx('shipments')
        .insert({ workspace_id: workspace.id, account_id: account.id, created_by: workspace.userId ?? null })
        .returning('id');
      // What the carrier knows each parcel by: the store's reference, else the order's id; a reference
      // the account already used (another store's "#1001", a parcel shipped again) gets a suffix, so a
      // look-up by reference never finds another parcel.
      const wanted = orders.map((order) => order.external_ref || order.id);
      const used = new Set<string>(
        await trx('parcels')
          .where({ account_id: account.id })
          .whereRaw('reference LIKE ANY (?::text[])', [wanted.map((w) => `${w.replace(/[\\%_]/g, '\\$&')}%`)])
          .pluck('reference'),
      );
      const referenceOf = (base: string) => {
        let reference = base;
        for (let n = 2; used.has(reference); n += 1) reference = `${base}-${n}`;
        used.add(reference);
        return reference;
      };
      const rows = [];
      for (const order of orders) {
        const given = chosen[order.id] && cities.find((city) => city.id === chosen[order.id]);
        if (given && order.city) await this.accounts.remember(trx, account.id, order.city, given.id);
        const match = given ? { matched: true as const, city: given } : matchCity(order.city, cities, remembered);
        const state: ParcelState = order.total_amount === null ? 'needs_amount' : match.matched ? 'queued' : 'needs_city';
        rows.push({
          workspace_id: workspace.id,
          order_id: order.id,
          account_id: account.id,
          shipment_id: shipment.id,
          state,
          reference: referenceOf(order.external_ref || order.id),
          city_id: match.matched ? match.city.id : null,
        });
      }
      const inserted = await trx('parcels').insert(rows).returning(['id', 'state']);
      await this.jobs.sendMany(
        trx,
        QUEUES.shipParcel.name,
        inserted.filter((parcel) => parcel.state === 'queued').map((parcel) => ({ data: { parcelId: parcel.id as string } })),
      );
      return { shipment_id: shipment.id as string };
    });
  }

  /**
   * What a person gives on the shipment's page for the orders that waited: the carrier's city
   * (`cities`: order id → city id; remembered for that written city and account) and the amount to
   * collect (`amounts`: order id → amount as typed, an edit of the order). Each order complete is
   * queued; an amount refused is a 400 naming that order's field, nothing written for it.
   */
  async resolve(workspaceId: string, shipmentId: string, body: unknown): Promise<void> {
    const shipment = isUuid(shipmentId) ? await this.knex('shipments').where({ id: shipmentId, workspace_id: workspaceId }).first('id', 'account_id') : null;
    if (!shipment) throw new NotFoundError(msg('shipmentNotFound'));
    const given = parse(
      z.object({ cities: z.record(z.string(), z.string().max(100)).optional(), amounts: z.record(z.string(), z.string().max(40)).optional() }),
      body ?? {},
    );
    const [cities, remembered] = await Promise.all([this.accounts.cities(shipment.account_id), this.accounts.choices(shipment.account_id)]);
    const waiting = await this.knex('parcels as p')
      .join('orders as o', 'o.id', 'p.order_id')
      .where({ 'p.shipment_id': shipmentId })
      .whereIn('p.state', ['needs_city', 'needs_amount'])
      .select('p.id', 'p.order_id', 'p.state', 'p.city_id', 'p.cod_amount', 'o.city');
    // The amounts first: the cash this parcel collects (the confirmed order itself is not edited).
    const refused: FieldErrors = {};
    const amounts = new Map<string, string>();
    for (const parcel of waiting.filter((p) => p.state === 'needs_amount')) {
      const typed = given.amounts?.[parcel.order_id]?.trim();
      if (!typed) continue;
      const amount = parseAmount(typed);
      if (amount === undefined || Number(amount) <= 0 || Number(amount) >= 1e10) refused[`amount_${parcel.order_id}`] = msg('amountInvalid');
      else amounts.set(parcel.id, amount);
    }
    await this.knex.transaction(async (trx) => {
      const queued: string[] = [];
      for (const parcel of waiting) {
        const order = await trx('orders').where({ id: parcel.order_id }).forUpdate().first('total_amount', 'status');
        // The order's own amount, else one given now, else one given at an earlier step (then the city was missing).
        const amount = order?.total_amount ?? amounts.get(parcel.id) ?? parcel.cod_amount ?? null;
        if (order?.status !== 'confirmed' || amount === null) continue;
        const chosen = cities.find((c) => c.id === given.cities?.[parcel.order_id]);
        if (chosen && parcel.city) await this.accounts.remember(trx, shipment.account_id, parcel.city, chosen.id);
        const match = chosen ? { matched: true as const, city: chosen } : parcel.city_id ? null : matchCity(parcel.city, cities, remembered);
        const cityId = chosen?.id ?? parcel.city_id ?? (match?.matched ? match.city.id : null);
        await trx('parcels')
          .where({ id: parcel.id })
          .update({
            state: cityId ? 'queued' : 'needs_city',
            city_id: cityId,
            cod_amount: order.total_amount === null ? amount : null,
            updated_at: trx.fn.now(),
          });
        if (cityId) queued.push(parcel.id);
      }
      await this.jobs.sendMany(
        trx,
        QUEUES.shipParcel.name,
        queued.map((parcelId) => ({ data: { parcelId } })),
      );
    });
    if (Object.keys(refused).length > 0) throw new ValidationError(refused);
  }

  /**
   * The orders the ship page offers: the given ones (a selection on /orders) or else the newest
   * confirmed orders without a parcel or a delivery, at most 500; never one with a live parcel.
   */
  async shippable(workspaceId: string, orderIds: readonly string[]): Promise<ShippableOrder[]> {
    const query = this.knex('orders as o')
      .where({ 'o.workspace_id': workspaceId, 'o.status': 'confirmed' })
      .whereNotExists(this.knex('parcels as p').whereRaw('p.order_id = o.id').whereIn('p.state', LIVE))
      .orderBy([
        { column: 'o.created_at', order: 'desc' },
        { column: 'o.id', order: 'desc' },
      ])
      .limit(SHIP_MAX)
      .select('o.id', 'o.client_name', 'o.city', 'o.total_amount', 'o.currency', 'o.external_ref', 'o.products_name');
    const ids = orderIds.filter(isUuid);
    if (ids.length > 0) query.whereIn('o.id', ids);
    else query.whereNull('o.delivery_status');
    return query;
  }

  /** The order's latest parcel, as its page shows it (null: never shipped with a carrier account). */
  async parcelOf(workspaceId: string, orderId: string): Promise<OrderParcel | null> {
    if (!isUuid(orderId)) return null;
    const row = await this.knex('parcels as p')
      .join('carrier_accounts as a', 'a.id', 'p.account_id')
      .where({ 'p.workspace_id': workspaceId, 'p.order_id': orderId })
      .orderBy([
        { column: 'p.created_at', order: 'desc' },
        { column: 'p.id', order: 'desc' },
      ])
      .first(
        'p.state',
        'p.tracking',
        'p.reason',
        'p.carrier_status',
        'p.cancel_at_carrier',
        'p.cancel_requested_at',
        'p.shipment_id',
        'p.label_url',
        'a.name as account_name',
        'a.kind',
      );
    if (!row) return null;
    return {
      state: row.state,
      account_name: row.account_name,
      carrier: shippingAdapter(row.kind)?.title ?? row.kind,
      tracking_number: row.tracking,
      reason: row.reason,
      carrier_status: row.carrier_status,
      cancel_at_carrier: row.cancel_at_carrier,
      cancelling: !!row.cancel_requested_at,
      shipment_id: row.shipment_id,
      has_label: row.state === 'sent' && (!!row.label_url || !!shippingAdapter(row.kind)?.label),
    };
  }

  /** The labels of a shipment's parcels, or of the parcels of the given orders, in one PDF. */
  async labels(workspaceId: string, which: { shipmentId?: string; orderIds?: readonly string[] }): Promise<MergedLabels> {
    const query = this.knex('parcels').where({ workspace_id: workspaceId, state: 'sent' }).orderBy(['created_at', 'id']).limit(SHIP_MAX);
    if (which.shipmentId) {
      if (!isUuid(which.shipmentId)) throw new NotFoundError(msg('shipmentNotFound'));
      query.where({ shipment_id: which.shipmentId });
    } else query.whereIn('order_id', (which.orderIds ?? []).filter(isUuid));
    const ids: string[] = await query.pluck('id');
    return mergeLabels(this.knex, this.accounts, workspaceId, ids);
  }

  async get(workspaceId: string, shipmentId: string): Promise<ShipmentView> {
    const shipment = isUuid(shipmentId)
      ? await this.knex('shipments as s')
          .join('carrier_accounts as a', 'a.id', 's.account_id')
          .where({ 's.id': shipmentId, 's.workspace_id': workspaceId })
          .first('s.id', 's.account_id', 's.created_at', 'a.kind')
      : null;
    if (!shipment) throw new NotFoundError(msg('shipmentNotFound'));
    const label = !!shippingAdapter(shipment.kind)?.label;
    const rows: Omit<ParcelView, 'label'>[] = await this.knex('parcels as p')
      .leftJoin('orders as o', 'o.id', 'p.order_id')
      .where({ 'p.shipment_id': shipmentId })
      .orderBy(['p.created_at', 'p.id'])
      .select('p.order_id', 'p.reference', 'o.client_name', 'o.city', 'p.state', 'p.tracking as tracking_number', 'p.label_url', 'p.reason', 'p.city_id');
    const parcels: ParcelView[] = rows.map((row) => ({ ...row, label }));
    const counts = Object.fromEntries(STATES.map((state) => [state, parcels.filter((p) => p.state === state).length])) as Record<ParcelState, number>;
    return {
      id: shipment.id,
      account_id: shipment.account_id,
      created_at: new Date(shipment.created_at).toISOString(),
      counts,
      done: counts.queued + counts.sending === 0,
      parcels,
    };
  }
}
