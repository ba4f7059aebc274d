import { expect } from 'chai';
import type { Knex } from 'knex';
import { HANDLERS } from '../../jobs';
import { ANONYMISED_NAME, ANONYMISED_PHONE, RetentionService } from '../../services/orders';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/**
 * Retention (issue 58, item 2): orders last changed longer ago than the workspace keeps its
 * customers' details are anonymised by the worker's daily pass; every statistic reads the same.
 */
type Shop = SignedIn & { workspaceId: string; handlerId: string };

const MONTH_MS = 30 * 86_400_000;
const ago = (months: number, days = 0) => new Date(Date.now() - months * MONTH_MS - days * 86_400_000);
const day = (d: Date) => d.toISOString().slice(0, 10);

async function shop(): Promise<Shop> {
  const s = await signUp();
  const handler = await s.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId!, handlerId: handler.body.id };
}

interface Seed {
  created: Date;
  status: string;
  store?: string;
  city?: string | null;
  amount?: string;
  /** Calls of its one operation: kind, outcome, and whether it carries a reply. */
  calls?: Array<{ kind: 'human' | 'voice' | 'whatsapp'; outcome: string; reply?: boolean }>;
  delivery?: 'delivered' | 'refused' | 'returned';
  opStatus?: 'completed' | 'in_progress';
}

/** One order by SQL, as the loop and the carriers would have left it, its timestamps in the past. */
async function seed(s: Shop, o: Seed): Promise<string> {
  const db = testKnex();
  const [{ id }] = await db('orders').insert(
    {
      workspace_id: s.workspaceId,
      client_name: 'Fatima Zahra',
      phone: '+212612345678',
      store_name: o.store ?? 'Atlas',
      products_name: 'Argan oil',
      address: '12 rue des Roses',
      city: o.city === undefined ? 'Casablanca' : o.city,
      note: 'Call after 6 pm',
      status: o.status,
      total_amount: o.amount ?? '349.00',
      currency: 'MAD',
      created_at: o.created,
    },
    ['id'],
  );
  const [op] = await db('operations').insert(
    {
      workspace_id: s.workspaceId,
      order_id: id,
      agent_id: s.handlerId,
      status: o.opStatus ?? 'completed',
      created_at: o.created,
      attempts: o.calls?.length ?? 0,
    },
    ['id'],
  );
  for (const [i, call] of (o.calls ?? []).entries()) {
    const started = new Date(o.created.getTime() + (i + 1) * 3_600_000);
    await db('calls').insert({
      workspace_id: s.workspaceId,
      operation_id: op.id,
      kind: call.kind,
      attempt: i + 1,
      started_at: started,
      ended_at: new Date(started.getTime() + 90_000),
      outcome: call.outcome,
      duration_seconds: 90,
      made_by: call.kind === 'human' ? s.userId : null,
      summary: 'She wants it delivered to her sister in Rabat',
      changes: call.outcome === 'order-changed' ? 'Two bottles, not one' : null,
      reply: call.reply ? 'Oui je confirme, 12 rue des Roses' : null,
    });
  }
  if (o.delivery) {
    await db('orders')
      .where({ id })
      .update({
        delivery_status: o.delivery,
        delivery_carrier: 'Amana',
        delivery_tracking_number: `TR${id.slice(0, 8)}`,
        delivery_carrier_status: 'Livré',
        delivery_at: new Date(o.created.getTime() + 3 * 86_400_000),
        delivery_confirmer_kind: 'human',
        delivery_confirmer_id: s.userId,
      });
  }
  return id;
}

/** What every counter holds for the workspace, folded: what any period of /stats is read from. */
async function counters(db: Knex, workspaceId: string) {
  const fold = async (table: string, key: string, sums: string) =>
    (
      await db.raw(
        `SELECT ${key}, ${sums} FROM ${table} WHERE workspace_id = ? GROUP BY ${key} HAVING sum(n) <> 0 ORDER BY ${key
          .split(', ')
          .map((_, i) => i + 1)
          .join(', ')}`,
        [workspaceId],
      )
    ).rows;
  return {
    orders: await fold(
      'order_counts',
      'day, store_name, status, currency, finished, blocked',
      'sum(n)::int AS n, sum(amount)::text AS amount, sum(calls)::int AS calls, sum(called)::int AS called',
    ),
    statuses: await fold('order_status_counts', 'status', 'sum(n)::int AS n'),
    calls: await fold(
      'call_counts',
      'day, kind, member_id, agent_id, outcome',
      'sum(n)::int AS n, sum(answered)::int AS answered, sum(seconds)::text AS seconds',
    ),
    deliveries: await fold(
      'delivery_counts',
      'day, store_name, city, currency, status, confirmer_kind, confirmer_id',
      'sum(n)::int AS n, sum(amount)::text AS amount',
    ),
  };
}

