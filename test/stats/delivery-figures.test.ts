import { expect } from 'chai';
import type { SignedIn } from '../helpers/app';
import { signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { openAllDay } from '../helpers/loop';

/**
 * What the shop learns (docs/delivery.md), checked against numbers worked out by hand: a workspace
 * whose orders were confirmed by two members (Amina, Badr), one voice agent and nobody, then
 * delivered, refused or returned on known days.
 */

const knex = () => testKnex();
const today = () => new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Casablanca' }).format(new Date());

interface World {
  owner: SignedIn & { workspaceId: string };
  member: SignedIn;
  voiceId: string;
  ids: Record<string, string>;
}

let world: World;

/** Order fields by name: store, city and amount (MAD). */
const ORDERS: Record<string, { store: string; city: string | null; amount: number }> = {
  a1: { store: 'Atlas', city: 'Casablanca', amount: 100 },
  a2: { store: 'Atlas', city: 'Casablanca', amount: 10 },
  a3: { store: 'Souk', city: 'Rabat', amount: 10 },
  a4: { store: 'Souk', city: 'Rabat', amount: 10 },
  b1: { store: 'Atlas', city: 'Rabat', amount: 200 },
  b2: { store: 'Souk', city: 'Casablanca', amount: 50 },
  b3: { store: 'Souk', city: 'Casablanca', amount: 10 },
  v1: { store: 'Atlas', city: null, amount: 10 },
  v2: { store: 'Souk', city: 'Casablanca', amount: 300 },
  n1: { store: 'Atlas', city: 'Casablanca', amount: 80 },
  n2: { store: 'Souk', city: null, amount: 10 },
  n3: { store: 'Souk', city: null, amount: 10 },
};

async function build(): Promise<World> {
  const owner = await signUp({ name: 'Amina' });
  await openAllDay(owner);
  const member = await signUp({ invitedBy: owner, name: 'Badr' });
  const voice = (await owner.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/calls' }).expect(201)).body;
  const ids: Record<string, string> = {};
  let n = 0;
  const create = async (name: string, status?: string) => {
    const o = ORDERS[name];
    n += 1;
    const body = {
      clientName: name,
      phone: `0612${String(n).padStart(6, '0')}`,
      storeName: o.store,
      productsName: 'P',
      city: o.city,
      totalAmount: o.amount,
      status,
    };
    ids[name] = (await owner.agent.post('/api/orders').send(body).expect(201)).body.id;
  };
  // Queued for the human handler, in this order: Amina takes the first four, Badr the next three.
  for (const name of ['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3']) await create(name);
  const call = async (who: SignedIn, expected: string, outcome: string) => {
    const next = (await who.agent.post('/api/calls/next').expect(200)).body;
    expect(next.order.id).to.equal(ids[expected]);
    await who.agent.post(`/api/calls/${next.call.id}/outcome`).send({ outcome }).expect(200);
  };
  await call(owner, 'a1', 'confirmed');
  await call(owner, 'a2', 'confirmed');
  await call(owner, 'a3', 'order-changed');
  await call(owner, 'a4', 'unconfirmed');
  await call(member, 'b1', 'confirmed');
  await call(member, 'b2', 'confirmed');
  await call(member, 'b3', 'no-answer');
  // The voice agent's two calls (its protocol is tested elsewhere): 60 s and 120 s, both confirmed.
  for (const [name, seconds] of [
    ['v1', 60],
    ['v2', 120],
  ] as const) {
    await create(name, 'confirmed');
    const [op] = await knex()('operations')
      .insert({ workspace_id: owner.workspaceId, order_id: ids[name], agent_id: voice.id, direction: 'outbound', status: 'completed' })
      .returning('id');
    await knex()('calls').insert({
      workspace_id: owner.workspaceId,
      operation_id: op.id,
      kind: 'voice',
      attempt: 1,
      ended_at: knex().raw('now()'),
      outcome: 'confirmed',
      duration_seconds: seconds,
    });
  }
  // Shipped without a confirmed call.
  for (const name of ['n1', 'n2', 'n3']) await create(name, 'confirmed');

  const deliver = async (name: string, status: string, at: string) => owner.agent.put(`/api/orders/${ids[name]}/delivery`).send({ status, at }).expect(200);
  await deliver('a1', 'delivered', '2026-11-03T10:00:00Z');
  await deliver('a2', 'refused', '2026-11-03T10:00:00Z');
  await deliver('a3', 'returned', '2026-11-03T10:00:00Z');
  await deliver('b1', 'delivered', '2026-11-04T10:00:00Z');
  await deliver('b2', 'delivered', '2026-11-04T10:00:00Z');
  await deliver('v1', 'refused', '2026-11-05T10:00:00Z');
  await deliver('v2', 'delivered', '2026-11-05T10:00:00Z');
  await deliver('n1', 'delivered', '2026-11-05T10:00:00Z');
  // Delivered first, then returned: counted once, as returned.
  await deliver('n2', 'delivered', '2026-11-05T08:00:00Z');
  await deliver('n2', 'returned', '2026-11-05T10:00:00Z');
  // Under way: not counted.
  await deliver('n3', 'in_transit', '2026-11-05T10:00:00Z');
  // Another workspace's delivery in the same days is never counted here.
  const other = await signUp();
  const theirs = (
    await other.agent.post('/api/orders').send({ clientName: 'X', phone: '0699999999', storeName: 'Atlas', productsName: 'P', status: 'confirmed' }).expect(201)
  ).body;
  await other.agent.put(`/api/orders/${theirs.id}/delivery`).send({ status: 'delivered', at: '2026-11-03T10:00:00Z' }).expect(200);
  return { owner: { ...owner, workspaceId: owner.workspaceId! }, member, voiceId: voice.id, ids };
}

describe('GET /api/stats: delivery (hand-computed)', () => {
  before(async function () {
    this.timeout(60_000);
    world = await build();
  });

  it('delivered rate, counts and collected amount; confirmed by a call against shipped without one', async () => {
    const stats = (await world.owner.agent.get('/api/stats?from=2026-11-01&to=2026-11-10').expect(200)).body;
    const d = stats.delivery;
    // delivered a1 b1 b2 v2 n1; refused a2 v1; returned a3 n2 → 5 ÷ 9.
    expect(d).to.include({ delivered: 5, refused: 2, returned: 2, lost: 0, delivered_rate: 0.56 });
    expect(d.collected).to.deep.equal({ MAD: '730.00' });
    // By a call: a1 b1 b2 v2 delivered, a2 v1 refused, a3 returned → 4 ÷ 7; without: n1 delivered, n2 returned → 1 ÷ 2.
    expect(d.confirmed_by_call).to.include({ delivered: 4, refused: 2, returned: 1, delivered_rate: 0.57 });
    expect(d.without_confirmed_call).to.include({ delivered: 1, refused: 0, returned: 1, delivered_rate: 0.5 });
    expect(d.without_confirmed_call.collected).to.deep.equal({ MAD: '80.00' });
  });

  it('per day, per store and per city', async () => {
    const d = (await world.owner.agent.get('/api/stats?from=2026-11-01&to=2026-11-10').expect(200)).body.delivery;
    expect(d.by_day).to.have.length(10);
    const day = (date: string) => d.by_day.find((x: { date: string }) => x.date === date);
    expect(day('2026-11-03')).to.include({ delivered: 1, refused: 1, returned: 1, delivered_rate: 0.33 });
    expect(day('2026-11-04')).to.include({ delivered: 2, refused: 0, returned: 0, delivered_rate: 1 });
    expect(day('2026-11-04').collected).to.deep.equal({ MAD: '250.00' });
    expect(day('2026-11-05')).to.include({ delivered: 2, refused: 1, returned: 1, delivered_rate: 0.5 });
    expect(day('2026-11-02')).to.include({ delivered: 0, delivered_rate: null });
    const store = (name: string) => d.by_store.find((x: { store_name: string }) => x.store_name === name);
    expect(store('Atlas')).to.include({ delivered: 3, refused: 2, returned: 0, delivered_rate: 0.6 });
    expect(store('Atlas').collected).to.deep.equal({ MAD: '380.00' });
    expect(store('Souk')).to.include({ delivered: 2, refused: 0, returned: 2, delivered_rate: 0.5 });
    const city = (name: string | null) => d.by_city.find((x: { city: string | null }) => x.city === name);
    expect(city('Casablanca')).to.include({ delivered: 4, refused: 1, delivered_rate: 0.8 });
    expect(city('Casablanca').collected).to.deep.equal({ MAD: '530.00' });
    expect(city('Rabat')).to.include({ delivered: 1, returned: 1, delivered_rate: 0.5 });
    expect(city(null)).to.include({ delivered: 0, refused: 1, returned: 1, delivered_rate: 0 });
    // Outside the period: nothing.
    const before = (await world.owner.agent.get('/api/stats?from=2026-10-01&to=2026-10-31').expect(200)).body.delivery;
    expect(before).to.include({ delivered: 0, refused: 0, delivered_rate: null });
  });

  it('the page shows the figures, the chart and the tables, in French and Arabic too', async () => {
    const page = (await world.owner.agent.get('/stats?from=2026-11-01&to=2026-11-10').expect(200)).text;
    expect(page).to.include('id="delivery-heading"');
    expect(page).to.include('id="delivery-chart-title"');
    expect(page).to.include('56');
    const fr = (await world.owner.agent.get('/stats?from=2026-11-01&to=2026-11-10').set('Accept-Language', 'fr').expect(200)).text;
    expect(fr).to.include('Taux de livraison');
    expect(fr).to.include('Expédiées sans appel confirmé');
    // The figures are named as counts ("Retournées"), not with a parcel's badge words ("colis retourné").
    expect(fr).to.include('<dt>Retournées</dt><dd>2</dd>');
    expect(fr).to.include('<dt>Refusées</dt><dd>2</dd>');
    const ar = (await world.owner.agent.get('/stats?from=2026-11-01&to=2026-11-10').set('Accept-Language', 'ar').expect(200)).text;
    expect(ar).to.include('نسبة التسليم');
  });
});

describe('GET /api/stats/team (hand-computed)', () => {
  before(async function () {
    this.timeout(60_000);
    world ??= await build();
  });

  const period = () => `from=2026-11-01&to=${today()}`;

  it('per member and per voice agent: calls, outcomes, confirmation rate, handling time, delivered rate and refusals', async () => {
    const team = (await world.owner.agent.get(`/api/stats/team?${period()}`).expect(200)).body;
    const row = (name: string) => team.rows.find((r: { name: string }) => r.name === name);
    // Amina: 4 calls (2 confirmed, 1 changed, 1 declined) → 3 ÷ 4; her orders: a1 delivered, a2 refused, a3 returned → 1 ÷ 3.
    expect(row('Amina')).to.include({
      kind: 'member',
      calls: 4,
      answered: 4,
      confirmation_rate: 0.75,
      delivered: 1,
      refused: 1,
      returned: 1,
      delivered_rate: 0.33,
    });
    expect(row('Amina').by_outcome).to.include({ confirmed: 2, 'order-changed': 1, unconfirmed: 1 });
    expect(row('Amina').average_handling_seconds).to.be.a('number');
    // Badr: 3 calls (2 confirmed, 1 no answer) → 2 ÷ 2; b1 b2 delivered → 1.
    expect(row('Badr')).to.include({ kind: 'member', calls: 3, answered: 2, confirmation_rate: 1, delivered: 2, refused: 0, delivered_rate: 1 });
    // The voice agent: 2 calls of 60 and 120 s → 90 s; v2 delivered, v1 refused → 1 ÷ 2.
    expect(row('Robot')).to.include({
      kind: 'voice',
      id: world.voiceId,
      calls: 2,
      confirmation_rate: 1,
      average_handling_seconds: 90,
      delivered: 1,
      refused: 1,
      delivered_rate: 0.5,
    });
    expect(team.rows.map((r: { kind: string }) => r.kind)).to.deep.equal(['member', 'member', 'voice']);
    // Per channel, the rows summed: members 7 calls (4 confirmed, 1 changed, 1 declined, 1 no answer) → 5 ÷ 6,
    // their orders 3 delivered of 5 ended; the voice agent as its row; no WhatsApp agent.
    expect(team.by_channel.human).to.include({ calls: 7, answered: 6, confirmation_rate: 0.83, delivered: 3, refused: 1, returned: 1, delivered_rate: 0.6 });
    expect(team.by_channel.human.by_outcome).to.include({ confirmed: 4, 'order-changed': 1, unconfirmed: 1, 'no-answer': 1 });
    expect(team.by_channel.voice).to.include({ calls: 2, confirmation_rate: 1, delivered: 1, refused: 1, delivered_rate: 0.5 });
    expect(team.by_channel.whatsapp).to.include({ calls: 0, delivered: 0, confirmation_rate: null, delivered_rate: null });
  });

  it("/stats's confirmation figures from its counters, after the real queue: orders, rate, calls to confirm", async () => {
    const stats = (await world.owner.agent.get(`/api/stats?${period()}`).expect(200)).body;
    // Twelve orders today; confirmed: a1 a2 b1 b2 v1 v2 n1 n2 n3 (a3 changed, a4 declined, b3 waiting).
    expect(stats).to.include({ orders: 12, calls: 9, blocked: 0 });
    expect(stats.by_status).to.include({ confirmed: 9, 'order-changed': 1, unconfirmed: 1 });
    // Finished confirmations: the six calls with an answer and the voice agent's two → 6 confirmed of 8.
    expect(stats.confirmation_rate).to.equal(0.75);
    // Each confirmed order that had calls had one.
    expect(stats.average_calls_to_confirm).to.equal(1);
    expect(stats.by_channel.human).to.include({ calls: 7, answered: 6 });
    expect(stats.by_channel.voice).to.include({ calls: 2 });
    // How the orders each channel confirmed ended at the door (the same counts as /stats/team's channels).
    expect(stats.by_channel.human).to.include({ delivered: 3, refused: 1, returned: 1, lost: 0, delivered_rate: 0.6 });
    expect(stats.by_channel.voice).to.include({ delivered: 1, refused: 1, delivered_rate: 0.5 });
    expect(stats.by_channel.whatsapp).to.include({ delivered: 0, delivered_rate: null });
  });

  it('400 for a bad period; the CSV has the same rows, a header, and defused names', async () => {
    const bad = await world.owner.agent.get('/api/stats/team?from=2026-13-01').expect(400);
    expect(bad.body.fields).to.have.key('from');
    await knex()('users').where({ id: world.member.userId }).update({ name: '=HYPERLINK("x")' });
    const csv = await world.owner.agent.get(`/api/stats/team.csv?${period()}`).expect(200);
    expect(csv.headers['content-type']).to.match(/^text\/csv/);
    expect(csv.headers['content-disposition']).to.match(/attachment; filename="team-2026-11-01-/);
    const lines = csv.text
      .replace(/^\ufeff/, '')
      .trim()
      .split(/\r?\n/);
    expect(lines[0]).to.equal(
      'kind,name,calls,answered,confirmed,unconfirmed,order-changed,unrecognized,postponed,no-answer,failed,confirmation_rate,average_handling_seconds,delivered,refused,returned,lost,delivered_rate',
    );
    expect(lines).to.have.length(4);
    expect(lines.find((l) => l.startsWith('voice,'))).to.equal('voice,Robot,2,2,2,0,0,0,0,0,0,1,90,1,1,0,0,0.5');
    expect(csv.text).to.include(`"'=HYPERLINK(""x"")"`);
    await knex()('users').where({ id: world.member.userId }).update({ name: 'Badr' });
  });

  it('the page lists the confirmers in three languages and links the CSV; another workspace sees none of them', async () => {
    const page = (await world.owner.agent.get(`/stats/team?${period()}`).expect(200)).text;
    expect(page).to.include('Robot');
    expect(page).to.include('/api/stats/team.csv?from=2026-11-01');
    const fr = (await world.owner.agent.get('/stats/team').set('Accept-Language', 'fr').expect(200)).text;
    expect(fr).to.include('Taux de confirmation');
    expect(fr).to.include('data-label="Sans réponse"');
    expect((await world.owner.agent.get('/stats/team').set('Accept-Language', 'ar').expect(200)).text).to.include('نسبة التأكيد');
    await world.owner.agent.get('/stats/team?from=nope').expect(400);
    const stranger = await signUp();
    const theirs = (await stranger.agent.get(`/api/stats/team?${period()}`).expect(200)).body;
    expect(theirs.rows.map((r: { name: string }) => r.name)).not.to.include('Robot');
    expect(theirs.rows.every((r: { calls: number; delivered: number }) => r.calls === 0 && r.delivered === 0)).to.equal(true);
  });
});

describe('GET /api/stats/team: a member’s average handling time, from claim to outcome (hand-computed)', () => {
  let owner: SignedIn & { workspaceId: string };
  const period = () => `from=2026-11-01&to=${today()}`;

  before(async function () {
    this.timeout(60_000);
    const signed = await signUp({ name: 'Chama' });
    owner = { ...signed, workspaceId: signed.workspaceId! };
    await openAllDay(owner);
    const member = await signUp({ invitedBy: owner, name: 'Driss' });
    // Claimed through the real queue, then each call's claim (started_at) and outcome (ended_at) set to
    // known instants: Chama 30 s, 90 s and 45 s; Driss 100 s, 200 s and 600 s.
    const handled: Array<[SignedIn, string, number]> = [
      [owner, 'confirmed', 30],
      [owner, 'unconfirmed', 90],
      [owner, 'order-changed', 45],
      [member, 'confirmed', 100],
      [member, 'confirmed', 200],
      [member, 'unconfirmed', 600],
    ];
    for (let i = 0; i < handled.length; i += 1) {
      await owner.agent
        .post('/api/orders')
        .send({ clientName: `H${i}`, phone: `0613${String(i).padStart(6, '0')}`, storeName: 'Atlas', productsName: 'P', totalAmount: 10 })
        .expect(201);
    }
    for (const [i, [who, outcome, seconds]] of handled.entries()) {
      const next = (await who.agent.post('/api/calls/next').expect(200)).body;
      await who.agent.post(`/api/calls/${next.call.id}/outcome`).send({ outcome }).expect(200);
      const claimed = new Date(Date.UTC(2026, 10, 10, 9, i * 20));
      const updated = await knex()('calls')
        .where({ id: next.call.id })
        .update({ started_at: claimed, ended_at: new Date(claimed.getTime() + seconds * 1000) });
      expect(updated).to.equal(1);
    }
  });

  it('the API answers each member’s mean of (outcome − claim): Chama (30 + 90 + 45) ÷ 3 = 55 s, Driss (100 + 200 + 600) ÷ 3 = 300 s', async () => {
    const team = (await owner.agent.get(`/api/stats/team?${period()}`).expect(200)).body;
    const row = (name: string) => team.rows.find((r: { name: string }) => r.name === name);
    expect(row('Chama')).to.include({ kind: 'member', calls: 3, average_handling_seconds: 55 });
    expect(row('Driss')).to.include({ kind: 'member', calls: 3, average_handling_seconds: 300 });
    // The counters behind them hold exactly these seconds, on the claim's day.
    const counted = await knex()('call_counts')
      .where({ workspace_id: owner.workspaceId })
      .groupBy('member_id', 'day')
      .select('member_id', knex().raw("to_char(day, 'YYYY-MM-DD') AS day"), knex().raw('sum(n)::int AS n'), knex().raw('sum(seconds)::float AS seconds'))
      .havingRaw('sum(n) <> 0');
    expect(counted.map((c: { n: number; seconds: number; day: string }) => [c.day, c.n, c.seconds]).sort()).to.deep.equal([
      ['2026-11-10', 3, 165],
      ['2026-11-10', 3, 900],
    ]);
    // A period that ends before the claims' day has no calls, hence no average.
    const before = (await owner.agent.get('/api/stats/team?from=2026-11-01&to=2026-11-09').expect(200)).body;
    expect(before.rows.find((r: { name: string }) => r.name === 'Chama')).to.include({ calls: 0, average_handling_seconds: null });
  });

  it('the CSV’s average_handling_seconds column and the page say the same', async () => {
    const csv = await owner.agent.get(`/api/stats/team.csv?${period()}`).expect(200);
    const lines = csv.text
      .replace(/^\ufeff/, '')
      .trim()
      .split(/\r?\n/)
      .map((l) => l.split(','));
    const column = lines[0].indexOf('average_handling_seconds');
    expect(column).to.be.greaterThan(-1);
    const cell = (name: string) => lines.find((l) => l[0] === 'member' && l[1] === name)?.[column];
    expect(cell('Chama')).to.equal('55');
    expect(cell('Driss')).to.equal('300');
    const page = (await owner.agent.get(`/stats/team?${period()}`).expect(200)).text;
    const handling = (name: string) =>
      page
        .split('<tr')
        .find((row) => row.includes(`<th scope="row"><bdi>${name}</bdi>`))
        ?.match(/data-label="Average handling time">([^<]*)</)?.[1];
    expect(handling('Chama')).to.equal('55 s');
    expect(handling('Driss')).to.equal('300 s');
  });
});

describe('GET /api/stats: the collected amount per currency, MAD (2 decimals) beside TND (3) (hand-computed)', () => {
  let owner: SignedIn & { workspaceId: string };
  const range = 'from=2026-11-01&to=2026-11-10';

  /** Orders by name: amount as text, currency, store, city, and how their delivery ended (when). */
  const PARCELS: Array<[string, string, 'MAD' | 'TND', string, string, string, string]> = [
    ['m1', '149.99', 'MAD', 'Atlas', 'Casablanca', 'delivered', '2026-11-03T10:00:00Z'],
    ['m2', '250.50', 'MAD', 'Souk', 'Rabat', 'delivered', '2026-11-04T10:00:00Z'],
    ['m3', '99.00', 'MAD', 'Atlas', 'Casablanca', 'refused', '2026-11-03T10:00:00Z'],
    ['t1', '89.350', 'TND', 'Atlas', 'Tunis', 'delivered', '2026-11-03T10:00:00Z'],
    ['t2', '45.125', 'TND', 'Souk', 'Tunis', 'delivered', '2026-11-04T10:00:00Z'],
    ['t3', '10.005', 'TND', 'Souk', 'Casablanca', 'delivered', '2026-11-04T10:00:00Z'],
    ['t4', '70.000', 'TND', 'Atlas', 'Tunis', 'returned', '2026-11-04T10:00:00Z'],
  ];

  before(async function () {
    this.timeout(60_000);
    const signed = await signUp();
    owner = { ...signed, workspaceId: signed.workspaceId! };
    for (const [i, [name, amount, currency, store, city, status, at]] of PARCELS.entries()) {
      const order = (
        await owner.agent
          .post('/api/orders')
          .send({
            clientName: name,
            phone: `0614${String(i).padStart(6, '0')}`,
            storeName: store,
            productsName: 'P',
            city,
            totalAmount: amount,
            currency,
            status: 'confirmed',
          })
          .expect(201)
      ).body;
      expect(order).to.include({ total_amount: amount, currency });
      await owner.agent.put(`/api/orders/${order.id}/delivery`).send({ status, at }).expect(200);
    }
    const stored = await knex()('orders').where({ workspace_id: owner.workspaceId, delivery_status: 'delivered' }).select('currency', 'total_amount');
    expect(stored).to.have.length(5);
  });

  it('each currency summed apart over the delivered orders, with its own decimals: total, by day, by store, by city', async () => {
    const d = (await owner.agent.get(`/api/stats?${range}`).expect(200)).body.delivery;
    // Delivered: m1 149.99 + m2 250.50 = 400.49 MAD; t1 89.350 + t2 45.125 + t3 10.005 = 144.480 TND (m3 refused, t4 returned).
    expect(d).to.include({ delivered: 5, refused: 1, returned: 1 });
    expect(d.collected).to.deep.equal({ MAD: '400.49', TND: '144.480' });
    expect(d.without_confirmed_call.collected).to.deep.equal({ MAD: '400.49', TND: '144.480' });
    expect(d.confirmed_by_call.collected).to.deep.equal({});
    const day = (date: string) => d.by_day.find((x: { date: string }) => x.date === date);
    expect(day('2026-11-03').collected).to.deep.equal({ MAD: '149.99', TND: '89.350' });
    expect(day('2026-11-04').collected).to.deep.equal({ MAD: '250.50', TND: '55.130' });
    expect(day('2026-11-05').collected).to.deep.equal({});
    const store = (name: string) => d.by_store.find((x: { store_name: string }) => x.store_name === name);
    expect(store('Atlas').collected).to.deep.equal({ MAD: '149.99', TND: '89.350' });
    expect(store('Souk').collected).to.deep.equal({ MAD: '250.50', TND: '55.130' });
    const city = (name: string) => d.by_city.find((x: { city: string | null }) => x.city === name);
    expect(city('Casablanca').collected).to.deep.equal({ MAD: '149.99', TND: '10.005' });
    expect(city('Rabat').collected).to.deep.equal({ MAD: '250.50' });
    expect(city('Tunis').collected).to.deep.equal({ TND: '134.475' });
  });

  it('the page shows both currencies, each with its own decimals', async () => {
    const page = (await owner.agent.get(`/stats?${range}`).expect(200)).text;
    const fr = (await owner.agent.get(`/stats?${range}`).set('Accept-Language', 'fr').expect(200)).text;
    const ar = (await owner.agent.get(`/stats?${range}`).set('Accept-Language', 'ar').expect(200)).text;
    // The amounts the page writes out, spaces of any width as one and direction marks aside.
    const amounts = (html: string) =>
      [...html.matchAll(/<bdi dir="ltr">([^<]*)<\/bdi>/g)].map((m) =>
        m[1]
          .replace(/\u200f/g, '')
          .replace(/\s+/g, ' ')
          .trim(),
      );
    const collected = (html: string, label: string) =>
      html
        .match(new RegExp(`<dt>${label}</dt><dd><bdi dir="ltr">([^<]*)</bdi>`))?.[1]
        .replace(/\u200f/g, '')
        .replace(/\s+/g, ' ')
        .trim();
    expect(collected(page, 'Collected')).to.equal('MAD 400.49 · TND 144.480');
    expect(amounts(page)).to.include.members(['MAD 149.99 · TND 89.350', 'MAD 250.50 · TND 55.130', 'MAD 149.99 · TND 10.005', 'MAD 250.50', 'TND 134.475']);
    expect(collected(fr, 'Encaissé')).to.equal('400,49 MAD · 144,480 TND');
    expect(amounts(fr)).to.include.members(['149,99 MAD · 89,350 TND', '250,50 MAD · 55,130 TND', '134,475 TND']);
    expect(amounts(ar)).to.include.members(['400,49 د.م. · 144,480 د.ت.', '134,475 د.ت.']);
  });
});
