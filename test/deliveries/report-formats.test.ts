import { expect } from 'chai';
import { createApp } from '../../app';
import { loadConfig } from '../../config';
import { createLogger } from '../../logger';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, signUp, TEST_ENV } from '../helpers/app';
import { testKnex, testSessionPool } from '../helpers/db';
import { ORDER } from '../helpers/loop';
import { xlsx } from '../helpers/xlsx';

/**
 * A carrier's report (docs/delivery.md): CSV (UTF-8, Windows-1252; `,` `;` tab) and XLSX, rows
 * matched by tracking number, store reference or phone, status words in French, Arabic and
 * English, the shop's own words, unknown words and unmatched rows, and another workspace's orders.
 */

type Shop = SignedIn & { workspaceId: string };
const knex = () => testKnex();
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

async function shop(): Promise<Shop> {
  const user = await signUp();
  return { ...user, workspaceId: user.workspaceId! };
}

async function create(s: Shop, fields: object = {}): Promise<{ id: string }> {
  return (
    await s.agent
      .post('/api/orders')
      .send({ ...ORDER, ...fields })
      .expect(201)
  ).body;
}

async function shipped(s: Shop, fields: object, tracking: string): Promise<string> {
  const order = await create(s, { ...fields, status: 'confirmed' });
  await s.agent.put(`/api/orders/${order.id}/delivery`).send({ status: 'shipped', trackingNumber: tracking, at: '2026-11-01T10:00:00Z' }).expect(200);
  return order.id;
}

const deliveryOf = async (id: string) => (await knex()('orders').where({ id }).first()).delivery_status as string | null;

/** POST /api/deliveries/import as a multipart form. */
function upload(s: Shop, file: Buffer, name: string, carrier?: string) {
  const req = s.agent.post('/api/deliveries/import').attach('file', file, name);
  return carrier ? req.field('carrier', carrier) : req;
}

describe('POST /api/deliveries/import: encodings, separators and XLSX', () => {
  const cases: Array<[string, (csv: (sep: string) => string) => Buffer, string]> = [
    ['UTF-8, commas', (csv) => Buffer.from(csv(',')), 'r.csv'],
    ['UTF-8 with BOM, semicolons', (csv) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(csv(';'))]), 'r.csv'],
    ['Windows-1252, semicolons (French Excel)', (csv) => Buffer.from(csv(';'), 'latin1'), 'r.csv'],
    ['UTF-8, tabs', (csv) => Buffer.from(csv('\t')), 'r.txt'],
  ];
  for (const [label, file, name] of cases) {
    it(`${label}: the row's order gets the status its word names`, async () => {
      const s = await shop();
      const id = await shipped(s, { phone: '0611111111' }, 'OZ-1');
      const csv = (sep: string) => `N° de suivi${sep}Statut${sep}Transporteur\r\nOZ-1${sep}Livrée${sep}Ozon Express\r\n`;
      const res = await upload(s, file(csv), name).expect(200);
      expect(res.body).to.include({ updated: 1, unchanged: 0 });
      expect(res.body.unmatched).to.deep.equal([]);
      expect(res.body.unknown_words).to.deep.equal([]);
      const row = await knex()('orders').where({ id }).first();
      expect(row).to.include({ delivery_status: 'delivered', delivery_carrier_status: 'Livrée', delivery_carrier: 'Ozon Express' });
      const event = await knex()('delivery_events').where({ order_id: id, source: 'import' }).first();
      expect(event).to.include({ status: 'delivered', by: name, applied: true });
    });
  }

  it('XLSX, by multipart and as the raw body', async () => {
    const s = await shop();
    const id = await shipped(s, { phone: '0611111111' }, 'OZ-2');
    const file = xlsx([
      ['Code', 'État'],
      ['OZ-2', 'Retourné'],
    ]);
    expect((await upload(s, file, 'r.xlsx').expect(200)).body).to.include({ updated: 1, format: 'xlsx' });
    expect(await deliveryOf(id)).to.equal('returned');
    const again = xlsx([
      ['Code', 'État'],
      ['OZ-2', 'Livré'],
    ]);
    const raw = await s.agent.post('/api/deliveries/import').set('Content-Type', XLSX_TYPE).send(again).expect(200);
    expect(raw.body.updated).to.equal(1);
    expect(await deliveryOf(id)).to.equal('delivered');
  });

  it('400 for a file without a status column or a key column, an empty file, binary data; nothing written', async () => {
    const s = await shop();
    const id = await shipped(s, {}, 'OZ-3');
    const noStatus = await upload(s, Buffer.from('tracking,poids\nOZ-3,2kg\n'), 'r.csv').expect(400);
    expect(noStatus.body.fields).to.have.key('status');
    const noKey = await upload(s, Buffer.from('statut,poids\nLivré,2kg\n'), 'r.csv').expect(400);
    expect(noKey.body.fields).to.have.key('tracking');
    await upload(s, Buffer.from('tracking,statut\n'), 'r.csv').expect(400);
    await upload(s, Buffer.alloc(0), 'r.csv').expect(400);
    await upload(s, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 0x49, 0x48]), 'r.png').expect(400);
    expect(await deliveryOf(id)).to.equal('shipped');
  });
});