/** /stats and /stats/team over several periods, as JSON and as the pages show them (a page's main, per-request tokens aside). */
async function figures(s: Shop, periods: Array<{ from: string; to: string }>) {
  const seen: unknown[] = [];
  for (const p of periods) {
    seen.push((await s.agent.get('/api/stats').query(p).expect(200)).body);
    seen.push((await s.agent.get('/api/stats/team').query(p).expect(200)).body);
    for (const page of ['/stats', '/stats/team']) {
      const html = (await s.agent.get(page).query(p).expect(200)).text;
      seen.push((/<main[\s\S]*<\/main>/.exec(html)?.[0] ?? html).replace(/ nonce="[^"]*"/g, '').replace(/name="_csrf" value="[^"]*"/g, ''));
    }
  }
  return seen;
}

describe('retention: the daily pass anonymises old orders, and every figure stays', function () {
  this.timeout(120_000);

  it('anonymises the orders past the limit (at most the cap per pass), keeps /stats identical, sends no webhook, and a second pass changes nothing', async () => {
    const s = await shop();
    const db = testKnex();
    await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201);
    // Three months of orders, 26 to 28 months ago: several statuses, stores, cities, calls and deliveries.
    const old: string[] = [];
    const plan: Seed[] = [
      {
        created: ago(28, 3),
        status: 'confirmed',
        calls: [
          { kind: 'voice', outcome: 'no-answer' },
          { kind: 'human', outcome: 'confirmed' },
        ],
        delivery: 'delivered',
      },
      {
        created: ago(28, 1),
        status: 'confirmed',
        store: 'Souk',
        city: 'Rabat',
        calls: [{ kind: 'whatsapp', outcome: 'confirmed', reply: true }],
        delivery: 'refused',
      },
      { created: ago(27, 10), status: 'unconfirmed', calls: [{ kind: 'human', outcome: 'unconfirmed' }] },
      // A WhatsApp reply that said nothing the loop understood: "answered" depends on the reply being there.
      { created: ago(27, 5), status: 'no-answer', city: null, calls: [{ kind: 'whatsapp', outcome: 'no-answer', reply: true }] },
      { created: ago(27, 2), status: 'order-changed', store: 'Souk', calls: [{ kind: 'human', outcome: 'order-changed' }], amount: '120.50' },
      { created: ago(26, 20), status: 'confirmed', city: 'Fès', calls: [{ kind: 'voice', outcome: 'confirmed' }], delivery: 'returned' },
      { created: ago(26, 8), status: 'failed', calls: [{ kind: 'voice', outcome: 'failed' }] },
      { created: ago(26, 2), status: 'confirmed', calls: [{ kind: 'human', outcome: 'confirmed' }], delivery: 'delivered', amount: '99.00' },
    ];
    for (const o of plan) old.push(await seed(s, o));
    // Kept: a recent order; an old order changed last month; an old order whose confirmation is under way.
    const recent = await seed(s, { created: ago(1), status: 'confirmed', calls: [{ kind: 'human', outcome: 'confirmed' }], delivery: 'delivered' });
    const editedLately = await seed(s, { created: ago(30), status: 'confirmed', calls: [{ kind: 'human', outcome: 'confirmed' }] });
    const underWay = await seed(s, { created: ago(30), status: 'calling', opStatus: 'in_progress' });
    // Age them: their last change a day after their creation (seeding changed them today) …
    await db.raw(`UPDATE orders SET changed_at = created_at + interval '1 day' WHERE workspace_id = ? AND id <> ?`, [s.workspaceId, recent]);
    // … but the edited one was last changed a month ago.
    await db('orders')
      .where({ id: editedLately })
      .update({ changed_at: ago(1) });

    const periods = [
      { from: day(ago(29)), to: day(ago(25)) },
      { from: day(ago(28, 5)), to: day(ago(27, 20)) },
      { from: day(ago(27, 6)), to: day(ago(26, 1)) },
      { from: day(ago(31)), to: day(ago(30, -3)) },
    ];
    const before = { figures: await figures(s, periods), counters: await counters(db, s.workspaceId) };
    const hooksBefore = await db('webhook_deliveries').where({ workspace_id: s.workspaceId }).count<[{ count: string }]>('* as count');

    // The figures are there to compare: orders, calls by channel, deliveries by city; the endpoint heard of each order.
    const stats = before.figures[0] as { orders: number; calls: number; delivery: { by_city: Array<{ city: string | null }> } };
    expect(stats.orders).to.equal(plan.length);
    expect(stats.calls).to.equal(9);
    expect(stats.delivery.by_city.map((c) => c.city)).to.include.members(['Casablanca', 'Rabat', 'Fès']);
    expect(Number(hooksBefore[0].count)).to.be.greaterThan(0);

    const retention = new RetentionService(db);
    // Bounded: a cap of 3 takes 3, in batches of 2.
    expect(await retention.pass({ workspaceIds: [s.workspaceId], cap: 3, batchSize: 2 })).to.deep.equal({ orders: 3, workspaces: 1 });
    const anonymised = () => db('orders').where({ workspace_id: s.workspaceId }).whereNotNull('anonymised_at').count<[{ count: number }]>('* as count');
    expect(Number((await anonymised())[0].count)).to.equal(3);
    expect(await retention.pass({ workspaceIds: [s.workspaceId], batchSize: 2 })).to.deep.equal({ orders: old.length - 3, workspaces: 1 });

    // The personal fields are gone; what the statistics need stays.
    const orders = await db('orders').whereIn('id', old).orderBy('created_at');
    for (const [i, o] of orders.entries()) {
      expect(o).to.include({ client_name: ANONYMISED_NAME, phone: ANONYMISED_PHONE, address: null, city: null, note: null, status: plan[i].status });
      expect(o.anonymised_at).to.be.an.instanceOf(Date);
      expect(o.delivery_status).to.equal(plan[i].delivery ?? null);
      expect(o.search_text).not.to.match(/fatima|roses|casablanca/i);
    }
    const calls = await db('calls as c').join('operations as p', 'p.id', 'c.operation_id').whereIn('p.order_id', old).select('c.*');
    expect(calls).to.have.length(9);
    for (const c of calls) {
      expect(c).to.include({ summary: null, changes: null, summary_code: null });
      expect(c.reply === null || c.reply === '').to.equal(true);
    }
    expect(calls.filter((c) => c.reply === '')).to.have.length(2);

    // Orders newer than the limit, changed lately or under way are untouched.
    for (const id of [recent, editedLately, underWay]) {
      expect(await db('orders').where({ id }).first()).to.include({
        client_name: 'Fatima Zahra',
        phone: '+212612345678',
        anonymised_at: null,
        note: 'Call after 6 pm',
      });
    }

    // Every figure, every counter identical; no order.updated sent to the shop's endpoint.
    expect(await counters(db, s.workspaceId)).to.deep.equal(before.counters);
    expect(await figures(s, periods)).to.deep.equal(before.figures);
    expect(await db('webhook_deliveries').where({ workspace_id: s.workspaceId }).count<[{ count: string }]>('* as count')).to.deep.equal(hooksBefore);

    // A second pass changes nothing.
    const rows = await db('orders').where({ workspace_id: s.workspaceId }).orderBy('id');
    expect(await retention.pass({ workspaceIds: [s.workspaceId] })).to.deep.equal({ orders: 0, workspaces: 0 });
    expect(await db('orders').where({ workspace_id: s.workspaceId }).orderBy('id')).to.deep.equal(rows);

    // The order page says so, and shows no customer history for the shared marker phone.
    for (const language of ['en', 'fr', 'ar']) {
      const page = await s.agent.get(`/orders/${old[0]}`).set('Accept-Language', language).expect(200);
      expect(page.text).to.contain('id="anonymised"');
      expect(page.text).not.to.contain('history-heading');
      expect(page.text).not.to.contain('212000000000');
    }
    const kept = await s.agent.get(`/orders/${recent}`).expect(200);
    expect(kept.text).not.to.contain('id="anonymised"');
  });

  it('the pass keeps to each workspace’s own setting', async () => {
    const s = await shop();
    const db = testKnex();
    await s.agent.put('/api/settings/retention').send({ retentionMonths: 3 }).expect(200);
    const fourMonths = await seed(s, { created: ago(4), status: 'confirmed' });
    const twoMonths = await seed(s, { created: ago(2), status: 'confirmed' });
    await db.raw(`UPDATE orders SET changed_at = created_at WHERE workspace_id = ?`, [s.workspaceId]);
    expect(await new RetentionService(db).pass({ workspaceIds: [s.workspaceId] })).to.deep.equal({ orders: 1, workspaces: 1 });
    expect((await db('orders').where({ id: fourMonths }).first()).anonymised_at).to.be.an.instanceOf(Date);
    expect((await db('orders').where({ id: twoMonths }).first()).anonymised_at).to.equal(null);
  });

  it('the worker runs the pass daily', () => {
    const handler = HANDLERS.find((h) => h.queue === 'retention');
    expect(handler?.schedule?.cron).to.match(/^\d+ \d+ \* \* \*$/);
  });
});

