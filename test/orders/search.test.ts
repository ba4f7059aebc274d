import { expect } from 'chai';
import { Jobs } from '../../db/jobs';
import { IdempotencyService } from '../../services/shared';
import { OperationService, applyFilters, SEARCH_LIMITS, OrderService } from '../../services/orders';
import type { OrderFilters, Position, SearchLimits } from '../../services/orders';
import { signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/**
 * A search answers from the newest orders, from the search index's candidates, or by walking the
 * newest orders, whichever is cheaper (services/orders/search.ts). Whichever way answers, the rows,
 * their order, the pages and the counts are those of a plain filtered scan. Small limits reach each
 * way with a few dozen orders.
 */
const TINY: SearchLimits = { probe: 3, candidates: 4, countCandidates: 6, commonKey: 5000 };

function service(limits: SearchLimits): OrderService {
  const knex = testKnex();
  return new OrderService(knex, new IdempotencyService(knex), new OperationService(knex, new Jobs(knex)), limits);
}

const CITIES = ['Fès', 'Rabat', 'Meknès'];

/**
 * 36 orders a second apart (the last newest), and two more at the same instant as the newest (their
 * order is their id's). Every third is in Fès; a few are on "42 Rue Mohammed V" or "142 Rue
 * Mohammed V"; references run #1001…; two are in Arabic.
 */
async function workspace(): Promise<string> {
  const s = await signUp();
  const rows = Array.from({ length: 38 }, (_, i) => ({
    workspace_id: s.workspaceId!,
    client_name: i === 7 ? 'Aïcha Tazi' : `Client ${i}`,
    phone: `+2126000000${String(i).padStart(2, '0')}`,
    store_name: 'Atlas',
    products_name: 'Argan oil',
    status: i % 2 === 0 ? 'pending' : 'confirmed',
    city: i === 20 || i === 21 ? 'فَاس' : CITIES[i % 3],
    address: i === 5 || i === 30 ? '42 Rue Mohammed V' : i === 12 ? '142 Rue Mohammed V' : i === 13 ? '4 Rue Mohammed V' : `${i} Avenue Hassan II`,
    external_ref: `#${1001 + i}`,
    created_at: new Date(Date.UTC(2026, 0, 1) + Math.min(i, 35) * 1000),
  }));
  await testKnex()('orders').insert(rows);
  return s.workspaceId!;
}

const filters = (q: string, statuses: string[] = []): OrderFilters => ({ statuses, flags: [], q, from: null, to: null });

/** The matches by a plain filtered scan, newest first. */
async function scanned(workspaceId: string, wanted: OrderFilters): Promise<Array<{ id: string; at: string }>> {
  const query = testKnex()
    .from('orders as o')
    .where('o.workspace_id', workspaceId)
    .select('o.id', testKnex().raw(`to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at`))
    .orderBy([
      { column: 'o.created_at', order: 'desc' },
      { column: 'o.id', order: 'desc' },
    ]);
  return applyFilters(testKnex(), query, wanted);
}

/** Every page of `size` orders, older and older, then newer and newer back from the oldest. */
async function pagedBothWays(orders: OrderService, workspaceId: string, wanted: OrderFilters, size: number) {
  const older: string[] = [];
  let position: Position | null = null;
  for (;;) {
    const page = await orders.page(workspaceId, wanted, { limit: size, position, direction: 'older' });
    older.push(...page.orders.map((o) => o.id));
    if (!page.more) break;
    position = page.oldest;
  }
  // From the oldest match: the pages of newer ones, then that match itself.
  const all = await scanned(workspaceId, wanted);
  const oldest = all[all.length - 1];
  const newer: string[] = [oldest.id];
  let from: Position | null = { at: oldest.at, id: oldest.id };
  while (from) {
    const page = await orders.page(workspaceId, wanted, { limit: size, position: from, direction: 'newer' });
    newer.unshift(...page.orders.map((o) => o.id));
    from = page.more ? page.newest : null;
  }
  return { older, newer };
}

/** The statements a piece of work sends that read orders. */
async function statements(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const record = (query: { sql: string }) => sent.push(query.sql);
  testKnex().on('query', record);
  try {
    await work();
  } finally {
    testKnex().off('query', record);
  }
  return sent.filter((sql) => /"orders"/.test(sql));
}

describe('order search: the same answers whichever way finds them', () => {
  const searches: Array<[string, OrderFilters]> = [
    ['a city typed without its accent, common (one order in three)', filters('fes')],
    ['the city in Arabic, without its harakat', filters('فاس')],
    ['a rare name, in any case, without its diaeresis', filters('AICHA tazi')],
    ['a store reference with its #', filters('#1024')],
    ['a store reference without it', filters('1024')],
    ['an address that starts with a short word (its number)', filters('42 rue mohammed')],
    ['a phone number', filters('0600000017')],
    ['a common word under a status filter', filters('fes', ['pending'])],
    ['a search too short for the index', filters('a')],
  ];

  for (const [what, wanted] of searches) {
    it(`${what}: pages and counts as a plain filtered scan, with the default limits and with tiny ones`, async () => {
      const workspaceId = await workspace();
      const expected = await scanned(workspaceId, wanted);
      expect(expected.length, 'the seed has matches').to.be.greaterThan(0);
      const ids = expected.map((row) => row.id);
      for (const orders of [service(SEARCH_LIMITS), service(TINY), service({ ...TINY, probe: 0 })]) {
        const { older, newer } = await pagedBothWays(orders, workspaceId, wanted, 2);
        expect(older).to.deep.equal(ids);
        expect(newer).to.deep.equal(ids);
        expect(await orders.countUpTo(workspaceId, wanted)).to.equal(ids.length);
        // A page's position: how many matches are newer than each one.
        for (const [i, row] of expected.entries()) expect(await orders.countUpTo(workspaceId, wanted, { at: row.at, id: row.id })).to.equal(i);
      }
    });
  }

  it('a word too common for the candidate limit is answered by walking the newest orders after the probe and the index', async () => {
    const workspaceId = await workspace();
    const orders = service(TINY);
    const wanted = filters('fes');
    const ids = (await scanned(workspaceId, wanted)).map((row) => row.id);
    expect(ids).to.have.length(12);
    let page: Awaited<ReturnType<OrderService['page']>> | undefined;
    // The newest three orders hold one Fès: the probe finds too few, the index more than 4 candidates.
    const sent = await statements(async () => {
      page = await orders.page(workspaceId, wanted, { limit: 5, position: null, direction: 'older' });
    });
    expect(sent).to.have.length(3);
    expect(sent[1]).to.contain('candidates');
    expect(page!.orders.map((o) => o.id)).to.deep.equal(ids.slice(0, 5));
    expect(page!.more).to.equal(true);
    // Counted along the newest orders too: 12 candidates are more than 6.
    const counting = await statements(async () => expect(await orders.countUpTo(workspaceId, wanted)).to.equal(12));
    expect(counting).to.have.length(2);
  });

  it('a rare search is answered from the index in one statement, and a small shop from its newest orders in one', async () => {
    const workspaceId = await workspace();
    const rare = filters('aicha tazi');
    const fromIndex = await statements(() => service(TINY).page(workspaceId, rare, { limit: 5, position: null, direction: 'older' }));
    expect(fromIndex).to.have.length(1);
    expect(fromIndex[0]).to.contain('candidates');
    // One word: the probe of the newest 1,000 orders reads the whole shop, and that is the answer.
    const common = filters('fes');
    let found = 0;
    const probed = await statements(async () => {
      found = (await service(SEARCH_LIMITS).page(workspaceId, common, { limit: 50, position: null, direction: 'older' })).orders.length;
    });
    expect(probed).to.have.length(1);
    expect(probed[0]).to.not.contain('candidates');
    expect(found).to.equal(12);
  });

  it('a short meeting key finds "42 rue" inside "142 rue" and not "4 rue"', async () => {
    const workspaceId = await workspace();
    const { orders } = await service(SEARCH_LIMITS).listPage(workspaceId, filters('42 rue mohammed'), 50, null);
    expect(orders.map((o) => o.address)).to.deep.equal(['42 Rue Mohammed V', '142 Rue Mohammed V', '42 Rue Mohammed V']);
    const { rows } = await testKnex().raw(
      `SELECT order_search_keys(?::uuid, search_pattern_text('x 142 rue mohammed')) @> search_pattern_keys(?::uuid, search_pattern_text('42 rue mohammed')) AS found,
              order_search_keys(?::uuid, search_pattern_text('x 4 rue mohammed')) @> search_pattern_keys(?::uuid, search_pattern_text('42 rue mohammed')) AS other`,
      [workspaceId, workspaceId, workspaceId, workspaceId],
    );
    expect(rows[0]).to.deep.equal({ found: true, other: false });
  });
});

describe('order search at scale: counts remembered, common keys left out', () => {
  const version = async (workspaceId: string): Promise<number> => {
    const [row] = await testKnex()('order_search_versions').where('workspace_id', workspaceId).sum<Array<{ v: string | null }>>({ v: 'version' });
    return Number(row.v ?? 0);
  };

  const statusVersion = async (workspaceId: string): Promise<number> => {
    const [row] = await testKnex()('order_search_versions').where('workspace_id', workspaceId).sum<Array<{ v: string | null }>>({ v: 'status_version' });
    return Number(row.v ?? 0);
  };

  it("a search's counts by status (the list's chips) are remembered until an order of the workspace changes status, comes, goes or has its search text changed", async () => {
    const workspaceId = await workspace();
    const other = await workspace();
    const orders = service(SEARCH_LIMITS);
    const fes = filters('fes');
    /** The matches by status by a plain filtered scan. */
    const truth = async () => {
      const ids = (await scanned(workspaceId, fes)).map((o) => o.id);
      const rows: Array<{ status: string; n: number }> = await testKnex()('orders')
        .whereIn('id', ids)
        .groupBy('status')
        .select('status', testKnex().raw('count(*)::int AS n'));
      return Object.fromEntries(rows.map((row) => [row.status, row.n]));
    };
    const counted = async () => Object.fromEntries(Object.entries(await orders.countByStatus(workspaceId, fes)).filter(([, n]) => n > 0));
    expect(await truth()).to.deep.equal({ pending: 7, confirmed: 5 });
    expect(await counted()).to.deep.equal({ pending: 7, confirmed: 5 });
    // Asked again with nothing changed: no statement reads orders.
    expect(await statements(counted)).to.deep.equal([]);

    // A flag, and another workspace's status change: remembered, and still right.
    await testKnex()('orders')
      .where('workspace_id', workspaceId)
      .update({ flags: ['possible_duplicate'] });
    await testKnex()('orders').where('workspace_id', other).update({ status: 'failed' });
    expect(await statements(counted)).to.deep.equal([]);
    expect(await counted()).to.deep.equal(await truth());

    // One order of the workspace changes status (not even a match): counted again, and right.
    const [notFes] = await testKnex()('orders').where('workspace_id', workspaceId).whereNot('city', 'Fès').whereNot('city', 'فَاس').select('id');
    await testKnex()('orders').where('id', notFes.id).update({ status: 'failed' });
    expect(await statements(counted)).to.have.length(1);
    // A match changes status: the chips follow it at once.
    const [match] = await scanned(workspaceId, fes);
    await testKnex()('orders').where('id', match.id).update({ status: 'failed' });
    expect(await counted()).to.deep.equal(await truth());
    expect(await counted()).to.have.property('failed', 1);
    // A new match, then an order deleted: counted again each time.
    await testKnex()('orders').insert({
      workspace_id: workspaceId,
      client_name: 'New',
      phone: '+212622222222',
      store_name: 'S',
      products_name: 'P',
      city: 'Fès',
    });
    expect(await counted()).to.deep.equal(await truth());
    expect(Object.values(await counted()).reduce((sum, n) => sum + n, 0)).to.equal(13);
    await testKnex()('orders').where('id', match.id).del();
    expect(await counted()).to.deep.equal(await truth());
    expect(await counted()).to.not.have.property('failed');

    // Under a flag filter the chips depend on flags, which change without a status: counted each time.
    const flagged: OrderFilters = { ...fes, flags: ['possible_duplicate'] };
    const byFlag = async () => Object.entries(await orders.countByStatus(workspaceId, flagged)).filter(([, n]) => n > 0);
    expect(await byFlag()).to.have.length.greaterThan(0);
    expect(await statements(byFlag)).to.have.length(1);
    await testKnex()('orders').where('workspace_id', workspaceId).update({ flags: [] });
    expect(await byFlag()).to.deep.equal([]);
  });

  it('a search count is remembered until an order of the workspace comes, goes or has its search text changed; a status change or another workspace leaves it', async () => {
    const workspaceId = await workspace();
    const other = await workspace();
    const orders = service(SEARCH_LIMITS);
    const fes = filters('fes');
    const truth = async () => (await scanned(workspaceId, fes)).length;
    expect(await truth()).to.equal(12);
    expect(await orders.countUpTo(workspaceId, fes)).to.equal(12);
    // Asked again with nothing changed: no statement reads orders.
    expect(await statements(async () => expect(await orders.countUpTo(workspaceId, fes)).to.equal(12))).to.deep.equal([]);
    const before = await version(workspaceId);
    expect(before).to.be.greaterThan(0);

    // Statuses, flags and another workspace's new order: same version, and the count is still right.
    await testKnex()('orders')
      .where('workspace_id', workspaceId)
      .update({ status: 'confirmed', flags: ['possible_duplicate'] });
    await testKnex()('orders').insert({
      workspace_id: other,
      client_name: 'Elsewhere',
      phone: '+212611111111',
      store_name: 'S',
      products_name: 'P',
      city: 'Fès',
    });
    expect(await version(workspaceId)).to.equal(before);
    expect(await orders.countUpTo(workspaceId, fes)).to.equal(await truth());

    // A new order in Fès: counted again.
    const [added] = await testKnex()('orders')
      .insert({ workspace_id: workspaceId, client_name: 'New', phone: '+212622222222', store_name: 'S', products_name: 'P', city: 'Fès' })
      .returning('id');
    expect(await version(workspaceId)).to.equal(before + 1);
    expect(await orders.countUpTo(workspaceId, fes)).to.equal(13);
    expect(await truth()).to.equal(13);

    // Its city changed: counted again; the same value written again changes nothing.
    await testKnex()('orders').where('id', added.id).update({ city: 'Rabat' });
    expect(await orders.countUpTo(workspaceId, fes)).to.equal(12);
    const afterEdit = await version(workspaceId);
    await testKnex()('orders').where('id', added.id).update({ city: 'Rabat' });
    expect(await version(workspaceId)).to.equal(afterEdit);

    // An order deleted: counted again; the position count (newer than an order) is remembered apart.
    const newest = (await scanned(workspaceId, fes))[0];
    await testKnex()('orders').where('id', newest.id).del();
    expect(await orders.countUpTo(workspaceId, fes)).to.equal(11);
    const third = (await scanned(workspaceId, fes))[2];
    expect(await orders.countUpTo(workspaceId, fes, third)).to.equal(2);
    expect(await orders.countUpTo(workspaceId, fes)).to.equal(11);

    // With a status filter the count depends on statuses, which change all day: counted each time.
    const confirmed = filters('fes', ['confirmed']);
    expect(await orders.countUpTo(workspaceId, confirmed)).to.equal(11);
    expect(await statements(() => orders.countUpTo(workspaceId, confirmed))).to.have.length(1);
  });

  it('the search version moves once per statement, whatever its number of rows, and goes with its workspace', async () => {
    const s = await signUp();
    const workspaceId = s.workspaceId!;
    await testKnex().raw(
      `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, city)
       SELECT ?, 'Client ' || g, '+2126' || lpad(g::text, 8, '0'), 'Atlas', 'Argan oil', 'Fès' FROM generate_series(1, 500) g`,
      [workspaceId],
    );
    expect(await version(workspaceId)).to.equal(1);
    await testKnex()('orders').where('workspace_id', workspaceId).update({ city: 'Rabat' });
    expect(await version(workspaceId)).to.equal(2);
    expect(await statusVersion(workspaceId)).to.equal(0);
    await testKnex()('orders').where('workspace_id', workspaceId).update({ status: 'confirmed' });
    expect(await version(workspaceId)).to.equal(2);
    expect(await statusVersion(workspaceId)).to.equal(1);
    // The same status written again, or a flag: neither number moves.
    await testKnex()('orders')
      .where('workspace_id', workspaceId)
      .update({ status: 'confirmed', flags: ['possible_duplicate'] });
    expect([await version(workspaceId), await statusVersion(workspaceId)]).to.deep.equal([2, 1]);
    // A status and a search text in one statement: each moves once.
    await testKnex()('orders').where('workspace_id', workspaceId).update({ status: 'pending', city: 'Fès' });
    expect([await version(workspaceId), await statusVersion(workspaceId)]).to.deep.equal([3, 2]);
    await testKnex()('orders').where('workspace_id', workspaceId).whereRaw("client_name LIKE 'Client 1%'").del();
    expect(await version(workspaceId)).to.equal(4);
    // Deleting the workspace deletes its orders, and the versions go with them.
    await testKnex()('workspaces').where('id', workspaceId).del();
    const [left] = await testKnex()('orders').where('workspace_id', workspaceId).count<Array<{ n: string | number }>>({ n: '*' });
    expect(Number(left.n)).to.equal(0);
    expect(await testKnex()('order_search_versions').where('workspace_id', workspaceId)).to.deep.equal([]);
  });

  it('a key naming many orders (by the search index statistics) is left out beside a rarer one, and the answers are those of a scan', async function () {
    this.timeout(120_000);
    const s = await signUp();
    const workspaceId = s.workspaceId!;
    // 2,000 orders on one street, as a big shop in one city has them.
    await testKnex().raw(
      `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, address, created_at)
       SELECT ?, 'Client ' || g, '+2126' || lpad(g::text, 8, '0'), 'Atlas', 'Argan oil', g || ' Rue Mohammed V', now() - g * interval '1 minute'
         FROM generate_series(1, 2000) g`,
      [workspaceId],
    );
    await testKnex().raw('ANALYZE orders');
    const { rows } = await testKnex().raw(
      // The key where "rue" meets "mohammed" (every order has it), and the search's keys.
      `SELECT ARRAY[hashtext(?::text || 'rue moha')] AS street,
              search_pattern_keys(?::uuid, search_pattern_text('42 rue mohammed')) AS address`,
      [workspaceId, workspaceId],
    );
    const { street, address } = rows[0] as { street: number[]; address: number[] };
    expect(street).to.have.length(1);
    expect(address).to.include(street[0]).and.have.length(2);

    const orders = service({ ...SEARCH_LIMITS, commonKey: 1000 });
    const sent: Array<{ sql: string; bindings: unknown[] }> = [];
    const record = (query: { sql: string; bindings: unknown[] }) => sent.push(query);
    testKnex().on('query', record);
    let page: Awaited<ReturnType<OrderService['page']>>;
    try {
      page = await orders.page(workspaceId, filters('42 rue mohammed'), { limit: 50, position: null, direction: 'older' });
    } finally {
      testKnex().off('query', record);
    }
    // The street's key is among the common ones the candidates statement was given, and left out of its keys.
    const candidates = sent.find((query) => query.sql.includes('search_selective_keys'))!;
    const common = String(candidates.bindings.find((b) => typeof b === 'string' && b.startsWith('{')));
    expect(common.replace(/[{}]/g, '').split(',').map(Number)).to.include(street[0]);
    const { rows: chosen } = await testKnex().raw(
      'SELECT search_selective_keys(?::int[], ?::int[]) AS keys, search_selective_keys(?::int[], ?::int[]) AS alone',
      [`{${address.join(',')}}`, common, `{${street.join(',')}}`, common],
    );
    expect(chosen[0].keys).to.deep.equal(address.filter((k) => k !== street[0]));
    // Only common keys: all of them are kept.
    expect(chosen[0].alone).to.deep.equal(street);
    // 42, 142, 242 … 1942: twenty orders, newest first, as a scan finds them; and counted alike.
    const scan = await scanned(workspaceId, filters('42 rue mohammed'));
    expect(scan).to.have.length(20);
    expect(page!.orders.map((o) => o.id)).to.deep.equal(scan.map((o) => o.id));
    expect(await orders.countUpTo(workspaceId, filters('42 rue mohammed'))).to.equal(20);
  });
});
