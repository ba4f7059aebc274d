import { expect } from 'chai';
import { OUTCOMES } from '../../services/calls';
import { ORDER_STATUSES } from '../../services/orders';
import request from 'supertest';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/** GET /api/stats. */
type Shop = SignedIn & { workspaceId: string; handlerId: string };

const KEYS = [
  'from',
  'to',
  'orders',
  'by_status',
  'confirmation_rate',
  'blocked',
  'calls',
  'answered_rate',
  'average_calls_to_confirm',
  'confirmed_amount',
  'by_day',
  'by_store',
  'by_channel',
  'delivery',
];
const DAY_MS = 86_400_000;

async function shop(): Promise<Shop> {
  const s = await signUp();
  const handler = await s.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId!, handlerId: handler.body.id };
}

/** Today's date in Morocco, as the server reads it. */
function moroccoToday(): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Casablanca' }).format(new Date());
}

function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(from); t <= Date.parse(to); t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

const zeroStatuses = () => Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0]));

interface Seed {
  created_at: string;
  status?: string;
  store_name?: string;
  /** The order's operations, oldest first (the last one is the latest). */
  operations?: string[];
  /** Calls of the latest operation: an outcome (ended), null (in progress) or 'dropped'. */
  calls?: Array<{ outcome: string | null | 'dropped'; started_at?: string }>;
}

/** One order by SQL with its operations and calls, exactly as described. */
async function seed(s: Shop, order: Seed): Promise<string> {
  const db = testKnex();
  const [{ id }] = await db('orders').insert(
    {
      workspace_id: s.workspaceId,
      client_name: 'Client',
      phone: '+212612345678',
      store_name: order.store_name ?? 'Atlas',
      products_name: 'Oil',
      status: order.status ?? 'pending',
      created_at: order.created_at,
    },
    ['id'],
  );
  let operationId: string | undefined;
  for (const [i, status] of (order.operations ?? []).entries()) {
    const [op] = await db('operations').insert(
      {
        workspace_id: s.workspaceId,
        order_id: id,
        agent_id: s.handlerId,
        direction: 'outbound',
        status,
        next_attempt_at: status === 'pending' ? order.created_at : null,
        created_at: new Date(Date.parse(order.created_at) + i * 60_000).toISOString(),
      },
      ['id'],
    );
    operationId = op.id;
  }
  for (const [i, call] of (order.calls ?? []).entries()) {
    const started = call.started_at ?? new Date(Date.parse(order.created_at) + (i + 1) * 600_000).toISOString();
    const ended = new Date(Date.parse(started) + 60_000).toISOString();
    await db('calls').insert({
      workspace_id: s.workspaceId,
      operation_id: operationId,
      kind: 'human',
      attempt: i + 1,
      started_at: started,
      ...(call.outcome === 'dropped' ? { dropped_at: ended } : call.outcome === null ? {} : { ended_at: ended, outcome: call.outcome }),
    });
  }
  return id;
}