describe('matching a row to an order', () => {
  it('by tracking number, else the store reference (with or without #), else the phone', async () => {
    const s = await shop();
    const byTracking = await shipped(s, { phone: '0611111111' }, 'AMANA-77');
    const byRef = (await create(s, { phone: '0622222222', externalRef: '#1001', status: 'confirmed' })).id;
    const byPhone = (await create(s, { phone: '0633333333', status: 'confirmed' })).id;
    const csv = 'tracking;ref;téléphone;statut\nAMANA-77;;;Livré\n;1001;;Refusé\n;;06 33 33 33 33;Expédié\n';
    const res = await upload(s, Buffer.from(csv), 'r.csv').expect(200);
    expect(res.body).to.include({ updated: 3 });
    expect(await deliveryOf(byTracking)).to.equal('delivered');
    expect(await deliveryOf(byRef)).to.equal('refused');
    expect(await deliveryOf(byPhone)).to.equal('shipped');
  });

  it('the columns by their French and Arabic names; the carrier from a column, else from the form', async () => {
    const s = await shop();
    const fr = await shipped(s, { phone: '0611111111' }, 'FR-1');
    const frRef = (await create(s, { phone: '0622222222', externalRef: '#3003', status: 'confirmed' })).id;
    const csv = "code d'envoi;commande;état;société\nFR-1;;Livrée;Sendit\n;#3003;Refusé;\n";
    expect((await upload(s, Buffer.from(csv, 'latin1'), 'fr.csv', 'Amana').expect(200)).body).to.include({ updated: 2 });
    expect(await knex()('orders').where({ id: fr }).first()).to.include({ delivery_status: 'delivered', delivery_carrier: 'Sendit' });
    expect(await knex()('orders').where({ id: frRef }).first()).to.include({ delivery_status: 'refused', delivery_carrier: 'Amana' });
    const ar = await shipped(s, { phone: '0633333333' }, 'AR-1');
    const arPhone = (await create(s, { phone: '0644444444', status: 'confirmed' })).id;
    const file = xlsx([
      ['رقم التتبع', 'الهاتف', 'الحالة'],
      ['AR-1', '', 'تم التسليم'],
      ['', '0644444444', 'مرتجع'],
    ]);
    expect((await upload(s, file, 'ar.xlsx').expect(200)).body).to.include({ updated: 2 });
    expect(await deliveryOf(ar)).to.equal('delivered');
    expect(await deliveryOf(arPhone)).to.equal('returned');
    const referenced = (await create(s, { phone: '0655555555', externalRef: 'R-9', status: 'confirmed' })).id;
    await upload(s, Buffer.from('référence,statut\nR-9,Ramassé\n'), 'r.csv').expect(200);
    expect(await deliveryOf(referenced)).to.equal('shipped');
  });

  it('a tracking number in the file is kept on an order matched by reference', async () => {
    const s = await shop();
    const id = (await create(s, { externalRef: '#2002', status: 'confirmed' })).id;
    await upload(s, Buffer.from('ref,tracking,statut\n#2002,SD-2002,Ramassé\n'), 'r.csv').expect(200);
    expect(await knex()('orders').where({ id }).first()).to.include({ delivery_status: 'shipped', delivery_tracking_number: 'SD-2002' });
  });

  it('by phone: the order under way wins; two under way, or two confirmed without a delivery, are ambiguous; none is not found', async () => {
    const s = await shop();
    await create(s, { phone: '0644444444', status: 'confirmed' });
    const underWay = await shipped(s, { phone: '0644444444', productsName: 'Other' }, 'T-44');
    await create(s, { phone: '0655555555', status: 'confirmed', productsName: 'A' });
    await create(s, { phone: '0655555555', status: 'order-changed', productsName: 'B' });
    await create(s, { phone: '0666666666', status: 'pending' });
    const csv = 'tel,statut\n0644444444,Livré\n0655555555,Livré\n0666666666,Livré\n0677777777,Livré\n';
    const res = await upload(s, Buffer.from(csv), 'r.csv').expect(200);
    expect(res.body.updated).to.equal(1);
    expect(await deliveryOf(underWay)).to.equal('delivered');
    expect(res.body.unmatched.map((u: { line: number; reason: string }) => ({ line: u.line, reason: u.reason }))).to.deep.equal([
      { line: 3, reason: 'ambiguous' },
      { line: 4, reason: 'not_found' },
      { line: 5, reason: 'not_found' },
    ]);
  });

  it("another workspace's tracking number, reference and phone match nothing here", async () => {
    const other = await shop();
    const theirs = await shipped(other, { phone: '0688888888', externalRef: '#9' }, 'THEIRS-1');
    const s = await shop();
    const csv = 'tracking,ref,phone,statut\nTHEIRS-1,,,Livré\n,#9,,Livré\n,,0688888888,Livré\n';
    const res = await upload(s, Buffer.from(csv), 'r.csv').expect(200);
    expect(res.body).to.include({ updated: 0, unchanged: 0 });
    expect(res.body.unmatched.map((u: { reason: string }) => u.reason)).to.deep.equal(['not_found', 'not_found', 'not_found']);
    expect(await deliveryOf(theirs)).to.equal('shipped');
  });

  it('a row without any key is unmatched (no_key); an older row than the last applied changes nothing but is kept', async () => {
    const s = await shop();
    const id = await shipped(s, {}, 'OLD-1');
    const csv = 'tracking,statut,date\n,Livré,\nOLD-1,Livré,31/10/2026 09:00\n';
    const res = await upload(s, Buffer.from(csv), 'r.csv').expect(200);
    expect(res.body.unmatched).to.deep.equal([{ line: 2, reason: 'no_key', name: null, phone: null, reference: null, tracking: null, candidates: [] }]);
    expect(res.body).to.include({ updated: 0, unchanged: 0, late: 1 });
    expect(await deliveryOf(id)).to.equal('shipped');
    const events = await knex()('delivery_events').where({ order_id: id }).orderBy('at');
    expect(events.map((e) => [e.status, e.applied])).to.deep.equal([
      ['delivered', false],
      ['shipped', true],
    ]);
  });
});

