import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { memberOf } from '../helpers/app';
import type { SignedIn } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, humanShop, ORDER } from '../helpers/loop';

type Shop = SignedIn & { handlerId: string };

/** team.md §3: each member's counts and amount equal what is computed here from the orders the test made. */
describe('team: pay for a period (rules, counts, amounts, the page, the CSV)', function () {
  this.timeout(120_000);

  // October 2026, Morocco time: a whole month (31 days), so a fixed part is its monthly amount exactly.
  const PERIOD = { from: '2026-10-01', to: '2026-10-31' };

  /** `who` claims the next due call and confirms it; the call is then dated `endedAt`. */
  async function confirmBy(who: Shop, endedAt: string): Promise<string> {
    const claim = await who.agent.post('/api/calls/next').expect(200);
    await who.agent.post(`/api/calls/${claim.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    await testKnex()('calls').where({ id: claim.body.call.id }).update({ started_at: endedAt, ended_at: endedAt });
    return claim.body.order.id;
  }

  const deliver = (shop: Shop, orderId: string, status: string, at: string) =>
    shop.agent.put(`/api/orders/${orderId}/delivery`).send({ status, at }).expect(200);

  it('fixed, per confirmed, per delivered and a combination: each line equals what the orders give; the page and the CSV say the same; a member sees only their line', async () => {
    const owner = await humanShop();
    const [a, b, c] = [await memberOf(owner), await memberOf(owner), await memberOf(owner)];
    await owner.agent
      .put(`/api/team/${owner.userId}`)
      .send({ pay: { fixed: 3000 } })
      .expect(200);
    await owner.agent
      .put(`/api/team/${a.userId}`)
      .send({ pay: { perConfirmed: 5 } })
      .expect(200);
    await owner.agent
      .put(`/api/team/${b.userId}`)
      .send({ pay: { perDelivered: 12.5 } })
      .expect(200);
    await owner.agent
      .put(`/api/team/${c.userId}`)
      .send({ pay: { fixed: 1500, perDelivered: 10 } })
      .expect(200);
    await a.agent
      .put(`/api/team/${a.userId}`)
      .send({ pay: { perConfirmed: 500 } })
      .expect(403);
    const bad = await owner.agent
      .put(`/api/team/${a.userId}`)
      .send({ pay: { perConfirmed: -1 } })
      .expect(400);
    expect(bad.body.fields).to.have.property('perConfirmed');

    // What happened to each order: who confirmed it last, when, and its delivery.
    const facts: Array<{ id: string; by: string; confirmedAt: string; delivered?: string }> = [];
    const plan: Array<[Shop, string, string | null, string | null]> = [
      // [who confirms, when, delivery status, delivery time]
      [a, '2026-10-03T10:00:00Z', 'delivered', '2026-10-05T10:00:00Z'],
      [a, '2026-10-04T10:00:00Z', 'delivered', '2026-11-02T10:00:00Z'], // delivered after the period: counts in November
      [a, '2026-10-10T10:00:00Z', 'refused', '2026-10-12T10:00:00Z'],
      [a, '2026-09-28T10:00:00Z', 'delivered', '2026-10-02T10:00:00Z'], // confirmed in September, delivered in October
      [b, '2026-10-06T10:00:00Z', 'delivered', '2026-10-08T10:00:00Z'],
      [b, '2026-10-07T10:00:00Z', 'delivered', '2026-10-31T22:30:00Z'], // 23:30 in Morocco on the 31st: in the period
      [b, '2026-10-07T11:00:00Z', null, null],
      [c, '2026-10-20T10:00:00Z', 'delivered', '2026-10-22T10:00:00Z'],
      [c, '2026-10-31T23:30:00Z', 'delivered', '2026-11-01T10:00:00Z'], // 00:30 on Nov 1st in Morocco: outside
    ];
    for (const [who, confirmedAt, status, at] of plan) {
      await createOrder(owner, { ...ORDER, clientName: `C${facts.length}` });
      const id = await confirmBy(who, confirmedAt);
      if (status && at) await deliver(owner, id, status, at);
      facts.push({ id, by: who.userId, confirmedAt, ...(status === 'delivered' && at ? { delivered: at } : {}) });
    }
    // An order confirmed by a, called again and confirmed by b: it counts once, for b.
    await createOrder(owner, { ...ORDER, clientName: 'Twice' });
    const twice = await confirmBy(a, '2026-10-15T10:00:00Z');
    await owner.agent.post(`/api/orders/${twice}/operations`).expect(201);
    await confirmBy(b, '2026-10-16T10:00:00Z');
    await deliver(owner, twice, 'delivered', '2026-10-18T10:00:00Z');
    facts.push({ id: twice, by: b.userId, confirmedAt: '2026-10-16T10:00:00Z', delivered: '2026-10-18T10:00:00Z' });

    // The expected pay, computed from the facts.
    const moroccoDay = (iso: string) => new Date(new Date(iso).getTime() + 3600_000).toISOString().slice(0, 10); // UTC+1 in 2026 outside Ramadan
    const inPeriod = (iso: string) => moroccoDay(iso) >= PERIOD.from && moroccoDay(iso) <= PERIOD.to;
    const rules: Record<string, { fixed: number; perConfirmed: number; perDelivered: number }> = {
      [owner.userId]: { fixed: 3000, perConfirmed: 0, perDelivered: 0 },
      [a.userId]: { fixed: 0, perConfirmed: 5, perDelivered: 0 },
      [b.userId]: { fixed: 0, perConfirmed: 0, perDelivered: 12.5 },
      [c.userId]: { fixed: 1500, perConfirmed: 0, perDelivered: 10 },
    };
    const expected = Object.fromEntries(
      Object.entries(rules).map(([userId, rule]) => {
        const confirmed = facts.filter((f) => f.by === userId && inPeriod(f.confirmedAt)).length;
        const delivered = facts.filter((f) => f.by === userId && f.delivered && inPeriod(f.delivered)).length;
        const amount = rule.fixed + rule.perConfirmed * confirmed + rule.perDelivered * delivered;
        return [userId, { confirmed, delivered, amount: amount.toFixed(2) }];
      }),
    );
    expect(expected[a.userId]).to.deep.equal({ confirmed: 3, delivered: 2, amount: '15.00' });

    const view = await owner.agent.get('/api/stats/team/pay').query(PERIOD).expect(200);
    expect(view.body).to.include({ from: PERIOD.from, to: PERIOD.to, currency: 'MAD' });
    expect(view.body.lines).to.have.length(4);
    for (const line of view.body.lines)
      expect({ confirmed: line.confirmed, delivered: line.delivered, amount: line.amount }, line.name).to.deep.equal(expected[line.user_id]);

    // A member sees their own line alone, on the API and the page.
    const mine = await b.agent.get('/api/stats/team/pay').query(PERIOD).expect(200);
    expect(mine.body.lines.map((l: { user_id: string }) => l.user_id)).to.deep.equal([b.userId]);
    const memberPage = await b.agent.get('/stats/team').query(PERIOD).expect(200);
    expect(memberPage.text.match(/<tr data-user="/g)).to.have.length(1);
    expect(memberPage.text).to.include(`<tr data-user="${b.userId}">`);

    // The page: each line's counts and amount, and links to the orders behind each count.
    const page = await owner.agent.get('/stats/team').query(PERIOD).expect(200);
    const pageLines = [...page.text.matchAll(/<tr data-user="([^"]+)">([\s\S]*?)<\/tr>/g)].map((m) => ({
      user_id: m[1],
      values: [...m[2].matchAll(/data-value="([^"]*)"/g)].map((v) => v[1]),
    }));
    expect(pageLines).to.have.length(4);
    for (const line of pageLines) {
      const e = expected[line.user_id];
      expect(line.values[0]).to.equal(String(e.confirmed));
      expect(line.values[1]).to.equal(String(e.delivered));
      expect(line.values[3]).to.equal(e.amount);
    }
    expect(page.text).to.include(`/orders?pay=confirmed&amp;member=${a.userId}&amp;period=2026-10-01..2026-10-31`);

    // The links' lists are the orders counted.
    const listed = await owner.agent.get('/orders').query({ pay: 'delivered', member: b.userId, period: '2026-10-01..2026-10-31' }).expect(200);
    const listedIds = [...listed.text.matchAll(/href="\/orders\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
    const expectedIds = facts.filter((f) => f.by === b.userId && f.delivered && inPeriod(f.delivered)).map((f) => f.id);
    expect(new Set(listedIds)).to.deep.equal(new Set(expectedIds));
    const confirmedList = await owner.agent.get('/api/orders').query({ pay: 'confirmed', member: a.userId, period: '2026-10-01..2026-10-31' }).expect(200);
    expect(confirmedList.body.orders.map((o: { id: string }) => o.id).sort()).to.deep.equal(
      facts
        .filter((f) => f.by === a.userId && inPeriod(f.confirmedAt))
        .map((f) => f.id)
        .sort(),
    );

    // The CSV: the page's lines, the same numbers.
    const csv = await owner.agent.get('/api/stats/team/pay.csv').query(PERIOD).buffer(true).expect(200);
    expect(csv.headers['content-type']).to.match(/^text\/csv/);
    const [header, ...rows] = parse(csv.text.replace(/^\uFEFF/, '')) as string[][];
    expect(header).to.deep.equal(['member', 'fixed_per_month', 'per_confirmed', 'per_delivered', 'confirmed', 'delivered', 'fixed_part', 'amount', 'currency']);
    expect(rows).to.have.length(4);
    rows.forEach((row, i) => {
      const line = view.body.lines[i];
      expect(row[0]).to.equal(line.name);
      expect(row.slice(4)).to.deep.equal([String(line.confirmed), String(line.delivered), line.fixed_part, line.amount, 'MAD']);
      expect(pageLines[i].values).to.deep.equal([String(line.confirmed), String(line.delivered), line.fixed_part, line.amount]);
    });
  });

  it('a fixed monthly amount over part of a month earns its share of the month’s days', async () => {
    const owner = await humanShop();
    await owner.agent
      .put(`/api/team/${owner.userId}`)
      .send({ pay: { fixed: 3000 } })
      .expect(200);
    const half = await owner.agent.get('/api/stats/team/pay').query({ from: '2026-11-01', to: '2026-11-15' }).expect(200);
    expect(half.body.lines[0].amount).to.equal('1500.00');
    const across = await owner.agent.get('/api/stats/team/pay').query({ from: '2026-10-17', to: '2026-11-15' }).expect(200);
    expect(across.body.lines[0].amount).to.equal(((3000 * 15) / 31 + 1500).toFixed(2));
  });
});
