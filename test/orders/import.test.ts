import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import type { SignedIn } from '../helpers/app';
import { appUrl, signUp, unsetOrderHandler } from '../helpers/app';
import { testKnex } from '../helpers/db';

/**
 * POST /api/orders/import: a CSV file as the body becomes orders by the rules
 * of POST /api/orders, all or nothing for the file, with per-line errors for the rows it skips.
 */
type Shop = SignedIn & { workspaceId: string; handlerId: string };

async function shop(): Promise<Shop> {
  const s = await signUp();
  const handler = await s.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId!, handlerId: handler.body.id };
}

/** Sends the file as the raw body, as the import page and a script would. */
function importCsv(s: SignedIn, file: string | Buffer, headers: Record<string, string> = {}) {
  return s.agent
    .post('/api/orders/import')
    .set('Content-Type', 'text/csv')
    .set(headers)
    .send(Buffer.isBuffer(file) ? file : Buffer.from(file, 'utf8'));
}

const ordersOf = (workspaceId: string) =>
  testKnex()('orders')
    .where({ workspace_id: workspaceId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
async function countOrders(workspaceId: string): Promise<number> {
  const [{ n }] = await testKnex()('orders').where({ workspace_id: workspaceId }).count<{ n: string }[]>({ n: '*' });
  return Number(n);
}

/** A refused file: a 4xx JSON answer with an `error`, and not one order written. */
async function expectRefused(s: Shop, res: request.Response, status: number): Promise<void> {
  expect(res.status, res.text.slice(0, 300)).to.equal(status);
  expect(res.headers['content-type']).to.match(/application\/json/);
  expect(res.body.error).to.be.a('string').and.not.equal('');
  expect(await countOrders(s.workspaceId)).to.equal(0);
  expect(await testKnex()('operations').where({ workspace_id: s.workspaceId })).to.deep.equal([]);
}

const HEADER = 'client_name,phone,store_name,products_name,address';

/**
 * Takes a large import's dispatch jobs off the shared queue once its test has checked them, so the
 * workers of later tests do not work through thousands of them before their own orders' jobs.
 */
async function unqueue(workspaceId: string): Promise<void> {
  const operationIds = await testKnex()('operations').where({ workspace_id: workspaceId }).pluck('id');
  // One pass over the queue's jobs, whatever the planner knows of the table.
  await testKnex().raw("DELETE FROM pgboss.job WHERE name = 'operation-due' AND singleton_key = ANY(?::text[])", [operationIds]);
}

describe('POST /api/orders/import', () => {
  it('200: every row becomes an order (phone normalised, status pending) with one pending operation and its operation-due job', async () => {
    const s = await shop();
    const file = `${HEADER}\nAmina Benali,0612345678,Atlas Shop,Argan oil x2,12 rue Fès\nYoussef,+212 6 98 76 54 32,Atlas Shop,Savon noir,\n`;
    const res = await importCsv(s, file)
      .expect(200)
      .expect('Content-Type', /application\/json/);
    expect(Object.keys(res.body)).to.deep.equal(['imported', 'skipped', 'errors', 'order_ids', 'format', 'encoding', 'ignored_columns']);
    expect(res.body).to.include({ format: 'csv', encoding: 'utf-8' });
    expect(res.body).to.include({ imported: 2, skipped: 0 });
    expect(res.body.errors).to.deep.equal([]);
    const rows = await ordersOf(s.workspaceId);
    expect(rows.map((r) => r.id)).to.deep.equal(res.body.order_ids);
    expect(rows.map((r) => [r.client_name, r.phone, r.store_name, r.products_name, r.address, r.status])).to.deep.equal([
      ['Amina Benali', '+212612345678', 'Atlas Shop', 'Argan oil x2', '12 rue Fès', 'pending'],
      ['Youssef', '+212698765432', 'Atlas Shop', 'Savon noir', null, 'pending'],
    ]);
    const operations = await testKnex()('operations').whereIn('order_id', res.body.order_ids);
    expect(operations).to.have.length(2);
    for (const op of operations) expect(op).to.include({ status: 'pending', agent_id: s.handlerId, workspace_id: s.workspaceId, attempts: 0 });
    expect(new Set(operations.map((op) => op.order_id))).to.deep.equal(new Set(res.body.order_ids));
    // A worker in another test may already have taken the job: it is then in the archive.
    for (const op of operations) {
      const jobs = await testKnex().raw(
        `SELECT name FROM pgboss.job WHERE name = 'operation-due' AND data->>'operationId' = ?
         UNION ALL SELECT name FROM pgboss.archive WHERE name = 'operation-due' AND data->>'operationId' = ?`,
        [op.id, op.id],
      );
      expect(jobs.rows, `job of operation ${op.id}`).to.have.length(1);
    }
    // The API shows them as orders created by POST /api/orders would be.
    const listed = await s.agent.get('/api/orders').expect(200);
    expect(listed.body.orders.map((o: { id: string }) => o.id)).to.have.members(res.body.order_ids);
    expect(listed.body.orders.every((o: { operation_id: string | null }) => o.operation_id)).to.equal(true);
  });

  it('semicolon-separated with a BOM and CRLF, as Excel writes it in French locales', async () => {
    const s = await shop();
    const file = `\ufeffclient_name;phone;store_name;products_name;address\r\nAmina, dite "Mina";0612345678;Atlas;Huile, argan;Rue 1, Fès\r\n`;
    const res = await importCsv(s, file).expect(200);
    expect(res.body).to.include({ imported: 1, skipped: 0 });
    const [row] = await ordersOf(s.workspaceId);
    expect(row).to.include({ client_name: 'Amina, dite "Mina"', products_name: 'Huile, argan', address: 'Rue 1, Fès', phone: '+212612345678' });
  });

  it('empty lines before a semicolon header: the separator is still read from the header; line numbers count them', async () => {
    const s = await shop();
    const res = await importCsv(s, '\r\n\r\nnom;telephone;boutique;produit\r\nA, B;0612345678;S;P\r\nC;1;S;P\r\n').expect(200);
    expect(res.body).to.include({ imported: 1, skipped: 1 });
    expect(res.body.errors.map((e: { line: number }) => e.line)).to.deep.equal([5]);
    expect((await ordersOf(s.workspaceId)).map((r) => r.client_name)).to.deep.equal(['A, B']);
  });

  it('quoted fields hold separators, doubled quotes and line breaks', async () => {
    const s = await shop();
    const file = [
      'name,phone,store,products,address',
      '"Benali, Amina",0612345678,"Atlas ""Premium""","Argan oil\nx2","Bloc A\r\nApt 3"',
      '"Omar;Z",0698765432,Atlas,"a,b,c",',
    ].join('\n');
    const res = await importCsv(s, file).expect(200);
    expect(res.body).to.include({ imported: 2, skipped: 0 });
    const rows = await ordersOf(s.workspaceId);
    expect(rows.map((r) => [r.client_name, r.store_name, r.products_name, r.address])).to.deep.equal([
      ['Benali, Amina', 'Atlas "Premium"', 'Argan oil\nx2', 'Bloc A\nApt 3'],
      ['Omar;Z', 'Atlas', 'a,b,c', null],
    ]);
  });

  it('French header names, any case and accents, in any order', async () => {
    const s = await shop();
    const file = 'Adresse;Produit;BOUTIQUE;Téléphone;Nom complet\nRue 7;Savon;Éclat;0612345678;Hélène\n';
    const res = await importCsv(s, file).expect(200);
    expect(res.body).to.include({ imported: 1, skipped: 0 });
    const rows = await ordersOf(s.workspaceId);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ client_name: 'Hélène', phone: '+212612345678', store_name: 'Éclat', products_name: 'Savon', address: 'Rue 7' });
    for (const header of [
      'nom;telephone;magasin;produits;adresse',
      'NOM COMPLET;TELEPHONE;Boutique;Article;ADRESSE',
      'client;tel;store;product;address',
      'clientName;mobile;storeName;productsName;address',
    ]) {
      const other = await shop();
      const again = await importCsv(other, `${header}\nA;0612345678;S;P;R\n`);
      expect(again.status, `${header}: ${again.text}`).to.equal(200);
      expect(again.body.imported, header).to.equal(1);
    }
  });

  it('Arabic header names and Arabic text', async () => {
    const s = await shop();
    const file = 'الاسم,الهاتف,المتجر,المنتج,العنوان\nفاطمة الزهراء,٠٦١٢٣٤٥٦٧٨,متجر الأطلس,زيت الأركان,الدار البيضاء\n';
    const res = await importCsv(s, file).expect(200);
    expect(res.body).to.include({ imported: 1, skipped: 0 });
    const [row] = await ordersOf(s.workspaceId);
    expect(row).to.include({
      client_name: 'فاطمة الزهراء',
      phone: '+212612345678',
      store_name: 'متجر الأطلس',
      products_name: 'زيت الأركان',
      address: 'الدار البيضاء',
    });
  });

  it('the optional status column: a valid value is used (any case), an empty one is pending, a bad one is a per-line error', async () => {
    const s = await shop();
    const file = [
      `${HEADER},Status`,
      'A,0612345678,S,P,,confirmed',
      'B,0612345678,S,P,,',
      'C,0612345678,S,P,,Unconfirmed',
      'D,0612345678,S,P,,shipped',
      'E,12,S,P,,shipped',
    ].join('\n');
    const res = await importCsv(s, file).expect(200);
    expect(res.body).to.include({ imported: 3, skipped: 2 });
    expect(res.body.errors.map((e: { line: number }) => e.line)).to.deep.equal([5, 6]);
    expect(Object.keys(res.body.errors[0].fields)).to.deep.equal(['status']);
    expect(res.body.errors[0].fields.status)
      .to.be.a('string')
      .and.match(/status/i);
    // A bad status does not hide a bad phone on the same line.
    expect(Object.keys(res.body.errors[1].fields)).to.deep.equal(['phone', 'status']);
    const rows = await ordersOf(s.workspaceId);
    expect(rows.map((r) => [r.client_name, r.status])).to.deep.equal([
      ['A', 'confirmed'],
      ['B', 'pending'],
      ['C', 'unconfirmed'],
    ]);
  });

  it('unknown extra columns are ignored', async () => {
    const s = await shop();
    const file =
      'id,client_name,workspace_id,phone,store_name,created_at,products_name,notes\n42,Amina,00000000-0000-4000-8000-000000000000,0612345678,Atlas,1999-01-01,Oil,call after 6pm\n';
    const res = await importCsv(s, file).expect(200);
    expect(res.body).to.include({ imported: 1, skipped: 0 });
    const [row] = await ordersOf(s.workspaceId);
    expect(row.id).to.equal(res.body.order_ids[0]);
    expect(row).to.include({ client_name: 'Amina', workspace_id: s.workspaceId, address: null });
    expect(new Date(row.created_at).getUTCFullYear()).to.be.at.least(2025);
  });

  it('invalid rows are skipped with their physical line number (after a multi-line field and empty lines) and the reason per field', async () => {
    const s = await shop();
    const file = [
      HEADER, //                                               1
      'Good One,0612345678,Atlas,"Argan', //                   2
      'oil x2",', //                                           3
      '', //                                                   4
      ',12345,Atlas,Oil,', //                                  5: no name, bad phone
      '', //                                                   6
      '', //                                                   7
      'Two Lines,0612345678,,"first', //                       8: no store
      'second",', //                                           9
      'Good Two,0698765432,Atlas,Soap,', //                   10
      `Long,0612345678,Atlas,Soap,${'x'.repeat(501)}`, //     11: address too long
    ].join('\n');
    const res = await importCsv(s, file).expect(200);
    expect(res.body).to.include({ imported: 2, skipped: 3 });
    expect(res.body.errors.map((e: { line: number }) => e.line)).to.deep.equal([5, 8, 11]);
    expect(Object.keys(res.body.errors[0].fields)).to.have.members(['clientName', 'phone']);
    expect(Object.keys(res.body.errors[1].fields)).to.deep.equal(['storeName']);
    expect(Object.keys(res.body.errors[2].fields)).to.deep.equal(['address']);
    for (const e of res.body.errors) for (const reason of Object.values(e.fields)) expect(reason).to.be.a('string').and.not.equal('');
    const rows = await ordersOf(s.workspaceId);
    expect(rows.map((r) => r.client_name)).to.deep.equal(['Good One', 'Good Two']);
    expect(rows.map((r) => r.id)).to.deep.equal(res.body.order_ids);
  });

  it('a file where every row is invalid: 200 with imported 0 and every line reported; nothing written', async () => {
    const s = await shop();
    const res = await importCsv(s, `${HEADER}\nA,1,S,P,\nB,2,S,P,\n`).expect(200);
    expect(res.body).to.deep.equal({
      imported: 0,
      skipped: 2,
      order_ids: [],
      format: 'csv',
      encoding: 'utf-8',
      ignored_columns: [],
      errors: [
        // Each refused line shows its cells (issue 53): which row it is, and the bad value.
        {
          line: 2,
          fields: { phone: res.body.errors[0].fields.phone },
          values: { clientName: 'A', phone: '1', storeName: 'S', productsName: 'P', address: '' },
        },
        {
          line: 3,
          fields: { phone: res.body.errors[1].fields.phone },
          values: { clientName: 'B', phone: '2', storeName: 'S', productsName: 'P', address: '' },
        },
      ],
    });
    expect(res.body.errors[0].fields.phone).to.match(/phone/i);
    expect(await countOrders(s.workspaceId)).to.equal(0);
  });

  it('400 VALIDATION_ERROR naming each missing required column; nothing written', async () => {
    const s = await shop();
    const res = await importCsv(s, 'nom,adresse,notes\nAmina,Rue 1,x\n');
    await expectRefused(s, res, 400);
    expect(res.body.code).to.equal('VALIDATION_ERROR');
    expect(Object.keys(res.body.fields)).to.have.members(['phone', 'storeName', 'productsName']);
    // Each reason names the accepted column names, so the user can fix the header.
    expect(res.body.fields.phone).to.match(/telephone/);
    const one = await importCsv(s, 'client_name,phone,store_name\nA,0612345678,S\n');
    await expectRefused(s, one, 400);
    expect(Object.keys(one.body.fields)).to.deep.equal(['productsName']);
  });

  it('422 NO_ORDER_HANDLER for the whole file; no order written', async () => {
    const s = await signUp();
    await unsetOrderHandler(s);
    const res = await importCsv(s, `${HEADER}\nA,0612345678,S,P,\n`);
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('NO_ORDER_HANDLER');
    expect(await countOrders(s.workspaceId!)).to.equal(0);
  });

  it('bad rows spread over several batches of 1,000: each reported by its line, in order; the others imported in the file’s order', async () => {
    const s = await shop();
    const bad = new Set([2, 999, 1000, 1001, 2003, 2499]);
    const lines = Array.from({ length: 2500 }, (_, i) => `C${i},${bad.has(i) ? '12345' : '0612345678'},S,P,`);
    const res = await importCsv(s, `${HEADER}\n${lines.join('\n')}\n`).expect(200);
    expect(res.body).to.include({ imported: 2494, skipped: 6 });
    // Line 1 is the header: row i is on line i + 2.
    expect(res.body.errors.map((e: { line: number }) => e.line)).to.deep.equal([...bad].map((i) => i + 2));
    for (const e of res.body.errors) expect(Object.keys(e.fields)).to.deep.equal(['phone']);
    const stored = await ordersOf(s.workspaceId).select('id', 'client_name');
    expect(stored.map((r) => r.id)).to.deep.equal(res.body.order_ids);
    expect(stored.map((r) => r.client_name)).to.deep.equal(lines.map((_, i) => `C${i}`).filter((_, i) => !bad.has(i)));
    await unqueue(s.workspaceId);
  });

  it('Postgres refusing a row of the third batch: a clean 500, and nothing of the file written (the first two batches undone)', async () => {
    const s = await shop();
    const knex = testKnex();
    // A fault of Postgres's own for one name, which passes every check the service makes.
    await knex.raw("CREATE FUNCTION test_import_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected import fault'; END $$");
    await knex.raw(
      "CREATE TRIGGER test_import_fault BEFORE INSERT ON orders FOR EACH ROW WHEN (NEW.client_name = 'Refused By Postgres') EXECUTE FUNCTION test_import_fault()",
    );
    try {
      const lines = Array.from({ length: 2500 }, (_, i) => `${i === 2200 ? 'Refused By Postgres' : `C${i}`},0612345678,S,P,`);
      const res = await importCsv(s, `${HEADER}\n${lines.join('\n')}\n`);
      expect(res.status).to.equal(500);
      expect(res.body.error).to.be.a('string').and.not.equal('');
      expect(res.text).not.to.match(/injected import fault|INSERT|\.js:\d+/);
      expect(await countOrders(s.workspaceId)).to.equal(0);
      expect(await knex('operations').where({ workspace_id: s.workspaceId })).to.deep.equal([]);
      // The server goes on: the same file without the refused row is imported whole.
      const ok = await importCsv(s, `${HEADER}\n${lines.filter((_, i) => i !== 2200).join('\n')}\n`).expect(200);
      expect(ok.body.imported).to.equal(2499);
      expect(await countOrders(s.workspaceId)).to.equal(2499);
      await unqueue(s.workspaceId);
    } finally {
      await knex.raw('DROP TRIGGER test_import_fault ON orders');
      await knex.raw('DROP FUNCTION test_import_fault()');
    }
  });

  describe('Idempotency-Key', () => {
    // Line 3 has three bad fields: the replay must give them in the same order as the first answer.
    const file = `${HEADER}\nA,0612345678,S,P,\n,1,,P,\nC,0698765432,S,P,Rue\n`;

    it('the same file twice with a key: the same answer, Idempotent-Replayed, no new orders', async () => {
      const s = await shop();
      const key = crypto.randomUUID();
      const first = await importCsv(s, file, { 'Idempotency-Key': key }).expect(200);
      expect(first.headers['idempotent-replayed']).to.equal(undefined);
      expect(first.body).to.include({ imported: 2, skipped: 1 });
      const second = await importCsv(s, file, { 'Idempotency-Key': key }).expect(200);
      expect(second.headers['idempotent-replayed']).to.equal('true');
      expect(second.text).to.equal(first.text);
      expect(await countOrders(s.workspaceId)).to.equal(2);
      expect(await testKnex()('operations').where({ workspace_id: s.workspaceId })).to.have.length(2);
    });

    it('without a key the same file creates its orders twice', async () => {
      const s = await shop();
      const first = await importCsv(s, file).expect(200);
      const second = await importCsv(s, file).expect(200);
      expect(second.body.imported).to.equal(2);
      expect(second.body.order_ids).not.to.have.members(first.body.order_ids);
      expect(await countOrders(s.workspaceId)).to.equal(4);
    });

    it('the same key with another file: 422 IDEMPOTENCY_KEY_REUSED, nothing more written', async () => {
      const s = await shop();
      const key = crypto.randomUUID();
      await importCsv(s, file, { 'Idempotency-Key': key }).expect(200);
      const res = await importCsv(s, `${HEADER}\nOther,0612345678,S,P,\n`, { 'Idempotency-Key': key });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
      expect(await countOrders(s.workspaceId)).to.equal(2);
    });

    it('a key is per workspace: another shop with the same key imports its own orders', async () => {
      const [a, b] = [await shop(), await shop()];
      const key = crypto.randomUUID();
      await importCsv(a, file, { 'Idempotency-Key': key }).expect(200);
      const res = await importCsv(b, file, { 'Idempotency-Key': key }).expect(200);
      expect(res.headers['idempotent-replayed']).to.equal(undefined);
      expect(await countOrders(b.workspaceId)).to.equal(2);
    });
  });

  it('isolation: the orders land in the caller’s workspace only', async () => {
    const [a, b] = [await shop(), await shop()];
    const res = await importCsv(a, `${HEADER}\nA,0612345678,S,P,\nB,0612345678,S,P,\n`).expect(200);
    const owners = await testKnex()('orders').whereIn('id', res.body.order_ids).pluck('workspace_id');
    expect(owners).to.deep.equal([a.workspaceId, a.workspaceId]);
    expect(await countOrders(b.workspaceId)).to.equal(0);
    expect((await b.agent.get('/api/orders').expect(200)).body.orders).to.deep.equal([]);
    const ops = await testKnex()('operations').whereIn('order_id', res.body.order_ids).pluck('agent_id');
    expect(ops).to.deep.equal([a.handlerId, a.handlerId]);
  });

  it('401 without a session; 403 without a workspace', async () => {
    const res = await request(appUrl()).post('/api/orders/import').set('Content-Type', 'text/csv').send(`${HEADER}\nA,0612345678,S,P,\n`);
    expect(res.status).to.equal(401);
    expect(res.body.error).to.be.a('string');
    const lonely = await signUp({ workspace: null });
    const forbidden = await importCsv(lonely, `${HEADER}\nA,0612345678,S,P,\n`);
    expect(forbidden.status).to.equal(403);
  });

  it('any Content-Type (or none) is read as CSV', async () => {
    const s = await shop();
    for (const type of ['application/octet-stream', 'text/plain; charset=utf-8', 'application/json', 'application/vnd.ms-excel']) {
      // Sent as text: supertest would serialise a Buffer as JSON under a JSON type.
      const res = await s.agent.post('/api/orders/import').set('Content-Type', type).send(`${HEADER}\nA,0612345678,S,P,\n`);
      expect(res.status, `${type}: ${res.text}`).to.equal(200);
      expect(res.body.imported).to.equal(1);
    }
    expect(await countOrders(s.workspaceId)).to.equal(4);
  });

  describe('bad input: a clear 4xx or a per-line error, never a 5xx, never half a file', () => {
    it('a JSON document', async () => {
      const s = await shop();
      const res = await importCsv(s, JSON.stringify([{ clientName: 'A', phone: '0612345678', storeName: 'S', productsName: 'P' }]), {
        'Content-Type': 'application/json',
      });
      await expectRefused(s, res, 400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
    });

    it('prose', async () => {
      const s = await shop();
      const res = await importCsv(s, 'Dear team,\nplease find attached the orders of yesterday.\nBest regards, Amina\n');
      await expectRefused(s, res, 400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
    });

    it('random bytes', async () => {
      const s = await shop();
      // Seeded bytes that are not UTF-8 (0xff never appears in UTF-8).
      const bytes = Buffer.from(crypto.createHash('sha512').update('seed').digest().toString('hex').repeat(20), 'hex');
      bytes[10] = 0xff;
      const res = await importCsv(s, bytes, { 'Content-Type': 'application/octet-stream' });
      await expectRefused(s, res, 400);
      // Not UTF-8, so read as Windows-1252 (every byte is a character there): no header names our columns.
      expect(res.body.fields.phone).to.match(/No column for the phone/);
    });

    it('a PNG image', async () => {
      const s = await shop();
      const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]), Buffer.from('IHDR'), Buffer.alloc(64, 7)]);
      const res = await importCsv(s, png, { 'Content-Type': 'image/png' });
      await expectRefused(s, res, 400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
    });

    it('an empty body', async () => {
      const s = await shop();
      const res = await s.agent.post('/api/orders/import').set('Content-Type', 'text/csv');
      await expectRefused(s, res, 400);
      expect(res.body.fields.file).to.match(/empty/i);
      const blank = await importCsv(s, '\n\n  \n');
      await expectRefused(s, blank, 400);
    });

    it('a header only', async () => {
      const s = await shop();
      for (const file of [HEADER, `${HEADER}\n`, `${HEADER}\r\n\r\n,,,,\r\n`]) {
        const res = await importCsv(s, file);
        await expectRefused(s, res, 400);
        expect(res.body.fields.file, JSON.stringify(file)).to.match(/no orders/i);
      }
    });

    it('20,001 rows: 413, nothing written; 20,000 rows are accepted', async function () {
      this.timeout(120_000);
      const s = await shop();
      const rows = (n: number) => `${HEADER}\n${Array.from({ length: n }, (_, i) => `C${i},0612345678,S,P,`).join('\n')}\n`;
      const res = await importCsv(s, rows(20_001));
      await expectRefused(s, res, 413);
      expect(res.body.error).to.match(/20,000/);
      const ok = await importCsv(s, rows(20_000)).expect(200);
      expect(ok.body.imported).to.equal(20_000);
      expect(await countOrders(s.workspaceId)).to.equal(20_000);
      const [{ n }] = await testKnex()('operations').where({ workspace_id: s.workspaceId, status: 'pending' }).count({ n: '*' });
      expect(Number(n)).to.equal(20_000);
      // Across the batches too, the file's order is the orders' order (later rows newer), each row with its own fields.
      const stored = await ordersOf(s.workspaceId).select('id', 'client_name');
      expect(stored.map((r) => r.id)).to.deep.equal(ok.body.order_ids);
      expect(stored.map((r) => r.client_name)).to.deep.equal(Array.from({ length: 20_000 }, (_, i) => `C${i}`));
      await unqueue(s.workspaceId);
    });

    it('11 MB: 413, nothing written', async () => {
      const s = await shop();
      const row = `Client,0612345678,Store,${'P'.repeat(900)},\n`;
      const file = `${HEADER}\n${row.repeat(Math.ceil((11 * 1024 * 1024) / row.length))}`;
      expect(file.length).to.be.greaterThan(11 * 1024 * 1024 - 1000);
      const res = await importCsv(s, file);
      await expectRefused(s, res, 413);
    });

    it('a row with 200 columns: a per-line error, the other rows imported', async () => {
      const s = await shop();
      const wide = Array.from({ length: 200 }, (_, i) => `c${i}`).join(',');
      const res = await importCsv(s, `${HEADER}\nA,0612345678,S,P,\n${wide}\nB,0612345678,S,P,\n`).expect(200);
      expect(res.body).to.include({ imported: 2, skipped: 1 });
      expect(res.body.errors).to.have.length(1);
      expect(res.body.errors[0].line).to.equal(3);
      expect(Object.values(res.body.errors[0].fields).join(' ')).to.match(/200/);
      expect(await countOrders(s.workspaceId)).to.equal(2);
    });

    it('a field of 1 MB: a per-line error that does not echo it', async () => {
      const s = await shop();
      const huge = 'Z'.repeat(1024 * 1024);
      for (const [column, file] of [
        ['clientName', `${HEADER}\n${huge},0612345678,S,P,\nB,0612345678,S,P,\n`],
        ['phone', `${HEADER}\nA,${huge},S,P,\nB,0612345678,S,P,\n`],
        ['productsName', `${HEADER}\nA,0612345678,S,"${huge}",\nB,0612345678,S,P,\n`],
      ] as const) {
        const res = await importCsv(s, file).expect(200);
        expect(res.body, column).to.include({ imported: 1, skipped: 1 });
        expect(res.body.errors[0].line).to.equal(2);
        expect(Object.keys(res.body.errors[0].fields)).to.deep.equal([column]);
        expect(res.text.length, column).to.be.lessThan(2000);
        // The refused line shows the start of its cell (to recognise it), never the megabyte.
        expect(res.body.errors[0].values[column], column).to.equal(`${'Z'.repeat(60)}…`);
        expect(res.text).not.to.include('Z'.repeat(61));
      }
      expect(await countOrders(s.workspaceId)).to.equal(3);
    });

    it('mixed line endings (CRLF, LF, CR in one file): every row imported, line numbers right', async () => {
      const s = await shop();
      const file = `${HEADER}\r\nA,0612345678,S,P,\nB,0612345678,S,P,\rC,0612345678,S,P,\r\nD,1,S,P,\rE,0612345678,S,P,`;
      const res = await importCsv(s, file).expect(200);
      expect(res.body).to.include({ imported: 4, skipped: 1 });
      expect(res.body.errors.map((e: { line: number }) => e.line)).to.deep.equal([5]);
      const rows = await ordersOf(s.workspaceId);
      expect(rows.map((r) => [r.client_name, r.address])).to.deep.equal([
        ['A', null],
        ['B', null],
        ['C', null],
        ['E', null],
      ]);
    });

    it('not UTF-8 (a Latin-1 file): read as Windows-1252, the encoding named on the result', async () => {
      const s = await shop();
      const latin1 = Buffer.from(`${HEADER}\nHélène,0612345678,Boutique Éclat,Savon,\n`, 'latin1');
      const res = await importCsv(s, latin1).expect(200);
      expect(res.body).to.include({ imported: 1, encoding: 'windows-1252', format: 'csv' });
      const [row] = await testKnex()('orders').where({ workspace_id: s.workspaceId }).select('client_name', 'store_name');
      expect(row).to.deep.equal({ client_name: 'Hélène', store_name: 'Boutique Éclat' });
    });

    it('an unclosed quote: 400 naming the line where it opens', async () => {
      const s = await shop();
      for (const [line, file] of [
        [3, `${HEADER}\nA,0612345678,S,P,\n"B,0612345678,S,P,\nC,0612345678,S,P,\nD,0612345678,S,P,\n`],
        // After a closed multi-line field, empty lines and a quote inside unquoted text; in a later cell.
        [7, `${HEADER}\nA,0612345678,S,"two\nlines",\n\nSaid "hi",0612345678,S,P,\n\nC,0612345678,"S,P,\nD,0612345678,S,P,\n`],
        [1, `"${HEADER}\nA,0612345678,S,P,\n`],
      ] as const) {
        const res = await importCsv(s, file);
        await expectRefused(s, res, 400);
        expect(res.body.code).to.equal('VALIDATION_ERROR');
        expect(res.body.fields.file).to.match(new RegExp(`\\bline ${line}\\b`, 'i'));
        expect(res.body.fields.file).to.match(/quote/i);
      }
    });

    it('NUL bytes in the header: 400, nothing written (a NUL in a row skips that row: test/shared/untrusted-text.test.ts)', async () => {
      const s = await shop();
      for (const file of [`\u0000${HEADER}\nA,0612345678,S,P,\n`, `${HEADER.replace(',', '\u0000,')}\nA,0612345678,S,P,\n`]) {
        const res = await importCsv(s, file);
        await expectRefused(s, res, 400);
        expect(res.body.code).to.equal('VALIDATION_ERROR');
      }
    });

    it('two columns for one field: 400 naming the field', async () => {
      const s = await shop();
      const res = await importCsv(s, 'name,nom,phone,store,product\nA,B,0612345678,S,P\n');
      await expectRefused(s, res, 400);
      expect(Object.keys(res.body.fields)).to.deep.equal(['clientName']);
    });

    it('a bad Idempotency-Key: 400, nothing written', async () => {
      const s = await shop();
      const res = await importCsv(s, `${HEADER}\nA,0612345678,S,P,\n`, { 'Idempotency-Key': 'x'.repeat(300) });
      await expectRefused(s, res, 400);
    });
  });
});