describe('status words', () => {
  const words: Array<[string, string]> = [
    ['Livrée', 'delivered'],
    ['LIVRE', 'delivered'],
    ['Delivered', 'delivered'],
    ['تم التسليم', 'delivered'],
    ['Annulé par client', 'refused'],
    ['Annulé', 'refused'],
    ['En cours', 'in_transit'],
    ['رفض', 'refused'],
    ['Refused', 'refused'],
    ['Retour', 'returned'],
    ['مرتجع', 'returned'],
    ['Returned', 'returned'],
    ['Mise en distribution', 'out_for_delivery'],
    ['En cours de livraison', 'out_for_delivery'],
    ['Ramassé', 'shipped'],
    ['Shipped', 'shipped'],
    ['Arrivé au centre', 'in_transit'],
    ['Reçu', 'in_transit'],
    ['Livré', 'delivered'],
    ['Refusé', 'refused'],
    ['Retourné', 'returned'],
    ['Expédié', 'shipped'],
    ['En transit', 'in_transit'],
    ['  en TRANSIT ', 'in_transit'],
  ];
  it('French, Arabic and English words, case and accents aside', async () => {
    const s = await shop();
    const ids: string[] = [];
    for (let i = 0; i < words.length; i++) ids.push(await shipped(s, { phone: `06100000${String(i).padStart(2, '0')}` }, `W-${i}`));
    const csv = `tracking,statut\n${words.map(([word], i) => `W-${i},${word}`).join('\n')}\n`;
    const res = await upload(s, Buffer.from(csv), 'r.csv').expect(200);
    expect(res.body.unknown_words).to.deep.equal([]);
    for (let i = 0; i < words.length; i++) expect(await deliveryOf(ids[i]), words[i][0]).to.equal(words[i][1]);
  });

  it('an unknown word is reported by line and the rows understood still apply; a word added on /settings is read next time', async () => {
    const s = await shop();
    const a = await shipped(s, { phone: '0611111111' }, 'U-1');
    const b = await shipped(s, { phone: '0622222222' }, 'U-2');
    const csv = 'tracking,statut\nU-1,Livré\nU-2,Colis en souffrance\n';
    const res = await upload(s, Buffer.from(csv), 'r.csv').expect(200);
    expect(res.body.updated).to.equal(1);
    expect(res.body.unknown_words).to.deep.equal([{ line: 3, word: 'Colis en souffrance' }]);
    expect(await deliveryOf(a)).to.equal('delivered');
    expect(await deliveryOf(b)).to.equal('shipped');

    const settings = (await s.agent.get('/settings').expect(200)).text;
    expect(settings).to.include('action="/settings/carrier-words"');
    await s.agent
      .post('/settings/carrier-words')
      .type('form')
      .send({ _csrf: csrfFrom(settings), word: 'colis en SOUFFRANCE', status: 'refused' })
      .expect(303);
    const bad = await s.agent
      .post('/settings/carrier-words')
      .type('form')
      .send({ _csrf: csrfFrom(settings), word: '', status: 'nope' })
      .expect(400);
    expect(bad.text).to.include('f-word-error');
    const again = await upload(s, Buffer.from(csv), 'r.csv').expect(200);
    expect(again.body.unknown_words).to.deep.equal([]);
    expect(await deliveryOf(b)).to.equal('refused');
    // Another workspace does not know the word.
    const other = await shop();
    const theirs = await shipped(other, {}, 'U-2');
    expect((await upload(other, Buffer.from(csv), 'r.csv').expect(200)).body.unknown_words).to.have.length(1);
    expect(await deliveryOf(theirs)).to.equal('shipped');
    const removed = (await s.agent.get('/settings').expect(200)).text;
    await s.agent
      .post('/settings/carrier-words/delete')
      .type('form')
      .send({ _csrf: csrfFrom(removed), word: 'colis en SOUFFRANCE' })
      .expect(303);
    expect(await knex()('carrier_words').where({ workspace_id: s.workspaceId })).to.have.length(0);
  });
});

