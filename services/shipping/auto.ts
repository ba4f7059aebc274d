import type { Knex } from 'knex';
import { AppError } from '../../services/shared';
import type { CarrierAccountService } from './accounts';
import type { ShipmentService } from './shipments';

/** Orders and cancellations one pass takes: the rest wait a minute. */
const BATCH = 200;

/**
 * The worker's minute pass over what the orders' triggers noted (migration 20261201_55_02):
 * - an order that became `confirmed` in a workspace with an `auto_ship` account is shipped with the
 *   first such account whose stores include the order's (none named: all), once ever;
 * - a live parcel whose order was cancelled or deleted is cancelled at the carrier where the kind
 *   can and the carrier still allows it; otherwise its reason says to cancel it at the carrier.
 */
export class AutoShipping {
  constructor(
    private readonly knex: Knex,
    private readonly accounts: CarrierAccountService,
    private readonly shipments: ShipmentService,
  ) {}

  async run(): Promise<{ shipped: number; cancelled: number }> {
    return { shipped: await this.shipConfirmed(), cancelled: await this.cancelRequested() };
  }

  private async shipConfirmed(): Promise<number> {
    const due = await this.knex('auto_ship_orders as q')
      .join('orders as o', 'o.id', 'q.order_id')
      .whereNull('q.done_at')
      .orderBy('q.queued_at')
      .limit(BATCH)
      .select('q.order_id', 'q.workspace_id', 'o.store_name', 'o.status');
    let shipped = 0;
    for (const order of due) {
      const account = await this.knex('carrier_accounts')
        .where({ workspace_id: order.workspace_id, auto_ship: true })
        .where((q) => q.whereRaw("store_names = '{}'").orWhereRaw('? = ANY(store_names)', [order.store_name ?? '']))
        .orderBy(['created_at', 'id'])
        .first('id', 'state');
      // Credentials refused: the order waits for the owner to enter them again (noted, not done).
      if (account?.state === 'credentials_refused') continue;
      if (account && order.status === 'confirmed') {
        try {
          await this.shipments.ship({ id: order.workspace_id, role: 'owner', userId: null }, { accountId: account.id, orderIds: [order.order_id] });
          shipped += 1;
        } catch (err) {
          // Already shipped by a person, or no longer shippable: nothing to do, once.
          if (!(err instanceof AppError) || err.status >= 500) throw err;
        }
      }
      await this.knex('auto_ship_orders').where({ order_id: order.order_id }).update({ done_at: this.knex.fn.now() });
    }
    return shipped;
  }

  private async cancelRequested(): Promise<number> {
    const due = await this.knex('parcels')
      .whereNotNull('cancel_requested_at')
      .whereIn('state', ['queued', 'sending', 'sent', 'uncertain'])
      .orderBy('cancel_requested_at')
      .limit(BATCH)
      .select('id', 'workspace_id', 'account_id', 'state', 'tracking');
    let cancelled = 0;
    for (const parcel of due) {
      const account = await this.accounts.open(parcel.workspace_id, parcel.account_id);
      // Not sent yet: it is simply not made (a job that takes it now finds it cancelled).
      if (parcel.state === 'queued') {
        const [done] = await this.knex('parcels')
          .where({ id: parcel.id, state: 'queued' })
          .update({ state: 'cancelled', cancel_requested_at: null, updated_at: this.knex.fn.now() }, ['id']);
        if (done) cancelled += 1;
        continue;
      }
      // Being sent: its answer decides (the next pass cancels it once made).
      if (parcel.state === 'sending') continue;
      // Its carrier may hold it without our knowing its number: a person cancels it there.
      if (!parcel.tracking) {
        await this.knex('parcels').where({ id: parcel.id }).update({ cancel_requested_at: null, cancel_at_carrier: true, updated_at: this.knex.fn.now() });
        continue;
      }
      if (account?.adapter.cancel) await this.accounts.pace(account);
      const answer = account?.adapter.cancel
        ? await account.adapter
            .cancel(this.accounts.session(account.adapter, account.credentials, account.id), parcel.tracking)
            .catch((err: Error) => ({ cancelled: false, reason: err.message }))
        : { cancelled: false, reason: null };
      if (answer.cancelled) {
        await this.knex('parcels').where({ id: parcel.id }).update({ state: 'cancelled', cancel_requested_at: null, updated_at: this.knex.fn.now() });
        cancelled += 1;
      } else
        await this.knex('parcels')
          .where({ id: parcel.id })
          .update({ cancel_requested_at: null, cancel_at_carrier: true, reason: answer.reason?.slice(0, 300) ?? null, updated_at: this.knex.fn.now() });
    }
    return cancelled;
  }
}
