import { expect } from 'chai';
import type { SignedIn } from '../helpers/app';
import { signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { openAllDay } from '../helpers/loop';
import { anonymiseOrdersById } from '../../services/orders';
import { StatsService, spansOf } from '../../services/stats';

/**
 * Issue 57, item 3: the delivery figures are read from delivery_day_counts (no store, no city),
 * delivery_month_counts (a period's whole months) and delivery_counts (its other days). Whatever the
 * period and whichever way it is read, every figure is the one the orders themselves give, across
 * Morocco's day boundary and month boundaries, after deliveries change, orders are edited or deleted,
 * and after the housekeeping folds the counters.
 */

const knex = () => testKnex();
const MOROCCO = "'Africa/Casablanca'";
const FINAL = ['delivered', 'refused', 'returned', 'lost'];

/** A period read whole by month, in part by month minus days, in part by days, across boundaries. */
const PERIODS = [
  { from: '2025-12-01', to: '2026-11-30' }, // whole months only
  { from: '2026-01-15', to: '2026-03-05' }, // January minus its first 14 days, February whole, 5 days of March
  { from: '2026-01-31', to: '2026-02-01' }, // two days either side of a month's end
  { from: '2026-02-01', to: '2026-02-01' }, // one day: the first of February in Morocco
  { from: '2025-12-31', to: '2026-01-31' }, // December's last day, January whole
];

type Shop = SignedIn & { workspaceId: string };

interface World {
  shop: Shop;
  voiceId: string;
  ids: Record<string, string>;
}

/** Orders by name: store, city, amount (MAD), confirmed by the voice agent's call or not. */
const ORDERS: Record<string, { store: string; city: string | null; amount: number; voice: boolean }> = {
  o1: { store: 'Atlas', city: 'Casablanca', amount: 100, voice: true },
  o2: { store: 'Atlas', city: 'Rabat', amount: 20, voice: false },
  o3: { store: 'Souk', city: 'Casablanca', amount: 35.5, voice: true },
  o4: { store: 'Souk', city: null, amount: 12, voice: false },
  o5: { store: 'Atlas', city: 'Fès', amount: 40, voice: true },
  o6: { store: 'Souk', city: 'Rabat', amount: 60, voice: false },
  o7: { store: 'Atlas', city: 'Tanger', amount: 70, voice: true },
};

async function build(): Promise<World> {
  const shop = (await signUp({ name: 'Salma' })) as Shop;
  await openAllDay(shop);
  const voice = (await shop.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/calls' }).expect(201)).body;
  const ids: Record<string, string> = {};
  let n = 0;
  for (const [name, o] of Object.entries(ORDERS)) {
    n += 1;
    const body = {
      clientName: name,
      phone: `0622${String(n).padStart(6, '0')}`,
      storeName: o.store,
      productsName: 'P',
      city: o.city,
      totalAmount: o.amount,
      status: 'confirmed',
    };
    ids[name] = (await shop.agent.post('/api/orders').send(body).expect(201)).body.id;
    if (!o.voice) continue;
    const [op] = await knex()('operations')
      .insert({ workspace_id: shop.workspaceId, order_id: ids[name], agent_id: voice.id, direction: 'outbound', status: 'completed' })
      .returning('id');
    await knex()('calls').insert({
      workspace_id: shop.workspaceId,
      operation_id: op.id,
      kind: 'voice',
      attempt: 1,
      ended_at: knex().raw('now()'),
      outcome: 'confirmed',
      duration_seconds: 30,
    });
  }
  return { shop, voiceId: voice.id, ids };
}

const deliver = (w: World, name: string, status: string, at: string) =>
  w.shop.agent.put(`/api/orders/${w.ids[name]}/delivery`).send({ status, at }).expect(200);

/** What the orders themselves say for a period: per status by store, city, day and confirmation; the delivered amounts; each confirmer's. */
async function fromOrders(workspaceId: string, period: { from: string; to: string }) {
  const { rows } = await knex().raw(
    `SELECT store_name, coalesce(city, '') AS city, to_char((delivery_at AT TIME ZONE ${MOROCCO})::date, 'YYYY-MM-DD') AS day,
            delivery_confirmer_kind AS kind, delivery_confirmer_id AS who, delivery_status AS status, total_amount::float AS amount
       FROM orders
      WHERE workspace_id = ? AND delivery_status = ANY(?::text[])
        AND (delivery_at AT TIME ZONE ${MOROCCO})::date BETWEEN ?::date AND ?::date`,
    [workspaceId, `{${FINAL.join(',')}}`, period.from, period.to],
  );
  const tally = (of: Array<{ status: string; amount: number }>) => {
    const counts = Object.fromEntries(FINAL.map((s) => [s, of.filter((r) => r.status === s).length]));
    const delivered = of.filter((r) => r.status === 'delivered');
    return { ...counts, collected: delivered.length ? { MAD: delivered.reduce((x, r) => x + r.amount, 0).toFixed(2) } : {} };
  };
  const by = (key: (r: (typeof rows)[number]) => string) =>
    Object.fromEntries([...new Set(rows.map(key))].sort().map((k) => [k, tally(rows.filter((r: (typeof rows)[number]) => key(r) === k))]));
  return {
    total: tally(rows),
    byStore: by((r) => r.store_name),
    byCity: by((r) => r.city),
    byDay: by((r) => r.day),
    confirmed: tally(rows.filter((r: { kind: string | null }) => r.kind !== null)),
    without: tally(rows.filter((r: { kind: string | null }) => r.kind === null)),
    byConfirmer: Object.fromEntries(
      [...new Set(rows.filter((r: { who: string | null }) => r.who).map((r: { who: string }) => r.who))].map((who) => [
        who,
        Object.fromEntries(FINAL.map((s) => [s, rows.filter((r: { who: string; status: string }) => r.who === who && r.status === s).length])),
      ]),
    ),
  };
}

type Tally = Record<string, unknown> & { collected: Record<string, string> };
const counts = (t: Tally) => ({ ...Object.fromEntries(FINAL.map((s) => [s, t[s]])), collected: t.collected });
const keyed = (rows: Array<Tally & Record<string, unknown>>, key: string) =>
  Object.fromEntries(rows.filter((r) => FINAL.some((s) => (r[s] as number) > 0)).map((r) => [(r[key] as string | null) ?? '', counts(r)]));

/** /api/stats and /api/stats/team for each period agree with the orders, figure by figure. */
async function expectFiguresOfOrders(w: World, when: string): Promise<void> {
  for (const period of PERIODS) {
    const what = `${when}, ${period.from}..${period.to}`;
    const truth = await fromOrders(w.shop.workspaceId, period);
    const d = (await w.shop.agent.get('/api/stats').query(period).expect(200)).body.delivery;
    expect(counts(d), `${what}: in all`).to.deep.equal(truth.total);
    expect(keyed(d.by_store, 'store_name'), `${what}: by store`).to.deep.equal(truth.byStore);
    expect(keyed(d.by_city, 'city'), `${what}: by city`).to.deep.equal(truth.byCity);
    expect(keyed(d.by_day, 'date'), `${what}: by day`).to.deep.equal(truth.byDay);
    expect(counts(d.confirmed_by_call), `${what}: confirmed by a call`).to.deep.equal(truth.confirmed);
    expect(counts(d.without_confirmed_call), `${what}: without`).to.deep.equal(truth.without);
    const team = (await w.shop.agent.get('/api/stats/team').query(period).expect(200)).body;
    const robot = team.rows.find((r: { id: string }) => r.id === w.voiceId);
    const robotTruth = truth.byConfirmer[w.voiceId] ?? Object.fromEntries(FINAL.map((s) => [s, 0]));
    expect(Object.fromEntries(FINAL.map((s) => [s, robot[s]])), `${what}: the voice agent's row`).to.deep.equal(robotTruth);
    const stats = (await w.shop.agent.get('/api/stats').query(period).expect(200)).body;
    expect(Object.fromEntries(FINAL.map((s) => [s, stats.by_channel.voice[s]])), `${what}: the voice channel`).to.deep.equal(robotTruth);
  }
}

/** Each counter folded equals the orders grouped by its own key: by day, by day without place, by month. */
async function expectCountersOfOrders(workspaceId: string, when: string): Promise<void> {
  const fold = async (sql: string) => (await knex().raw(sql, [workspaceId])).rows;
  const finalOrders = `FROM orders WHERE workspace_id = ? AND delivery_status IN ('delivered', 'refused', 'returned', 'lost')`;
  const day = `(delivery_at AT TIME ZONE ${MOROCCO})::date`;
  const month = `date_trunc('month', ${day}::timestamp)::date`;
  const place = "store_name, coalesce(city, '') AS city";
  const who =
    "coalesce(currency, '') AS currency, delivery_status AS status, coalesce(delivery_confirmer_kind, '') AS confirmer_kind, delivery_confirmer_id AS confirmer_id";
  const sums = 'count(*)::int AS n, sum(coalesce(total_amount, 0))::numeric::text AS amount';
  const folded = 'sum(n)::int AS n, sum(amount)::numeric::text AS amount';
  const cols = 'store_name, city, currency, status, confirmer_kind, confirmer_id';
  const dayCols = 'currency, status, confirmer_kind, confirmer_id';
  expect(
    await fold(`SELECT to_char(day, 'YYYY-MM-DD') AS day, ${dayCols}, ${folded} FROM delivery_day_counts WHERE workspace_id = ?
                 GROUP BY 1, ${dayCols} HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5`),
    `${when}: delivery_day_counts`,
  ).to.deep.equal(await fold(`SELECT to_char(${day}, 'YYYY-MM-DD') AS day, ${who}, ${sums} ${finalOrders} GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`));
  expect(
    await fold(`SELECT to_char(month, 'YYYY-MM-DD') AS month, ${cols}, ${folded} FROM delivery_month_counts WHERE workspace_id = ?
                 GROUP BY 1, ${cols} HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7`),
    `${when}: delivery_month_counts`,
  ).to.deep.equal(
    await fold(
      `SELECT to_char(${month}, 'YYYY-MM-DD') AS month, ${place}, ${who}, ${sums} ${finalOrders} GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7`,
    ),
  );
  expect(
    await fold(`SELECT to_char(day, 'YYYY-MM-DD') AS day, ${cols}, ${folded} FROM delivery_counts WHERE workspace_id = ?
                 GROUP BY 1, ${cols} HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7`),
    `${when}: delivery_counts`,
  ).to.deep.equal(
    await fold(
      `SELECT to_char(${day}, 'YYYY-MM-DD') AS day, ${place}, ${who}, ${sums} ${finalOrders} GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7`,
    ),
  );
}

describe('delivery counters by day and by month agree with the orders (issue 57)', () => {
  let w: World;

  before(async function () {
    this.timeout(60_000);
    w = await build();
    // Morocco is UTC+1 in winter: 23:30 UTC on 31 January is 00:30 on 1 February there.
    await deliver(w, 'o1', 'delivered', '2026-01-31T23:30:00Z');
    await deliver(w, 'o2', 'delivered', '2026-01-31T22:30:00Z');
    await deliver(w, 'o3', 'delivered', '2026-02-15T10:00:00Z');
    await deliver(w, 'o4', 'refused', '2026-03-01T10:00:00Z');
    await deliver(w, 'o5', 'delivered', '2025-12-31T23:10:00Z');
    await deliver(w, 'o6', 'returned', '2026-01-20T09:00:00Z');
    await deliver(w, 'o7', 'in_transit', '2026-01-10T09:00:00Z');
  });

  it("counts a delivery on Morocco's day and month: 23:30 UTC on 31 January is February there", async () => {
    const first = (await w.shop.agent.get('/api/stats?from=2026-02-01&to=2026-02-01').expect(200)).body.delivery;
    expect(first).to.include({ delivered: 1 });
    expect(first.collected).to.deep.equal({ MAD: '100.00' });
    expect(first.by_city.map((c: { city: string }) => c.city)).to.deep.equal(['Casablanca']);
    const january = (await w.shop.agent.get('/api/stats?from=2026-01-01&to=2026-01-31').expect(200)).body.delivery;
    // o5 (00:10 on 1 January in Morocco), o2 (23:30 on 31 January), o6 returned; o7 is under way.
    expect(january).to.include({ delivered: 2, returned: 1, refused: 0 });
    expect(january.collected).to.deep.equal({ MAD: '60.00' });
    const { rows } = await knex().raw(
      "SELECT to_char(month, 'YYYY-MM') AS month, sum(n)::int AS n FROM delivery_month_counts WHERE workspace_id = ? GROUP BY 1 ORDER BY 1",
      [w.shop.workspaceId],
    );
    expect(rows).to.deep.equal([
      { month: '2026-01', n: 3 },
      { month: '2026-02', n: 2 },
      { month: '2026-03', n: 1 },
    ]);
  });

  it('every figure of every period is the orders’, and every counter the orders grouped by its key', async () => {
    await expectCountersOfOrders(w.shop.workspaceId, 'delivered');
    await expectFiguresOfOrders(w, 'delivered');
  });

  it('after deliveries change (status, day, month), orders are edited (amount, city, store) and deleted, and after the counters are folded', async function () {
    this.timeout(30_000);
    await deliver(w, 'o3', 'returned', '2026-02-16T10:00:00Z'); // same month, another day and status
    await deliver(w, 'o1', 'lost', '2026-02-01T00:10:00Z'); // 00:10 UTC: still 1 February in Morocco
    await deliver(w, 'o7', 'delivered', '2026-02-28T23:30:00Z'); // under way → delivered
    // A confirmed order's fields are not edited through the API (pending orders only): a statement does it, as a store's sync would.
    await knex()('orders').where({ id: w.ids.o2 }).update({ total_amount: '25.25', city: 'Agadir' });
    await knex()('orders').where({ id: w.ids.o4 }).update({ store_name: 'Atlas' });
    await w.shop.agent.delete(`/api/orders/${w.ids.o5}`).expect(204);
    // A delivery moved back across the month's end, February → January, by one statement (the API keeps the latest event).
    await knex()('orders').where({ id: w.ids.o3 }).update({ delivery_status: 'delivered', delivery_at: '2026-01-31T10:00:00Z' });
    await expectCountersOfOrders(w.shop.workspaceId, 'changed');
    await expectFiguresOfOrders(w, 'changed');
    const january = (await w.shop.agent.get('/api/stats?from=2026-01-01&to=2026-01-31').expect(200)).body.delivery;
    // o2 (now 25.25, Agadir) and o3 (moved to 31 January) delivered, o6 returned; o5 deleted.
    expect(january).to.include({ delivered: 2, returned: 1 });
    expect(january.collected).to.deep.equal({ MAD: '60.75' });

    expect(await new StatsService(knex()).compactDailyCounts(0)).to.be.greaterThan(0);
    await expectCountersOfOrders(w.shop.workspaceId, 'folded');
    await expectFiguresOfOrders(w, 'folded');
  });

  it('after orders are anonymised (their city goes): every figure and every month counter stays, as retention promises', async () => {
    const periods = [
      { from: '2026-01-01', to: '2026-01-31' },
      { from: '2026-01-01', to: '2026-03-31' },
      { from: '2026-01-15', to: '2026-02-20' },
    ];
    const figures = async () => Promise.all(periods.map(async (period) => (await w.shop.agent.get('/api/stats').query(period).expect(200)).body.delivery));
    const months = async () =>
      (
        await knex().raw(
          `SELECT to_char(month, 'YYYY-MM') AS month, store_name, city, status, sum(n)::int AS n, sum(amount)::numeric::text AS amount
             FROM delivery_month_counts WHERE workspace_id = ? GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4`,
          [w.shop.workspaceId],
        )
      ).rows;
    const [before, monthsBefore] = [await figures(), await months()];
    expect(monthsBefore.map((r: { city: string }) => r.city)).to.include('Agadir');
    // o2 (Agadir, January), o3 (31 January) and o4 (refused, March): the statement retention and erasure use.
    const picked = [w.ids.o2, w.ids.o3, w.ids.o4];
    expect(await knex().transaction((trx) => anonymiseOrdersById(trx, w.shop.workspaceId, picked))).to.equal(3);
    const [{ n: withCity }] = await knex()('orders').whereIn('id', picked).whereNotNull('city').count<{ n: string }[]>({ n: '*' });
    expect(Number(withCity)).to.equal(0);
    expect(await months(), 'delivery_month_counts').to.deep.equal(monthsBefore);
    expect(await figures(), '/api/stats over whole months and their ends').to.deep.equal(before);
  });
});

describe('spansOf: a period read by month and by day', () => {
  it('whole months by month; a month mostly covered as the month minus its other days; a month barely covered by its days', () => {
    expect(spansOf({ from: '2026-01-10', to: '2026-03-05' }, '2026-06-01')).to.deep.equal({
      months: ['2026-01-01', '2026-02-01'],
      days: ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'],
      minusDays: ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04', '2026-01-05', '2026-01-06', '2026-01-07', '2026-01-08', '2026-01-09'],
    });
  });

  it('the current month: its days after today hold no rows yet, so it is read as the month minus them', () => {
    expect(spansOf({ from: '2026-10-31', to: '2026-11-29' }, '2026-11-29')).to.deep.equal({
      months: ['2026-11-01'],
      days: ['2026-10-31'],
      minusDays: ['2026-11-30'],
    });
  });

  it('a short period inside one month is read by its days; one day too', () => {
    expect(spansOf({ from: '2026-02-10', to: '2026-02-12' }, '2026-06-01')).to.deep.equal({
      months: [],
      days: ['2026-02-10', '2026-02-11', '2026-02-12'],
      minusDays: [],
    });
    expect(spansOf({ from: '2026-02-01', to: '2026-02-01' }, '2026-02-01')).to.deep.equal({ months: [], days: ['2026-02-01'], minusDays: [] });
  });

  it('a year: twelve months and the ends of the thirteenth and first', () => {
    const spans = spansOf({ from: '2025-12-04', to: '2026-11-29' }, '2026-11-29');
    expect(spans.months).to.have.length(12);
    expect(spans.days).to.deep.equal([]);
    expect(spans.minusDays).to.deep.equal(['2025-12-01', '2025-12-02', '2025-12-03', '2026-11-30']);
  });
});