describe('the page /deliveries/import', () => {
  it('uploads a report and shows what changed, the unmatched rows and the unknown words, in French too', async () => {
    const s = await shop();
    await shipped(s, {}, 'P-1');
    const page = (await s.agent.get('/deliveries/import').expect(200)).text;
    const csv = 'tracking;statut\nP-1;Livré\nP-404;Livré\nP-1;Bizarre\n';
    const res = await s.agent
      .post('/deliveries/import')
      .set('Accept-Language', 'fr')
      .field('_csrf', csrfFrom(page))
      .field('carrier', 'Amana')
      .attach('file', Buffer.from(csv), 'amana.csv')
      .expect(200);
    expect(res.text).to.include('1 livraison mise à jour');
    expect(res.text).to.include('1 ligne sans commande');
    expect(res.text).to.include('Bizarre');
    expect(res.text).to.include('aucune de vos commandes ne l');
    const none = await s.agent.post('/deliveries/import').field('_csrf', csrfFrom(page)).expect(400);
    expect(none.text).to.include('file-error');
  });
});

describe('the order import takes the same multipart form', () => {
  it('POST /api/orders/import with a multipart `file` (CSV and XLSX)', async () => {
    const s = await shop();
    const csv = 'client_name,phone,store_name,products_name\nA,0611111111,S,P\n';
    expect((await s.agent.post('/api/orders/import').attach('file', Buffer.from(csv), 'o.csv').expect(200)).body.imported).to.equal(1);
    const file = xlsx([
      ['client_name', 'phone', 'store_name', 'products_name'],
      ['B', '0622222222', 'S', 'P'],
    ]);
    expect((await s.agent.post('/api/orders/import').attach('file', file, 'o.xlsx').expect(200)).body.imported).to.equal(1);
  });
});

