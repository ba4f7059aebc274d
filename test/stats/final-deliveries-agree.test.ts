import { expect } from 'chai';
import { DELIVERY_STATUSES, FINAL_DELIVERY_STATUSES, isFinalDelivery } from '../../services/orders';
import { ordersCountDeliveriesDefinition } from '../../services/stats';
import { testKnex } from '../helpers/db';
import { functionText } from '../helpers/functions';
import { createOrder, humanShop, ORDER } from '../helpers/loop';

/**
 * Issue 54, must-hold 1: the final delivery statuses are one list (FINAL_DELIVERY_STATUSES). The
 * readers of the counters and the delivery report read it in TypeScript; the trigger that writes
 * delivery_counts is generated from it.
 */
describe('final delivery statuses: FINAL_DELIVERY_STATUSES and orders_count_deliveries agree (issue 54)', () => {
  it('the database runs the text generated from the list', async () => {
    expect(await functionText('orders_count_deliveries')).to.equal(ordersCountDeliveriesDefinition.trim());
  });

  it('every delivery status: counted by the trigger exactly when TypeScript calls it final', async () => {
    const shop = await humanShop();
    const ids: string[] = [];
    for (const [i, status] of DELIVERY_STATUSES.entries()) ids[i] = (await createOrder(shop, { ...ORDER, clientName: `Client ${status}` })).id;
    await testKnex().raw(
      `UPDATE orders o SET delivery_status = d.status, delivery_at = now()
         FROM unnest(?::uuid[], ?::text[]) AS d(id, status) WHERE o.id = d.id`,
      [ids, [...DELIVERY_STATUSES]],
    );
    const { rows } = await testKnex().raw<{ rows: Array<{ status: string; n: string }> }>(
      'SELECT status, sum(n) AS n FROM delivery_counts WHERE workspace_id = ? GROUP BY status',
      [shop.workspaceId],
    );
    const countedBySql = Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
    expect(Object.fromEntries(DELIVERY_STATUSES.map((status) => [status, countedBySql[status] ?? 0]))).to.deep.equal(
      Object.fromEntries(DELIVERY_STATUSES.map((status) => [status, isFinalDelivery(status) ? 1 : 0])),
    );
    expect(FINAL_DELIVERY_STATUSES.every((status) => (DELIVERY_STATUSES as readonly string[]).includes(status))).to.equal(true);
  });
});
