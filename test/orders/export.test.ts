import crypto from 'node:crypto';
import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { humanShop, ORDER } from '../helpers/loop';

/** GET /api/orders/export.csv. */
type Shop = SignedIn & { workspaceId: string };

const COLUMNS = [
  'id',
  'created_at',
  'client_name',
  'phone',
  'store_name',
  'products_name',
  'address',
  'status',
  'calls',
  'last_outcome',
  'flags',
  'source',
  'external_id',
  'external_ref',
  'total_amount',
  'currency',
  'placed_at',
  'city',
  'note',
  'delivery_status',
  'carrier',
  'tracking_number',
  'carrier_status',
];

async function shop(): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId! };
}

/** Orders by SQL with the given fields (created_at included); returns their ids in the order given. */
async function insert(s: Shop, rows: Array<Record<string, unknown>>): Promise<string[]> {
  const inserted = await testKnex()('orders').insert(
    rows.map((fields) => ({
      workspace_id: s.workspaceId,
      client_name: 'Client',
      phone: '+212612345678',
      store_name: 'Atlas',
      products_name: 'Oil',
      status: 'pending',
      ...fields,
    })),
    ['id'],
  );
  return inserted.map((r: { id: string }) => r.id);
}

/** The answer's bytes exactly as sent (supertest's text decoding is not trusted with a BOM). */
function rawBody(res: request.Response, callback: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
}

function exportCsv(s: SignedIn, query: Record<string, string | string[]> = {}) {
  return s.agent.get('/api/orders/export.csv').query(query).buffer(true).parse(rawBody);
}

/** The file's records (header first), parsed back by a real CSV parser. */
function recordsOf(res: request.Response): string[][] {
  const bytes = res.body as Buffer;
  expect([...bytes.subarray(0, 3)], 'UTF-8 BOM').to.deep.equal([0xef, 0xbb, 0xbf]);
  return parse(bytes.subarray(3).toString('utf8'), { relax_column_count: false });
}

async function exported(s: SignedIn, query: Record<string, string | string[]> = {}): Promise<Array<Record<string, string>>> {
  const res = await exportCsv(s, query);
  expect(res.status, (res.body as Buffer).toString().slice(0, 300)).to.equal(200);
  const [header, ...rows] = recordsOf(res);
  expect(header).to.deep.equal(COLUMNS);
  return rows.map((cells) => Object.fromEntries(COLUMNS.map((name, i) => [name, cells[i]])));
}

