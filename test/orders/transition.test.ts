import { expect } from 'chai';
import type { OrderStatus, StatusCause } from '../../services/orders';
import { ORDER_STATUSES, STATUS_TRANSITIONS, transition } from '../../services/orders';
import type { SignedIn } from '../helpers/app';
import { signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, ORDER } from '../helpers/loop';

/**
 * The orders domain's one entry point for moving an order's status (issue 54, must-hold 3): each
 * cause writes its statuses, moves only the orders its guard allows, in the caller's transaction and
 * workspace, and the status counts follow each move.
 */
const knex = () => testKnex();

async function ordersOf(shop: SignedIn, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1) ids.push((await createOrder(shop, { ...ORDER, phone: `06123450${10 + i}` })).id);
  return ids;
}

/** Puts the orders in a status as the test needs them (a fixture, not a transition). */
async function put(ids: string[], status: OrderStatus): Promise<void> {
  await knex()('orders').whereIn('id', ids).update({ status });
}

const statusOf = async (id: string) => (await knex()('orders').where({ id }).first('status')).status as OrderStatus;

/** The workspace's status counts as the counters hold them, and as its orders are. */
async function counts(workspaceId: string) {
  const { rows: counted } = await knex().raw(
    'SELECT status, sum(n)::int AS n FROM order_status_counts WHERE workspace_id = ? GROUP BY status HAVING sum(n) <> 0 ORDER BY status',
    [workspaceId],
  );
  const { rows: actual } = await knex().raw('SELECT status, count(*)::int AS n FROM orders WHERE workspace_id = ? GROUP BY status ORDER BY status', [
    workspaceId,
  ]);
  return { counted, actual };
}

const causes = Object.keys(STATUS_TRANSITIONS) as StatusCause[];

describe('orders: the status transition (issue 54)', function () {
  this.timeout(60_000);
  let shop: SignedIn;

  before(async () => {
    shop = await signUp();
  });

  for (const cause of causes) {
    const rule: { to: readonly OrderStatus[]; from?: readonly OrderStatus[] } = STATUS_TRANSITIONS[cause];
    it(`${cause}: writes each of its statuses${rule.from ? ` from ${rule.from.join(' or ')} only` : ''}, and the counts follow`, async () => {
      const workspaceId = shop.workspaceId!;
      for (const to of rule.to) {
        const ids = await ordersOf(shop, ORDER_STATUSES.length);
        // Every status as the order's before: those the guard allows move, the others stay.
        await Promise.all(ids.map((id, i) => put([id], ORDER_STATUSES[i])));
        const moved = await knex().transaction((trx) => transition(trx, workspaceId, ids, to, cause));
        const allowed = ids.filter((_, i) => !rule.from || rule.from.includes(ORDER_STATUSES[i]));
        expect(moved.map((row) => row.id).sort(), `${cause} → ${to}`).to.deep.equal([...allowed].sort());
        for (const [i, id] of ids.entries())
          expect(await statusOf(id), `${cause} → ${to} from ${ORDER_STATUSES[i]}`).to.equal(allowed.includes(id) ? to : ORDER_STATUSES[i]);
      }
      const { counted, actual } = await counts(workspaceId);
      expect(counted).to.deep.equal(actual);
    });
  }

  it('moves only the workspace’s orders, none for an empty list, and rolls back with its caller', async () => {
    const other = await signUp();
    const [mine] = await ordersOf(shop, 1);
    const [theirs] = await ordersOf(other, 1);
    const moved = await transition(knex(), shop.workspaceId!, [mine, theirs], 'calling', 'call-claimed');
    expect(moved.map((row) => row.id)).to.deep.equal([mine]);
    expect(await statusOf(theirs)).to.equal('pending');
    expect(await transition(knex(), shop.workspaceId!, [], 'pending', 'requeued')).to.deep.equal([]);
    await knex()
      .transaction(async (trx) => {
        await transition(trx, shop.workspaceId!, [mine], 'confirmed', 'call-ended');
        throw new Error('rolled back');
      })
      .catch((err: Error) => expect(err.message).to.equal('rolled back'));
    expect(await statusOf(mine)).to.equal('calling');
  });

  it('takes its orders from a subquery, and goes whole into a statement of the caller’s (WITH … AS)', async () => {
    const [order] = await ordersOf(shop, 1);
    await put([order], 'processing');
    const operation = await knex()('orders').where({ id: order }).first('operation_id');
    const ofOperation = knex()('operations').where({ id: operation.operation_id }).select('order_id');
    expect(await transition(knex(), shop.workspaceId!, ofOperation, 'calling', 'message-sent')).to.deep.equal([{ id: order }]);
    const { rows } = await knex().raw('WITH moved AS (?) SELECT count(*)::int AS n FROM moved', [
      transition(knex(), shop.workspaceId!, [order], 'no-answer', 'call-ended'),
    ]);
    expect(rows).to.deep.equal([{ n: 1 }]);
    expect(await statusOf(order)).to.equal('no-answer');
    const { counted, actual } = await counts(shop.workspaceId!);
    expect(counted).to.deep.equal(actual);
  });
});