describe('one transaction per batch of rows: a batch the database refuses', () => {
  // Rows are applied 1,000 at a time (docs/delivery.md): a report of 1,005 rows is two batches, lines
  // 2–1001 and 1002–1006. A trigger of this test's own database refuses the delivery of the order
  // R-1003 (line 1004, the third row of the second batch), as a fault of the database would.
  const ROWS = 1005;
  const ref = (i: number) => `R-${String(i).padStart(4, '0')}`;
  const report = Buffer.from(`référence;statut\n${Array.from({ length: ROWS }, (_, i) => `${ref(i + 1)};Livré\n`).join('')}`);
  let s: Shop;

  const refuse = async (workspaceId: string) => {
    await knex().raw(`CREATE FUNCTION test_refuse_one_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'test trigger: delivery of R-1003 refused'; END $$`);
    await knex().raw(`CREATE TRIGGER test_refuse_one_delivery BEFORE UPDATE OF delivery_status ON orders FOR EACH ROW
      WHEN (NEW.workspace_id = '${workspaceId}'::uuid AND NEW.external_ref = 'R-1003') EXECUTE FUNCTION test_refuse_one_delivery()`);
  };
  const allow = async () => {
    await knex().raw('DROP TRIGGER IF EXISTS test_refuse_one_delivery ON orders');
    await knex().raw('DROP FUNCTION IF EXISTS test_refuse_one_delivery()');
  };
  /** Each order's delivery status and number of history events, by reference. */
  const state = async () => {
    const rows = await knex()('orders as o')
      .where('o.workspace_id', s.workspaceId)
      .select('o.external_ref', 'o.delivery_status', knex().raw('(SELECT count(*)::int FROM delivery_events e WHERE e.order_id = o.id) AS events'));
    return new Map(rows.map((r: { external_ref: string; delivery_status: string | null; events: number }) => [r.external_ref, r]));
  };
  const refs = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ref(from + i));

  // An app of its own whose log is kept: the fault goes there, never to the client.
  const logLines: string[] = [];
  const faults = () => logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'unhandled error');

  before(async function () {
    this.timeout(60_000);
    const logger = createLogger('error', { destination: { write: (line: string) => void logLines.push(line) } });
    const logged = createApp({ config: loadConfig(TEST_ENV), knex: knex(), sessionPool: testSessionPool(), logger });
    const user = await signUp({ target: logged });
    s = { ...user, workspaceId: user.workspaceId! };
    const orders = `external_ref,client_name,phone,store_name,products_name\n${Array.from({ length: ROWS }, (_, i) => `${ref(i + 1)},C${i + 1},06${10_000_000 + i},S,P\n`).join('')}`;
    const imported = await s.agent.post('/api/orders/import').attach('file', Buffer.from(orders), 'orders.csv').expect(200);
    expect(imported.body.imported).to.equal(ROWS);
    await refuse(s.workspaceId);
  });
  after(allow);

  it('the batches before stay applied, the refused batch is applied not at all, and the answer is a clear JSON error', async () => {
    const res = await upload(s, report, 'big.csv').expect(500);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect(res.body).to.deep.equal({
      error:
        'The import stopped at the rows of lines 1002 to 1006: they and the rows after them are not applied; the rows before line 1002 are. Import the file again to apply the rest.',
      code: 'REPORT_INTERRUPTED',
      applied_through_line: 1001,
      failed_lines: { from: 1002, to: 1006 },
      updated: 1000,
      unchanged: 0,
    });
    // Neither the database's words nor a stack reach the client.
    expect(res.text).not.to.match(/test trigger|R-1003|\bat \w+ \(|\.js:\d+/);
    // The log has the fault itself, with its stack.
    expect(faults()).to.have.length(1);
    expect(faults()[0].err.message).to.include('test trigger: delivery of R-1003 refused');
    expect(faults()[0].err.stack).to.be.a('string');
    const after = await state();
    for (const r of refs(1, 1000)) expect(after.get(r), r).to.include({ delivery_status: 'delivered', events: 1 });
    // The whole second batch, the rows before the refused one as much as those after it.
    for (const r of refs(1001, 1005)) expect(after.get(r), r).to.include({ delivery_status: null, events: 0 });
  });

  it('the page says the same in the reader’s language; once the fault is gone, the file again applies the rest', async () => {
    const page = (await s.agent.get('/deliveries/import').expect(200)).text;
    const res = await s.agent
      .post('/deliveries/import')
      .set('Accept-Language', 'fr')
      .field('_csrf', csrfFrom(page))
      .attach('file', report, 'big.csv')
      .expect(500);
    expect(res.text).to.include('L’import s’est arrêté aux lignes 1002 à 1006');
    expect(res.text).not.to.match(/test trigger|\bat \w+ \(/);
    expect(faults()).to.have.length(2);
    const between = await state();
    // The first batch, read again, changed nothing: no second event in the history (issue 53, defect 5).
    for (const r of refs(1, 1000)) expect(between.get(r), r).to.include({ delivery_status: 'delivered', events: 1 });
    for (const r of refs(1001, 1005)) expect(between.get(r), r).to.include({ delivery_status: null, events: 0 });

    await allow();
    const again = await upload(s, report, 'big.csv').expect(200);
    expect(again.body).to.include({ updated: 5, unchanged: 1000 });
    const done = await state();
    for (const r of refs(1001, 1005)) expect(done.get(r), r).to.include({ delivery_status: 'delivered', events: 1 });
  });
});