describe('GET /api/stats', () => {
  it('the documented shape, keys in order; an empty workspace: zeros, nulls, every day of the default period', async () => {
    const s = await shop();
    const before = moroccoToday();
    const res = await s.agent
      .get('/api/stats')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    const after = moroccoToday();
    expect(Object.keys(res.body)).to.deep.equal(KEYS);
    expect(Object.keys(res.body.by_status)).to.deep.equal([...ORDER_STATUSES]);
    // The last 30 days ending today in Morocco (the date may turn during the request).
    const today = res.body.to === before ? before : after;
    expect(res.body.to).to.equal(today);
    const from = new Date(Date.parse(today) - 29 * DAY_MS).toISOString().slice(0, 10);
    expect(res.body).to.deep.equal({
      from,
      to: today,
      orders: 0,
      by_status: zeroStatuses(),
      confirmation_rate: null,
      blocked: 0,
      calls: 0,
      answered_rate: null,
      average_calls_to_confirm: null,
      confirmed_amount: '0.00',
      by_day: daysBetween(from, today).map((date) => ({ date, orders: 0, confirmed: 0, confirmed_amount: '0.00' })),
      by_store: [],
      by_channel: Object.fromEntries(
        ['human', 'voice', 'whatsapp'].map((channel) => [
          channel,
          {
            calls: 0,
            answered: 0,
            answered_rate: null,
            by_outcome: Object.fromEntries(OUTCOMES.map((o) => [o, 0])),
            delivered: 0,
            refused: 0,
            returned: 0,
            lost: 0,
            delivered_rate: null,
          },
        ]),
      ),
      delivery: res.body.delivery,
    });
    // No delivery ended: zeros and nulls (test/stats/delivery-figures.test.ts has the figures).
    expect(res.body.delivery).to.include({ delivered: 0, refused: 0, returned: 0, lost: 0, delivered_rate: null });
    expect(res.body.delivery.by_day).to.have.length(30);
    expect(res.body.by_day).to.have.length(30);
    for (const day of res.body.by_day) expect(Object.keys(day)).to.deep.equal(['date', 'orders', 'confirmed', 'confirmed_amount']);
  });

  it('the default period counts today’s orders (created now)', async () => {
    const s = await shop();
    await s.agent.post('/api/orders').send({ clientName: 'A', phone: '0612345678', storeName: 'Atlas', productsName: 'Oil' }).expect(201);
    await s.agent.post('/api/orders').send({ clientName: 'B', phone: '0612345678', storeName: 'Atlas', productsName: 'Oil', status: 'confirmed' }).expect(201);
    const res = await s.agent.get('/api/stats').expect(200);
    expect(res.body.orders).to.equal(2);
    expect(res.body.by_status).to.include({ pending: 1, confirmed: 1 });
    expect(res.body.by_day[29]).to.deep.equal({ date: res.body.to, orders: 2, confirmed: 1, confirmed_amount: '0.00' });
    expect(res.body.by_store).to.deep.equal([{ store_name: 'Atlas', orders: 2, confirmed: 1, confirmed_amount: '0.00' }]);
    // Both operations are still open: nothing has finished yet.
    expect(res.body.confirmation_rate).to.equal(null);
  });

  it('the figures: confirmation_rate over finished orders, answered_rate over ended calls, average calls to confirm, by day and by store', async () => {
    const s = await shop();
    // Period: 1–3 July 2026 (Morocco is at UTC+1).
    await seed(s, {
      created_at: '2026-07-01T09:00:00Z',
      status: 'confirmed',
      store_name: 'Atlas',
      operations: ['completed'],
      calls: [{ outcome: 'no-answer' }, { outcome: 'confirmed' }],
    });
    await seed(s, {
      created_at: '2026-07-01T10:00:00Z',
      status: 'confirmed',
      store_name: 'Bazar',
      operations: ['completed'],
      calls: [{ outcome: 'confirmed' }],
    });
    await seed(s, {
      created_at: '2026-07-02T10:00:00Z',
      status: 'unconfirmed',
      store_name: 'Atlas',
      operations: ['completed'],
      calls: [{ outcome: 'unconfirmed' }],
    });
    await seed(s, {
      created_at: '2026-07-02T11:00:00Z',
      status: 'pending',
      store_name: 'Atlas',
      operations: ['pending'],
      calls: [{ outcome: 'failed' }, { outcome: 'dropped' }, { outcome: null }],
    });
    // Confirmed by hand: the operation was cancelled, no call made.
    await seed(s, { created_at: '2026-07-02T23:30:00Z', status: 'confirmed', store_name: 'Bazar', operations: ['cancelled'] });
    // Confirmed, then called again: the latest operation is open, so it has not finished.
    await seed(s, { created_at: '2026-07-03T10:00:00Z', status: 'confirmed', store_name: 'Atlas', operations: ['completed', 'pending'] });
    await seed(s, {
      created_at: '2026-07-03T12:00:00Z',
      status: 'no-answer',
      store_name: 'Cactus',
      operations: ['completed'],
      calls: [{ outcome: 'no-answer' }],
    });
    // Created the day before the period (23:59 on 30 June in Morocco), called during it.
    await seed(s, {
      created_at: '2026-06-30T22:59:00Z',
      status: 'confirmed',
      store_name: 'Atlas',
      operations: ['completed'],
      calls: [{ outcome: 'confirmed', started_at: '2026-07-01T08:00:00Z' }],
    });
    const res = await s.agent.get('/api/stats').query({ from: '2026-07-01', to: '2026-07-03' }).expect(200);
    expect(Object.keys(res.body)).to.deep.equal(KEYS);
    const { by_channel: byChannel, delivery: _delivery, ...figures } = res.body;
    // Every call here is a member's.
    expect(byChannel.human).to.include({ calls: 7, answered: 4, answered_rate: 0.57 });
    expect(byChannel.voice.calls + byChannel.whatsapp.calls).to.equal(0);
    expect(figures).to.deep.equal({
      from: '2026-07-01',
      to: '2026-07-03',
      orders: 7,
      by_status: { ...zeroStatuses(), confirmed: 4, unconfirmed: 1, pending: 1, 'no-answer': 1 },
      // Finished: the first three, the one confirmed by hand, the no-answer one; 3 of those 5 are confirmed.
      confirmation_rate: 0.6,
      blocked: 0,
      // Ended calls started in the period (dropped and in-progress ones are not calls yet): 7, of which 4 answered.
      calls: 7,
      answered_rate: 0.57,
      // Confirmed orders of the period confirmed through calls: 2 calls and 1 call.
      average_calls_to_confirm: 1.5,
      confirmed_amount: '0.00',
      by_day: [
        { date: '2026-07-01', orders: 2, confirmed: 2, confirmed_amount: '0.00' },
        { date: '2026-07-02', orders: 2, confirmed: 0, confirmed_amount: '0.00' },
        { date: '2026-07-03', orders: 3, confirmed: 2, confirmed_amount: '0.00' },
      ],
      by_store: [
        { store_name: 'Atlas', orders: 4, confirmed: 2, confirmed_amount: '0.00' },
        { store_name: 'Bazar', orders: 2, confirmed: 2, confirmed_amount: '0.00' },
        { store_name: 'Cactus', orders: 1, confirmed: 0, confirmed_amount: '0.00' },
      ],
    });
  });

  it('Morocco-time day boundaries for orders and calls, also during Ramadan (UTC+0)', async () => {
    const s = await shop();
    await seed(s, { created_at: '2026-07-01T22:59:59Z', operations: ['completed'], calls: [{ outcome: 'confirmed', started_at: '2026-07-01T22:59:00Z' }] }); // 23:59 on 1 July
    await seed(s, { created_at: '2026-07-01T23:30:00Z', operations: ['completed'], calls: [{ outcome: 'confirmed', started_at: '2026-07-01T23:00:00Z' }] }); // 00:30 on 2 July
    await seed(s, { created_at: '2026-07-02T22:59:59Z' }); // 23:59 on 2 July
    await seed(s, { created_at: '2026-07-02T23:00:00Z' }); // midnight, 3 July
    const july2 = await s.agent.get('/api/stats?from=2026-07-02&to=2026-07-02').expect(200);
    expect(july2.body).to.include({ orders: 2, calls: 1 });
    expect(july2.body.by_day).to.deep.equal([{ date: '2026-07-02', orders: 2, confirmed: 0, confirmed_amount: '0.00' }]);
    const all = await s.agent.get('/api/stats?from=2026-07-01&to=2026-07-03').expect(200);
    expect(all.body.by_day.map((d: { orders: number }) => d.orders)).to.deep.equal([1, 2, 1]);
    // Ramadan 2026: Morocco is at UTC+0, so 23:30Z is still the same day.
    await seed(s, { created_at: '2026-03-01T23:30:00Z' });
    const ramadan = await s.agent.get('/api/stats?from=2026-03-01&to=2026-03-02').expect(200);
    expect(ramadan.body.by_day).to.deep.equal([
      { date: '2026-03-01', orders: 1, confirmed: 0, confirmed_amount: '0.00' },
      { date: '2026-03-02', orders: 0, confirmed: 0, confirmed_amount: '0.00' },
    ]);
  });

  it('from and to: both included, every day of the period zero-filled; to alone gives the 30 days before it; from alone ends today', async () => {
    const s = await shop();
    await seed(s, { created_at: '2026-02-10T12:00:00Z', status: 'confirmed' });
    const res = await s.agent.get('/api/stats').query({ from: '2026-01-30', to: '2026-03-01' }).expect(200);
    expect(res.body.by_day.map((d: { date: string }) => d.date)).to.deep.equal(daysBetween('2026-01-30', '2026-03-01'));
    expect(res.body.by_day.filter((d: { orders: number }) => d.orders > 0)).to.deep.equal([
      { date: '2026-02-10', orders: 1, confirmed: 1, confirmed_amount: '0.00' },
    ]);
    const toOnly = await s.agent.get('/api/stats').query({ to: '2026-03-01' }).expect(200);
    expect(toOnly.body).to.include({ from: '2026-01-31', to: '2026-03-01', orders: 1 });
    expect(toOnly.body.by_day).to.have.length(30);
    const oneDay = await s.agent.get('/api/stats').query({ from: '2026-02-10', to: '2026-02-10' }).expect(200);
    expect(oneDay.body.by_day).to.deep.equal([{ date: '2026-02-10', orders: 1, confirmed: 1, confirmed_amount: '0.00' }]);
    const today = moroccoToday();
    const tenDaysAgo = new Date(Date.parse(today) - 10 * DAY_MS).toISOString().slice(0, 10);
    const fromOnly = await s.agent.get('/api/stats').query({ from: tenDaysAgo }).expect(200);
    expect(fromOnly.body.from).to.equal(tenDaysAgo);
    expect(fromOnly.body.by_day).to.have.length(daysBetween(tenDaysAgo, fromOnly.body.to).length);
    expect([today, moroccoToday()]).to.include(fromOnly.body.to);
    // 366 days is the most; a leap-year span included.
    const year = await s.agent.get('/api/stats').query({ from: '2027-03-01', to: '2028-02-29' }).expect(200);
    expect(year.body.by_day).to.have.length(366);
  });

  it('isolation: another workspace’s orders and calls never count', async () => {
    const [a, b] = [await shop(), await shop()];
    await seed(a, { created_at: '2026-07-01T10:00:00Z', status: 'confirmed', operations: ['completed'], calls: [{ outcome: 'confirmed' }] });
    await seed(b, {
      created_at: '2026-07-01T10:00:00Z',
      status: 'unconfirmed',
      store_name: 'Theirs',
      operations: ['completed'],
      calls: [{ outcome: 'no-answer' }, { outcome: 'unconfirmed' }],
    });
    const res = await a.agent.get('/api/stats?from=2026-07-01&to=2026-07-01').expect(200);
    expect(res.body).to.deep.include({ orders: 1, calls: 1, confirmation_rate: 1, answered_rate: 1, average_calls_to_confirm: 1 });
    expect(res.body.by_store).to.deep.equal([{ store_name: 'Atlas', orders: 1, confirmed: 1, confirmed_amount: '0.00' }]);
    const lonely = await signUp();
    const empty = await lonely.agent.get('/api/stats?from=2026-07-01&to=2026-07-01').expect(200);
    expect(empty.body).to.deep.include({ orders: 0, calls: 0, by_store: [] });
  });

  it('400 VALIDATION_ERROR naming the parameter for a bad from/to', async () => {
    const s = await shop();
    for (const [query, names] of [
      ['from=2026-02-30', ['from']],
      ['to=abc', ['to']],
      ['from=abc&to=2026-13-01', ['from', 'to']],
      ['from=2026-01-01&from=2026-01-02', ['from']],
      ['to=2026-01-01&to=2026-01-02', ['to']],
      ['from=2026-07-01T00:00:00Z', ['from']],
      ['from=1969-12-31&to=1970-01-01', ['from']],
      ['from=%00', ['from']],
      ['from=2026-07-02&to=2026-07-01', ['from']],
      ['from=2025-01-01&to=2026-01-02', ['from']],
      [`from=${'9'.repeat(5000)}`, ['from']],
    ] as const) {
      const res = await s.agent.get(`/api/stats?${query}`);
      expect(res.status, `${query.slice(0, 60)} → ${res.text.slice(0, 200)}`).to.equal(400);
      expect(res.headers['content-type']).to.match(/application\/json/);
      expect(res.body.error).to.be.a('string');
      expect(res.body.code).to.equal('VALIDATION_ERROR');
      expect(Object.keys(res.body.fields), query.slice(0, 60)).to.have.members([...names]);
    }
  });

  it('401 without a session; 403 without a workspace', async () => {
    const res = await request(appUrl()).get('/api/stats');
    expect(res.status).to.equal(401);
    expect(res.body.error).to.be.a('string');
    const lonely = await signUp({ workspace: null });
    expect((await lonely.agent.get('/api/stats')).status).to.equal(403);
  });
});