describe('GET /api/orders/export.csv', () => {
  it('200: a CSV download, UTF-8 with a BOM, the header row, newest first', async () => {
    const s = await shop();
    const [older, newer] = await insert(s, [
      { client_name: 'Old', created_at: '2026-01-15T12:00:00Z' },
      {
        client_name: 'فاطمة',
        store_name: 'Boutique Éclat',
        address: 'Fès',
        created_at: '2026-07-01T12:00:00Z',
        status: 'confirmed',
        source: 'shopify',
        store_connection_id: crypto.randomUUID(),
        external_id: '5678901234',
        external_ref: '#1001',
        total_amount: '349.5',
        currency: 'MAD',
      },
    ]);
    const res = await exportCsv(s).expect(200);
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).to.match(/^attachment; filename="?orders-\d{4}-\d{2}-\d{2}\.csv"?$/);
    const text = (res.body as Buffer).toString('utf8');
    expect(text.startsWith(`\ufeff${COLUMNS.join(',')}\r\n`)).to.equal(true);
    const rows = await exported(s);
    expect(rows).to.deep.equal([
      {
        id: newer,
        created_at: '2026-07-01 13:00:00',
        client_name: 'فاطمة',
        phone: "'+212612345678",
        store_name: 'Boutique Éclat',
        products_name: 'Oil',
        address: 'Fès',
        status: 'confirmed',
        calls: '0',
        last_outcome: '',
        flags: '',
        source: 'shopify',
        external_id: '5678901234',
        external_ref: '#1001',
        total_amount: '349.50',
        currency: 'MAD',
        placed_at: '',
        city: '',
        note: '',
        delivery_status: '',
        carrier: '',
        tracking_number: '',
        carrier_status: '',
      },
      {
        id: older,
        created_at: '2026-01-15 13:00:00',
        client_name: 'Old',
        phone: "'+212612345678",
        store_name: 'Atlas',
        products_name: 'Oil',
        address: '',
        status: 'pending',
        calls: '0',
        last_outcome: '',
        flags: '',
        // Inserted without a source, as every order was before orders had one.
        source: 'api',
        external_id: '',
        external_ref: '',
        total_amount: '',
        currency: '',
        placed_at: '',
        city: '',
        note: '',
        delivery_status: '',
        carrier: '',
        tracking_number: '',
        carrier_status: '',
      },
    ]);
  });

  it('created_at is Morocco time: UTC+1, UTC+0 during Ramadan, and the date changes at local midnight', async () => {
    const s = await shop();
    await insert(s, [
      { client_name: 'winter', created_at: '2026-01-15T12:00:00Z' },
      { client_name: 'ramadan', created_at: '2026-03-01T12:00:00Z' },
      { client_name: 'summer night', created_at: '2026-07-01T23:30:00Z' },
      { client_name: 'micro', created_at: '2026-10-10T08:15:42.999999Z' },
    ]);
    const rows = await exported(s);
    expect(Object.fromEntries(rows.map((r) => [r.client_name, r.created_at]))).to.deep.equal({
      winter: '2026-01-15 13:00:00',
      ramadan: '2026-03-01 12:00:00',
      'summer night': '2026-07-02 00:30:00',
      micro: '2026-10-10 09:15:42',
    });
  });

  it('a cell that starts with =, +, -, @, a tab or a carriage return is prefixed with a quote', async () => {
    const s = await shop();
    const [id] = await insert(s, [
      {
        client_name: '=SUM(A1)',
        store_name: '-5',
        products_name: '@x',
        address: '\t=cmd',
        status: 'no-answer',
        created_at: '2026-07-01T12:00:00Z',
      },
    ]);
    const [cr] = await insert(s, [{ client_name: '\r=1+1', store_name: 'a=b', products_name: 'x+1', address: ' =1', created_at: '2026-07-01T11:00:00Z' }]);
    const rows = await exported(s);
    expect(rows[0]).to.include({
      id,
      client_name: "'=SUM(A1)",
      phone: "'+212612345678",
      store_name: "'-5",
      products_name: "'@x",
      address: "'\t=cmd",
      status: 'no-answer',
    });
    // Only the first character matters.
    expect(rows[1]).to.include({ id: cr, client_name: "'\r=1+1", store_name: 'a=b', products_name: 'x+1', address: ' =1' });
  });

  it('commas, quotes, semicolons and line breaks are quoted and read back unchanged', async () => {
    const s = await shop();
    const tricky = {
      client_name: 'Benali, "Mina"',
      store_name: 'A;B',
      products_name: 'Argan oil\nx2',
      address: 'Bloc "A"\r\nApt, 3',
      created_at: '2026-07-01T12:00:00Z',
    };
    await insert(s, [tricky]);
    const [row] = await exported(s);
    expect(row).to.include({ client_name: tricky.client_name, store_name: tricky.store_name, products_name: tricky.products_name, address: tricky.address });
  });

  it('the list’s filters: status, q, from (inclusive) and to (exclusive), Morocco dates', async () => {
    const s = await shop();
    const [a, b, c, d] = await insert(s, [
      { client_name: 'Hélène', status: 'confirmed', created_at: '2026-07-01T22:30:00Z' }, // 23:30 on 1 July in Morocco
      { client_name: 'Omar', status: 'pending', created_at: '2026-07-01T23:30:00Z', phone: '+212698765432' }, // 00:30 on 2 July
      { client_name: 'Sara', status: 'unconfirmed', created_at: '2026-07-03T10:00:00Z', products_name: 'Savon BELDI' },
      { client_name: 'Zineb 50%_off', status: 'confirmed', created_at: '2026-07-04T10:00:00Z' },
    ]);
    const ids = async (query: Record<string, string | string[]>) => (await exported(s, query)).map((r) => r.id);
    expect(await ids({})).to.deep.equal([d, c, b, a]);
    expect(await ids({ status: 'confirmed' })).to.deep.equal([d, a]);
    expect(await ids({ status: 'confirmed,unconfirmed' })).to.deep.equal([d, c, a]);
    expect(await ids({ status: ['pending', 'unconfirmed'] })).to.deep.equal([c, b]);
    expect(await ids({ q: 'helene' })).to.deep.equal([a]);
    expect(await ids({ q: 'beldi' })).to.deep.equal([c]);
    expect(await ids({ q: '0698 76' })).to.deep.equal([b]);
    expect(await ids({ q: '%_' })).to.deep.equal([d]);
    expect(await ids({ q: 'nobody' })).to.deep.equal([]);
    expect(await ids({ from: '2026-07-02' })).to.deep.equal([d, c, b]);
    expect(await ids({ to: '2026-07-02' })).to.deep.equal([a]);
    expect(await ids({ from: '2026-07-02', to: '2026-07-04' })).to.deep.equal([c, b]);
    expect(await ids({ from: '2026-07-01T23:00:00Z' })).to.deep.equal([d, c, b]);
    expect(await ids({ from: '2026-07-02T00:30:00+01:00' })).to.deep.equal([d, c, b]);
    expect(await ids({ to: '2026-07-02T10:30:00+1100' })).to.deep.equal([a]);
    expect(await ids({ from: '2026-07-02', status: 'confirmed', q: 'zineb' })).to.deep.equal([d]);
    // An empty result is still a file with its header.
    const empty = await exportCsv(s, { status: 'failed' }).expect(200);
    expect(recordsOf(empty)).to.deep.equal([COLUMNS]);
  });

  it('400 VALIDATION_ERROR naming each bad filter; JSON, not a file', async () => {
    const s = await shop();
    await insert(s, [{ created_at: '2026-07-01T12:00:00Z' }]);
    for (const [query, names] of [
      ['status=shipped', ['status']],
      ['from=2026-02-30', ['from']],
      ['to=abc', ['to']],
      ['from=2026-07-01T25:00', ['from']],
      // Offsets Postgres cannot read: refused before the query, not a 500.
      ['from=2026-07-01T00:00:00%2B99:99', ['from']],
      ['to=2026-07-01T00:00-16:00', ['to']],
      ['to=2026-07-01T00:00%2B1260', ['to']],
      ['q=a&q=b', ['q']],
      [`q=${'x'.repeat(201)}`, ['q']],
      ['from=1&to=2&status=nope', ['from', 'to', 'status']],
      ['from=2026-01-01&from=2026-01-02', ['from']],
      ['q=%00', ['q']],
    ] as const) {
      const res = await s.agent.get(`/api/orders/export.csv?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.headers['content-type'], query).to.match(/application\/json/);
      expect(res.headers['content-disposition'], query).to.equal(undefined);
      expect(res.body.code, query).to.equal('VALIDATION_ERROR');
      expect(Object.keys(res.body.fields), query).to.have.members([...names]);
    }
  });

  it('calls and last_outcome: every call of every operation of the order once, dropped claims not counted', async () => {
    const s = await shop();
    const order = (await s.agent.post('/api/orders').send(ORDER).expect(201)).body;
    const quiet = (
      await s.agent
        .post('/api/orders')
        .send({ ...ORDER, clientName: 'No calls' })
        .expect(201)
    ).body;
    const call = (attempt: number, fields: Record<string, unknown>) => ({
      workspace_id: s.workspaceId,
      operation_id: order.operation_id,
      kind: 'human',
      attempt,
      ...fields,
    });
    await testKnex()('calls').insert([
      call(1, { started_at: '2026-07-01T10:00:00Z', ended_at: '2026-07-01T10:01:00Z', outcome: 'no-answer' }),
      call(2, { started_at: '2026-07-01T12:00:00Z', ended_at: '2026-07-01T12:02:00Z', outcome: 'postponed', callback_at: '2026-07-02T10:00:00Z' }),
      // Ended earlier than attempt 2 though started later: the last outcome is by end time.
      call(3, { started_at: '2026-07-01T11:00:00Z', ended_at: '2026-07-01T11:30:00Z', outcome: 'failed' }),
      // A claim that expired: kept for the record, never a call.
      call(4, { started_at: '2026-07-01T13:00:00Z', dropped_at: '2026-07-01T13:10:00Z' }),
    ]);
    // A second operation of the same order (the first one finished) with a call still in progress.
    await testKnex()('operations').where({ id: order.operation_id }).update({ status: 'completed', next_attempt_at: null });
    const [second] = await testKnex()('operations').insert(
      {
        workspace_id: s.workspaceId,
        order_id: order.id,
        agent_id: (await testKnex()('operations').where({ id: order.operation_id }).first()).agent_id,
        direction: 'outbound',
        status: 'in_progress',
      },
      ['id'],
    );
    await testKnex()('calls').insert({ workspace_id: s.workspaceId, operation_id: second.id, kind: 'human', attempt: 1, started_at: '2026-07-01T14:00:00Z' });
    const rows = await exported(s);
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(rows).to.have.length(2);
    expect(byId[order.id]).to.include({ calls: '4', last_outcome: 'postponed' });
    expect(byId[quiet.id]).to.include({ calls: '0', last_outcome: '' });
  });

  it('calls and last_outcome from the real loop: a person claims the order and records an outcome', async () => {
    const s = await humanShop();
    const order = (await s.agent.post('/api/orders').send(ORDER).expect(201)).body;
    const claimed = await s.agent.post('/api/calls/next').expect(200);
    expect(claimed.body.call).to.be.an('object');
    // Claimed but not ended: one call, no outcome yet.
    const { status } = await testKnex()('orders').where({ id: order.id }).first();
    expect((await exported(s))[0]).to.include({ id: order.id, calls: '1', last_outcome: '', status });
    await s.agent.post(`/api/calls/${claimed.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    expect((await exported(s))[0]).to.include({ id: order.id, calls: '1', last_outcome: 'confirmed', status: 'confirmed' });
  });

  it('more than 2,000 orders (several internal batches, ties on created_at at the edges): each exactly once, newest first', async function () {
    this.timeout(120_000);
    const s = await shop();
    // 4,500 orders, 9 per instant: batches of 2,000 end in the middle of a tie.
    const base = Date.UTC(2026, 5, 1);
    const ids = await insert(
      s,
      Array.from({ length: 4500 }, (_, i) => ({ client_name: `C${i}`, created_at: new Date(base + Math.floor(i / 9) * 1000) })),
    );
    const rows = await exported(s);
    expect(rows).to.have.length(4500);
    expect(new Set(rows.map((r) => r.id)).size).to.equal(4500);
    expect(new Set(rows.map((r) => r.id))).to.deep.equal(new Set(ids));
    // Newest first: created_at never increases down the file, and (created_at, id) strictly decreases.
    const keys = rows.map((r) => `${r.created_at}|${r.id}`);
    expect(keys).to.deep.equal([...keys].sort().reverse());
  });

  it('isolation: another workspace’s orders never appear, whatever the filters', async () => {
    const [a, b] = [await shop(), await shop()];
    const [mine] = await insert(a, [{ client_name: 'Mine', created_at: '2026-07-01T12:00:00Z' }]);
    await insert(b, [
      { client_name: 'Mine too', created_at: '2026-07-01T12:00:00Z' },
      { client_name: 'Other', status: 'confirmed', created_at: '2026-07-01T12:00:00Z' },
    ]);
    expect((await exported(a)).map((r) => r.id)).to.deep.equal([mine]);
    expect((await exported(a, { q: 'mine' })).map((r) => r.id)).to.deep.equal([mine]);
    expect(await exported(a, { status: 'confirmed' })).to.deep.equal([]);
    const lonely = await signUp();
    expect(await exported(lonely)).to.deep.equal([]);
  });

  it('401 without a session; 403 without a workspace', async () => {
    const res = await request(appUrl()).get('/api/orders/export.csv');
    expect(res.status).to.equal(401);
    expect(res.headers['content-type']).to.match(/application\/json/);
    expect(res.body.error).to.be.a('string');
    const lonely = await signUp({ workspace: null });
    expect((await lonely.agent.get('/api/orders/export.csv')).status).to.equal(403);
  });
});