describe('retention: the setting', function () {
  this.timeout(60_000);

  it('GET|PUT /api/settings/retention: 24 by default, 3 to 120, the owner’s', async () => {
    const owner = await signUp();
    expect((await owner.agent.get('/api/settings/retention').expect(200)).body).to.deep.equal({ retention_months: 24 });
    for (const bad of [2, 121, 12.5, 'twelve', null]) {
      const res = await owner.agent.put('/api/settings/retention').send({ retentionMonths: bad }).expect(400);
      expect(res.body.fields).to.have.property('retentionMonths');
      expect(res.body.fields.retentionMonths).to.contain('3 to 120');
    }
    expect((await owner.agent.put('/api/settings/retention').send({ retention_months: 3 }).expect(200)).body).to.deep.equal({ retention_months: 3 });
    expect((await owner.agent.put('/api/settings/retention').send({ retentionMonths: 120 }).expect(200)).body).to.deep.equal({ retention_months: 120 });
    expect((await owner.agent.get('/api/settings/retention').expect(200)).body).to.deep.equal({ retention_months: 120 });

    const member = await signUp({ invitedBy: owner });
    await member.agent.put('/api/settings/retention').send({ retentionMonths: 6 }).expect(403);
    expect((await member.agent.get('/api/settings/retention').expect(200)).body).to.deep.equal({ retention_months: 120 });
  });

  it('the settings page: the owner’s field, re-rendered with the message (en, fr, ar), saved; a member reads it', async () => {
    const owner = await signUp();
    const messages = { en: 'from 3 to 120', fr: '3', ar: '3' };
    for (const [language, words] of Object.entries(messages)) {
      const page = await owner.agent.get('/settings').set('Accept-Language', language).expect(200);
      expect(page.text).to.contain('name="retention_months"');
      expect(page.text).to.contain('value="24"');
      for (const bad of ['2', '121', 'abc']) {
        const res = await owner.agent
          .post('/settings/retention')
          .set('Accept-Language', language)
          .type('form')
          .send({ _csrf: csrfFrom(page.text), retention_months: bad })
          .expect(400);
        expect(res.text).to.match(/id="f-retention_months"[^>]*\n?[^>]*aria-invalid="true"|aria-invalid="true"[\s\S]*id="f-retention_months-error"/);
        expect(res.text).to.contain('id="f-retention_months-error"');
        expect(res.text).to.contain(words);
        expect(res.text).to.contain(`value="${bad}"`);
      }
    }
    const page = await owner.agent.get('/settings').expect(200);
    const saved = await owner.agent
      .post('/settings/retention')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), retention_months: ' 36 ' })
      .expect(303);
    expect(saved.headers.location).to.equal('/settings#retention-heading');
    expect((await owner.agent.get('/settings').expect(200)).text).to.contain('value="36"');

    const member = await signUp({ invitedBy: owner });
    const seen = await member.agent.get('/settings').expect(200);
    expect(seen.text).not.to.contain('name="retention_months"');
    expect(seen.text).to.contain('36');
    await member.agent
      .post('/settings/retention')
      .type('form')
      .send({ _csrf: csrfFrom(seen.text), retention_months: '6' })
      .expect(403);
    expect((await owner.agent.get('/api/settings/retention').expect(200)).body).to.deep.equal({ retention_months: 36 });
  });
});
