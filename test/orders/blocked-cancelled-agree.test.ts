import { expect } from 'chai';
import { ordersFollowOperationDefinition } from '../../services/orders';
import { testKnex } from '../helpers/db';
import { functionText } from '../helpers/functions';
import { createOrder, humanShop, ORDER } from '../helpers/loop';

/**
 * Issue 54, must-hold 1: "a blocked number's order is cancelled from the start" is one text
 * (firstOperationStatusSql). The statement that creates an order's operation and the trigger that
 * sets the order's op_status in that same statement both use it, so they agree both ways.
 */
describe('blocked → cancelled: the new operation and the order’s op_status agree (issue 54)', () => {
  it('the database runs the text generated from the rule', async () => {
    expect(await functionText('orders_follow_operation')).to.equal(ordersFollowOperationDefinition.trim());
  });

  it('a blocked number: operation and op_status cancelled; another number: both pending', async () => {
    const shop = await humanShop();
    await shop.agent.post('/api/settings/blocked-phones').send({ phone: '0661234567' }).expect(201);
    const blocked = await createOrder(shop, { ...ORDER, phone: '0661234567' });
    const free = await createOrder(shop, ORDER);
    const rows = await testKnex()('orders as o')
      .join('operations as p', 'p.id', 'o.operation_id')
      .whereIn('o.id', [blocked.id, free.id])
      .select('o.id', 'o.flags', 'o.op_status', 'p.status');
    const byId = Object.fromEntries(rows.map((row) => [row.id, row]));
    expect(byId[blocked.id]).to.deep.include({ op_status: 'cancelled', status: 'cancelled' });
    expect(byId[blocked.id].flags).to.include('blocked_phone');
    expect(byId[free.id]).to.deep.include({ op_status: 'pending', status: 'pending' });
    expect(byId[free.id].flags).to.not.include('blocked_phone');
  });
});
