import { expect } from 'chai';
import type { SignedIn } from '../helpers/app';
import { signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, openAllDay, ORDER } from '../helpers/loop';

/**
 * Issue 53, defect 8 and "what must hold" 9: /stats and /stats/team gave different "confirmed"
 * numbers for the same period with nothing to explain them. They count different things — /stats
 * the orders added in the period that are confirmed now (each once, however confirmed), /stats/team
 * the calls made in the period that ended confirmed or changed — and each page now says so. This
 * test builds a period where the two differ for every reason there is, and checks each number
 * against what it says it counts, read from the database.
 */

type Shop = SignedIn & { workspaceId: string };

async function shop(): Promise<Shop> {
  const owner = await signUp({ name: 'Karima Bennani' });
  await owner.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  await openAllDay(owner);
  return { ...owner, workspaceId: owner.workspaceId! };
}

/** Claims the one due call (the order just added) and records `outcome`; answers the order's id. */
async function call(s: Shop, orderId: string, outcome: string, extra: object = {}): Promise<void> {
  const claim = await s.agent.post('/api/calls/next').expect(200);
  expect(claim.body.order.id).to.equal(orderId);
  await s.agent
    .post(`/api/calls/${claim.body.call.id}/outcome`)
    .send({ outcome, ...extra })
    .expect(200);
}

const today = () => new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Casablanca' }).format(new Date());

describe('/stats and /stats/team: what "confirmed" counts (issue 53, defect 8)', () => {
  it('orders confirmed by a call, by a person, re-confirmed, changed, declined after a confirmation: each page’s number is what it says it counts', async () => {
    const s = await shop();
    let n = 0;
    const add = async () => (await createOrder(s, { ...ORDER, clientName: `Client ${n}`, phone: `06${String(20_000_000 + n++)}` })).id;

    const byCall = await add();
    await call(s, byCall, 'confirmed');
    const byPerson = await add();
    await s.agent.put(`/api/orders/${byPerson}`).send({ status: 'confirmed' }).expect(200);
    const twice = await add();
    await call(s, twice, 'confirmed');
    await s.agent.post(`/api/orders/${twice}/operations`).expect(201);
    await call(s, twice, 'confirmed');
    const changed = await add();
    await call(s, changed, 'order-changed', { changes: 'Size L instead of M' });
    const declined = await add();
    await call(s, declined, 'unconfirmed');
    const undone = await add();
    await call(s, undone, 'confirmed');
    await s.agent.put(`/api/orders/${undone}`).send({ status: 'unconfirmed' }).expect(200);

    // What each says it counts, from the rows themselves.
    const db = testKnex();
    const confirmedOrders = Number((await db('orders').where({ workspace_id: s.workspaceId, status: 'confirmed' }).count({ n: '*' }))[0].n);
    const confirmingCalls = Number(
      (
        await db('calls')
          .where({ workspace_id: s.workspaceId, made_by: s.userId })
          .whereIn('outcome', ['confirmed', 'order-changed'])
          .whereNull('dropped_at')
          .count({ n: '*' })
      )[0].n,
    );
    expect([confirmedOrders, confirmingCalls], 'the period differs for each reason').to.deep.equal([3, 5]);

    const period = `from=${today()}&to=${today()}`;
    const stats = (await s.agent.get(`/api/stats?${period}`).expect(200)).body;
    expect(stats.by_status.confirmed).to.equal(confirmedOrders);
    expect(stats.by_status['order-changed']).to.equal(1);
    expect(stats.orders).to.equal(6);
    const team = (await s.agent.get(`/api/stats/team?${period}`).expect(200)).body;
    const me = team.rows.find((r: { id: string }) => r.id === s.userId);
    expect(me.by_outcome.confirmed + me.by_outcome['order-changed']).to.equal(confirmingCalls);
    expect(me.by_outcome.unconfirmed).to.equal(1);

    // The pages show those numbers, each with the sentence that says what it counts, in en, fr and ar.
    const pages = {
      en: ['“Confirmed” here counts orders', '“Confirmed” here counts calls'],
      fr: ['« Confirmées » compte ici des commandes', '« Confirmées » compte ici des appels'],
      ar: ['«المؤكدة» هنا تحسب الطلبات', '«مؤكدة» هنا تحسب المكالمات'],
    };
    for (const [language, [statsWords, teamWords]] of Object.entries(pages)) {
      await s.agent.put('/api/account').send({ language }).expect(200);
      const statsPage = (await s.agent.get(`/stats?${period}`).expect(200)).text;
      expect(statsPage, language).to.match(new RegExp(`<dd>${confirmedOrders}</dd>`));
      const statsNote = /<p class="hint" id="confirmed-counts">([\s\S]*?)<\/p>/.exec(statsPage)?.[1] ?? '';
      expect(statsNote, language).to.contain(statsWords).and.contain(`href="/stats/team?from=${today()}&amp;to=${today()}"`);
      const teamPage = (await s.agent.get(`/stats/team?${period}`).expect(200)).text;
      const teamNote = /<p class="hint" id="confirmed-counts">([\s\S]*?)<\/p>/.exec(teamPage)?.[1] ?? '';
      expect(teamNote, language).to.contain(teamWords).and.contain(`href="/stats?from=${today()}&amp;to=${today()}"`);
      const row = /<th scope="row"><bdi>Karima Bennani<\/bdi>[\s\S]*?<\/tr>/.exec(teamPage)?.[0] ?? '';
      // The row's cells: calls, then confirmed.
      const cells = [...row.matchAll(/<td data-label="[^"]+">([^<]*)<\/td>/g)].map((m) => m[1]);
      expect(cells.slice(0, 2), language).to.deep.equal(['6', String(confirmingCalls)]);
    }
  });
});
