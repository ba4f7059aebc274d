import { readFileSync } from 'node:fs';
import http from 'node:http';
import { expect } from 'chai';
import fc from 'fast-check';
import type { SignedIn } from '../helpers/app';
import { TEST_ENV, csrfOf, signUp } from '../helpers/app';
import { seed, testDatabaseUrl, testKnex } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';
import { IMPORT_MAX_ROWS } from '../../services/orders';
import { deflatedBomb, xlsx } from '../helpers/xlsx';

/**
 * An import holds about one batch of rows at a time, stops reading at the row past
 * 20,000, and leaves the process free to answer others meanwhile, whatever shape its 10 MB have.
 * The server runs as a process of its own (`node dist/server.js`, as the Procfile's web): its RSS,
 * read from /proc while a request runs, is the web process's alone, whatever else this test process
 * holds or has run before. The bound is over the RSS before the request, or over the process's normal
 * memory when that is more: its RSS high-water mark once it has served a legitimate import of the
 * largest size (10 MB, 20,000 rows). Checking 20,000 rows leaves some tens of MB of garbage (the
 * validation's error objects), more on a loaded machine where the collector runs late; a process
 * that serves imports has that room already.
 */
const MB = 1024 * 1024;
const RSS_BOUND_MB = 100;
const MAX_FILE = 10 * MB;
const HEADER = 'client_name,phone,store_name,products_name';
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.IMPORT_FUZZ_RUNS ?? 15);

type Shop = SignedIn & { workspaceId: string };
/** A fuzzed file; `expected`: the names its orders must have; `orders`: the number of its rows that are not blank. */
type Case = { file: Buffer; expected?: string[]; orders?: number };

/** A case that fast-check shows by the few values it was made of, not by its megabytes. */
function made<T>(recipe: T, build: (recipe: T) => Case): Case {
  return Object.assign(build(recipe), { [fc.toStringMethod]: () => fc.stringify(recipe) });
}

async function shop(): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId! };
}

async function written(workspaceId: string): Promise<{ orders: number; operations: number }> {
  const count = async (table: string) => Number((await testKnex()(table).where({ workspace_id: workspaceId }).count<{ n: string }[]>({ n: '*' }))[0].n);
  return { orders: await count('orders'), operations: await count('operations') };
}

/** A file of 10 MB at most: `head`, then `line` as often as it fits, then `tail`. */
function fileOf(head: string, line: string, tail = ''): Buffer {
  const times = Math.floor((MAX_FILE - Buffer.byteLength(head) - Buffer.byteLength(tail)) / Buffer.byteLength(line));
  return Buffer.from(head + line.repeat(times) + tail);
}

interface Answer {
  status: number;
  type: string;
  text: string;
}

interface Watched {
  answer: Answer;
  /** The server's largest RSS during the request over its RSS before it, or over its normal memory when that is more. */
  rssGrowthMb: number;
  /** GET /healthz answered while the import was in flight, and of those after its body had been sent whole. */
  health: { during: number; afterSent: number };
}

let base = '';
let server: RunningServer;
let normalRss = 0;

/** A line of the server's /proc status (VmRSS: now; VmHWM: its high-water mark), in bytes. */
function serverMemory(line: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  const kb = new RegExp(`^${line}:\\s+(\\d+) kB$`, 'm').exec(status);
  if (!kb) throw new Error(`no ${line} in the server's /proc status`);
  return Number(kb[1]) * 1024;
}

function get(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

/**
 * POSTs a body with Node's own client (its 'finish' says the whole body has left), asks for
 * GET /healthz one request after another until the answer comes, and samples the server's RSS
 * throughout.
 */
async function watched(path: string, headers: Record<string, string>, body: Buffer): Promise<Watched> {
  const before = serverMemory('VmRSS');
  const highBefore = serverMemory('VmHWM');
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, serverMemory('VmRSS'))), 5);
  let sent = false;
  let answered = false;
  const health = { during: 0, afterSent: 0 };
  let probed: () => void = () => {};
  const firstProbe = new Promise<void>((resolve) => (probed = resolve));
  try {
    const answer = new Promise<Answer>((resolve, reject) => {
      const req = http.request(`${base}${path}`, { method: 'POST', headers: { ...headers, 'Content-Length': String(body.length) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.on('finish', () => (sent = true));
      // The last byte waits for a first /healthz answer: a file refused at once (a zip's declared
      // size) could otherwise be answered before any probe, on a busy machine.
      req.write(body.subarray(0, body.length - 1));
      void firstProbe.then(() => req.end(body.subarray(body.length - 1)), reject);
    }).finally(() => (answered = true));
    const probing = (async () => {
      while (!answered) {
        const wasSent = sent;
        expect(await get('/healthz'), 'GET /healthz during the import').to.equal(200);
        probed();
        if (answered) break;
        health.during += 1;
        if (wasSent) health.afterSent += 1;
      }
    })();
    const [result] = await Promise.all([answer, probing]);
    // A high-water mark raised during the request is its peak, even between two samples.
    const high = serverMemory('VmHWM');
    peak = Math.max(peak, serverMemory('VmRSS'), high > highBefore ? high : 0);
    return { answer: result, rssGrowthMb: (peak - Math.max(before, normalRss)) / MB, health };
  } finally {
    clearInterval(sampler);
  }
}

function apiImport(s: Shop, body: Buffer): Promise<Watched> {
  return watched('/api/orders/import', { Cookie: s.cookie, 'Content-Type': 'text/csv' }, body);
}

/** The upload page's form, as a browser posts it. */
async function pageImport(s: Shop, file: Buffer): Promise<Watched> {
  const csrf = await csrfOf(s.agent, '/orders/import');
  const boundary = `----bounds${Date.now()}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="orders.csv"\r\nContent-Type: text/csv\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return watched('/orders/import', { Cookie: s.cookie, 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body);
}

function expectBounded(w: Watched, what: string): void {
  expect(w.answer.status, `${what}: ${w.answer.text.slice(0, 300)}`).to.be.below(500);
  expect(w.rssGrowthMb, `${what}: RSS growth in MB`).to.be.below(RSS_BOUND_MB);
  expect(w.health.during, `${what}: GET /healthz answered while the import ran`).to.be.at.least(1);
}

describe('imports within bounded memory and time', function () {
  this.timeout(120_000);

  before(async () => {
    server = await startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() });
    base = `http://127.0.0.1:${server.port}`;
    // The normal: a legitimate file of the largest size, its 20,000 rows all checked (each with one
    // cell fewer than the header, and a bad phone: nothing to insert).
    const s = await shop();
    const legit = Buffer.from(`${HEADER},address\n${`,no phone,S,${'P'.repeat(480)}\n`.repeat(IMPORT_MAX_ROWS)}`);
    expect(legit.length).to.be.within(MAX_FILE - MB, MAX_FILE);
    const res = await watched('/api/orders/import', { Cookie: s.cookie, 'Content-Type': 'text/csv' }, legit);
    expect(res.answer.status, res.answer.text.slice(0, 300)).to.equal(200);
    expect(JSON.parse(res.answer.text).skipped).to.equal(IMPORT_MAX_ROWS);
    normalRss = serverMemory('VmHWM');
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
  });

  it("a carrier's report of 20,000 rows: every row matched and applied, RSS +100 MB at most, /healthz answered meanwhile; 20,001 rows: 413", async function () {
    this.timeout(600_000);
    const s = await shop();
    // 20,000 shipped parcels, written as a seed would (their deliveries are what the report changes).
    await seed(
      `INSERT INTO orders (workspace_id, client_name, phone, store_name, products_name, status, delivery_status, delivery_tracking_number, delivery_at)
       SELECT ?::uuid, 'C' || g, '+2126' || lpad(g::text, 8, '0'), 'S', 'P', 'confirmed', 'shipped', 'OZ' || g, now() - interval '1 day'
         FROM generate_series(1, ?) g`,
      [s.workspaceId, IMPORT_MAX_ROWS],
    );
    const report = Buffer.from(
      `N° de suivi;Statut;Transporteur\n${Array.from({ length: IMPORT_MAX_ROWS }, (_, i) => `OZ${i + 1};Livré;Ozon Express\n`).join('')}`,
    );
    const w = await watched('/api/deliveries/import', { Cookie: s.cookie, 'Content-Type': 'text/csv' }, report);
    expectBounded(w, 'a report of 20,000 rows');
    expect(w.answer.status, w.answer.text.slice(0, 300)).to.equal(200);
    expect(JSON.parse(w.answer.text)).to.include({ updated: IMPORT_MAX_ROWS, unchanged: 0 });
    const delivered = await testKnex()('orders').where({ workspace_id: s.workspaceId, delivery_status: 'delivered' }).count<{ n: string }[]>({ n: '*' });
    expect(Number(delivered[0].n)).to.equal(IMPORT_MAX_ROWS);
    const over = await watched(
      '/api/deliveries/import',
      { Cookie: s.cookie, 'Content-Type': 'text/csv' },
      Buffer.concat([report, Buffer.from('OZ1;Refusé;X\n')]),
    );
    expectBounded(over, 'a report of 20,001 rows');
    expect(over.answer.status).to.equal(413);
    // Refused before any batch was applied: the first row's parcel is still delivered, not refused.
    expect((await testKnex()('orders').where({ workspace_id: s.workspaceId, delivery_tracking_number: 'OZ1' }).first()).delivery_status).to.equal('delivered');
  });

  it('10 MB of one-character lines (five million rows): 413 TOO_MANY_ROWS, nothing written, RSS +100 MB at most, /healthz answered meanwhile', async () => {
    const s = await shop();
    const file = fileOf(`${HEADER}\n`, 'a\n');
    expect(file.length).to.be.within(MAX_FILE - 2, MAX_FILE);
    const w = await apiImport(s, file);
    expectBounded(w, 'one-character lines');
    expect(w.answer.status).to.equal(413);
    expect(w.answer.type).to.match(/application\/json/);
    const body = JSON.parse(w.answer.text);
    expect(body).to.include({ code: 'TOO_MANY_ROWS' });
    expect(body.error).to.match(/At most 20,000 orders per file/);
    expect(await written(s.workspaceId)).to.deep.equal({ orders: 0, operations: 0 });
  });

  it('the same file on the upload page: the form again with the message, 413, nothing written, within the same bounds', async () => {
    const s = await shop();
    const w = await pageImport(s, fileOf(`${HEADER}\n`, 'a\n'));
    expectBounded(w, 'page, one-character lines');
    expect(w.answer.status).to.equal(413);
    expect(w.answer.type).to.match(/text\/html/);
    expect(w.answer.text).to.contain('At most 20,000 orders per file').and.contain('enctype="multipart/form-data"');
    expect(await written(s.workspaceId)).to.deep.equal({ orders: 0, operations: 0 });
  });

  describe('other 10 MB shapes: a clear answer, nothing written, within the same bounds', () => {
    /** Each file: its shape, the file, the status and a part of the message it is answered. */
    const shapes: Array<[string, Array<[string, () => Buffer, number, RegExp]>]> = [
      // Blank rows are not orders: they are skipped, but each costs some work to read.
      ['whitespace-only lines', [['whitespace-only lines', () => fileOf(`${HEADER}\n`, ' \t \n'), 413, /over 40,000 of its lines are blank/]]],
      [
        'lines of fewer separators than the header',
        [['lines of fewer separators', () => fileOf(`${HEADER}\n`, ',\n'), 413, /over 40,000 of its lines are blank/]],
      ],
      [
        'one line or one cell of 10 MB',
        [
          ['one line of commas', () => fileOf(`${HEADER}\nA,0612345678,S,P`, ','), 413, /more than 200 cells/],
          ['one quoted cell of 10 MB', () => fileOf(`${HEADER}\nA,0612345678,S,"`, 'x\n', '"\n'), 200, /at most 1000 characters/],
          ['no line break at all', () => fileOf('', 'x'), 400, /No column for the phone/],
        ],
      ],
    ];
    for (const [title, files] of shapes) {
      it(title, async () => {
        const s = await shop();
        for (const [what, file, status, message] of files) {
          const w = await apiImport(s, file());
          expectBounded(w, what);
          expect(w.answer.status, `${what}: ${w.answer.text.slice(0, 300)}`).to.equal(status);
          expect(w.answer.text, what).to.match(message);
          // Nothing of the cell is echoed back.
          expect(w.answer.text.length, what).to.be.below(5000);
          if (status === 413) expect(JSON.parse(w.answer.text).code, what).to.equal(what === 'one line of commas' ? 'TOO_MANY_CELLS' : 'TOO_MANY_ROWS');
          // The longest to read: /healthz is answered while it is, not only while the body comes in.
          if (what === 'whitespace-only lines') expect(w.health.afterSent, 'GET /healthz answered after the body was sent').to.be.at.least(1);
        }
        expect(await written(s.workspaceId)).to.deep.equal({ orders: 0, operations: 0 });
      });
    }
  });

  describe('XLSX within the same bounds: a zip bomb and a sheet of a million empty rows', () => {
    const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    const XLSX_HEADER = `<row r="1">${['name', 'phone', 'store', 'products'].map((n) => `<c t="inlineStr"><is><t>${n}</t></is></c>`).join('')}</row>`;
    const cases: Array<[string, () => Promise<Buffer>, number, string, RegExp]> = [
      [
        'a sheet declaring 256 MB unpacked',
        async () => xlsx([], { packedSheet: await deflatedBomb(256 * MB) }),
        413,
        'PAYLOAD_TOO_LARGE',
        /too large once unpacked/,
      ],
      [
        'a sheet declaring 1 MB that inflates to 256 MB',
        async () => xlsx([], { packedSheet: await deflatedBomb(256 * MB), declaredSize: MB }),
        413,
        'PAYLOAD_TOO_LARGE',
        /too large once unpacked/,
      ],
      [
        'one cell of 50 MB',
        async () =>
          xlsx([], {
            sheetXml: Buffer.from(`<worksheet><sheetData><row r="1"><c t="inlineStr"><is><t>${'x'.repeat(50 * MB)}</t></is></c></row></sheetData></worksheet>`),
          }),
        413,
        'PAYLOAD_TOO_LARGE',
        /too large once unpacked/,
      ],
      [
        'a million empty rows after the header',
        async () => {
          const empty = Array.from({ length: 1_000_000 }, (_, i) => `<row r="${i + 2}"/>`).join('');
          return xlsx([], { sheetXml: Buffer.from(`<worksheet><sheetData>${XLSX_HEADER}${empty}</sheetData></worksheet>`) });
        },
        413,
        'TOO_MANY_ROWS',
        /over 40,000 of its lines are blank/,
      ],
    ];
    for (const [what, make, status, code, message] of cases) {
      it(`${what}: ${status} ${code}, nothing written, RSS +100 MB at most, /healthz answered meanwhile`, async () => {
        const s = await shop();
        const file = await make();
        expect(file.length, 'the file is small').to.be.below(MAX_FILE);
        for (const w of [await watched('/api/orders/import', { Cookie: s.cookie, 'Content-Type': XLSX_TYPE }, file), await pageImport(s, file)]) {
          expectBounded(w, what);
          expect(w.answer.status, `${what}: ${w.answer.text.slice(0, 300)}`).to.equal(status);
          if (w.answer.type.includes('json')) expect(JSON.parse(w.answer.text)).to.include({ code });
          expect(w.answer.text, what).to.match(message);
        }
        expect(await written(s.workspaceId)).to.deep.equal({ orders: 0, operations: 0 });
      });
    }
  });

  it('exactly 20,000 rows (blank lines between them not counted) are accepted; the 20,001st refuses the file at once, before the rest is read', async () => {
    const s = await shop();
    // Every thousandth row is a valid order; the others are skipped for their phone (cheap to check).
    const rows = (n: number) =>
      Array.from({ length: n }, (_, i) => `${i % 1000 === 0 ? `C${i},0612345678` : `C${i},1`},S,P${i % 97 === 0 ? '\n\n  \n,,,' : ''}`).join('\n');
    const ok = await s.agent
      .post('/api/orders/import')
      .type('text/csv')
      .send(`${HEADER}\n${rows(20_000)}\n`);
    expect(ok.status, ok.text.slice(0, 300)).to.equal(200);
    expect(ok.body).to.include({ imported: 20, skipped: 19_980 });
    // Line numbers count the blank lines: row i is on line 2 + i + 3 × (the blank runs before it).
    const last = ok.body.errors[ok.body.errors.length - 1];
    expect(last.line).to.equal(2 + 19_999 + 3 * Math.ceil(19_999 / 97));
    expect(await written(s.workspaceId)).to.deep.equal({ orders: 20, operations: 20 });
    // Row 20,001 refuses the file: the parser reads no further than a few slices past it, and never
    // reaches the unclosed quote 100,000 rows later (read, it would be a 400).
    const over = await s.agent
      .post('/api/orders/import')
      .type('text/csv')
      .send(`${HEADER}\n${rows(120_001)}\n"never closed,0612345678,S,P\nD,0612345678,S,P\n`);
    expect(over.status, over.text.slice(0, 300)).to.equal(413);
    expect(over.body.code).to.equal('TOO_MANY_ROWS');
    expect(over.body.error).to.match(/At most 20,000 orders per file/);
    expect(await written(s.workspaceId)).to.deep.equal({ orders: 20, operations: 20 });
  });

  describe('fuzz (seeded): imports never answer 5xx, write all or nothing, and stay within the memory bound', () => {
    const cell = fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
      {
        weight: 4,
        arbitrary: fc.constantFrom(
          '0612345678',
          '+212 6 98 76 54 32',
          '٠٦١٢٣٤٥٦٧٨',
          '12',
          'Atlas',
          'pending',
          'shipped',
          '',
          ' ',
          '"',
          '""',
          '"a,b"',
          '"x\ny"',
          '"open',
          ';',
          ',',
          '\t',
          '😀',
          'ﷺ',
        ),
      },
      { weight: 1, arbitrary: fc.integer({ min: 201, max: 3000 }).map((n) => 'L'.repeat(n)) },
    );
    const header = fc.oneof(
      fc.constantFrom(HEADER, 'nom;telephone;boutique;produit;adresse', 'name,phone,store,products,status', 'الاسم,الهاتف,المتجر,المنتج'),
      fc
        .array(fc.oneof(fc.constantFrom('name', 'phone', 'store', 'products', 'status', 'id', ''), fc.string({ maxLength: 8 })), { maxLength: 8 })
        .map((names) => names.join(',')),
    );
    /** In one case out of five. */
    const sometimes = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
    /** Lines that make a file of up to 10 MB: blank or not, as wide as the header or not. */
    const tailLine = fc.constantFrom(' \n', 'a\n', ',\n', '"",""\n', ';;\n', 'x,y,z,w\n', ',,,\n');
    /**
     * Any shape: random header, cells, separators, line endings, BOM, blank lines, bytes that may
     * not be UTF-8, and in some files a tail of one line repeated up to 10 MB.
     */
    const messy = fc
      .record({
        header,
        templates: fc.array(fc.array(cell, { maxLength: 8 }), { minLength: 1, maxLength: 6 }),
        sep: fc.constantFrom(',', ';'),
        eol: fc.constantFrom('\n', '\r\n', '\r'),
        bom: fc.boolean(),
        rows: fc.integer({ min: 0, max: 2000 }),
        blankEvery: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
        tail: sometimes(fc.tuple(tailLine, fc.integer({ min: 1, max: MAX_FILE }))),
        bytes: sometimes(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 32 }), fc.double({ min: 0, max: 1, noNaN: true }))),
      })
      .map((recipe) =>
        made(recipe, ({ header: names, templates, sep, eol, bom, rows, blankEvery, tail, bytes }) => {
          const lines = [names.replace(/,/g, sep)];
          for (let i = 0; i < rows; i += 1) {
            lines.push(templates[i % templates.length].join(sep));
            if (blankEvery && i % blankEvery === 0) lines.push(['', '   ', sep.repeat(3)][i % 3]);
          }
          const head = (bom ? '\ufeff' : '') + lines.join(eol);
          const room = MAX_FILE - Buffer.byteLength(head) - 1;
          const text = Buffer.from(head + (tail && room > 0 ? eol + tail[0].repeat(Math.floor(Math.min(tail[1], room) / tail[0].length)) : ''), 'utf8');
          if (!bytes) return { file: text };
          const at = Math.floor(bytes[1] * text.length);
          return { file: Buffer.concat([text.subarray(0, at), Buffer.from(bytes[0]), text.subarray(at)]) };
        }),
      );
    /**
     * Every row an order: names of any script, quoted, with the separator, quotes and line breaks in
     * them, in files long enough to cross the parser's slices; read back exactly.
     */
    const name = fc
      .string({ unit: fc.constantFrom('a', 'Z', 'é', 'ع', 'ﷺ', '😀', '👩‍👩‍👧', ' ', ',', ';', '"', '\n'), minLength: 1, maxLength: 20 })
      .map((n) => `N${n}N`);
    const clean = fc
      .record({ names: fc.array(name, { minLength: 1, maxLength: 30 }), rows: fc.integer({ min: 1, max: 1200 }), sep: fc.constantFrom(',', ';') })
      .map((recipe) =>
        made(recipe, ({ names, rows, sep }) => {
          const expected = Array.from({ length: rows }, (_, i) => names[i % names.length]);
          const lines = expected.map((n) => [`"${n.replace(/"/g, '""')}"`, '0612345678', 'S', 'P'].join(sep));
          return { file: Buffer.from([HEADER.replace(/,/g, sep), ...lines].join('\r\n')), expected };
        }),
      );
    /**
     * Right at the limit: rows of random cells and more cells than the header (a per-line error
     * found without the order's checks: nothing to insert, quick), blank lines between them, then up
     * to 10 MB of more. Up to 20,000 rows, a tail of blank lines, every row answered; over 20,000
     * rows, a tail of anything (an unclosed quote too, at least 1 MB away), never read: refused.
     */
    const plainCell = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 10 }).map((c) => c.replace(/["\r\n,]/g, '')),
      fc.constantFrom('', ' ', 'A'),
    );
    const nearLimit = (side: 'under' | 'over') =>
      fc
        .record({
          templates: fc.array(fc.array(plainCell, { maxLength: 5 }), { minLength: 1, maxLength: 5 }),
          orders: side === 'under' ? fc.integer({ min: 19_995, max: 20_000 }) : fc.integer({ min: 20_001, max: 20_010 }),
          blankEvery: fc.integer({ min: 1, max: 500 }),
          eol: fc.constantFrom('\n', '\r\n'),
          tail:
            side === 'under'
              ? fc.tuple(fc.constant(',,,\n'), fc.integer({ min: 0, max: MAX_FILE }))
              : fc.tuple(fc.constantFrom('a\n', ' \n', '"never closed\n', 'x,y,z,w\n'), fc.integer({ min: MB, max: MAX_FILE })),
        })
        .map((recipe) =>
          made(recipe, ({ templates, orders, blankEvery, eol, tail: [line, size] }) => {
            const lines = [HEADER];
            for (let i = 0; i < orders; i += 1) {
              const [first = '', ...rest] = templates[i % templates.length];
              lines.push([first, ...rest, '', '', '', 'extra'].join(','));
              if (i % blankEvery === 0) lines.push(['', '  ', ',,,', ' , '][i % 4]);
            }
            const text = lines.join(eol) + eol;
            const room = MAX_FILE - Buffer.byteLength(text);
            return { file: Buffer.from(text + line.repeat(Math.floor(Math.min(size, room) / line.length))), orders };
          }),
        );

    /** One import: never a 5xx nor over the bound; a refusal writes nothing; an answer counts what it wrote. */
    async function check(s: Shop, { file, expected, orders }: Case, seen: Record<'imported' | 'tooMany' | 'refused', number>): Promise<void> {
      const before = await written(s.workspaceId);
      const w = await apiImport(s, file);
      const what = `${file.length} bytes: ${JSON.stringify(file.subarray(0, 100).toString('utf8'))}`;
      expect(w.answer.status, `${what}: ${w.answer.text.slice(0, 300)}`).to.be.below(500);
      expect(w.rssGrowthMb, `${what}: RSS growth in MB`).to.be.below(RSS_BOUND_MB);
      const body = JSON.parse(w.answer.text);
      const after = await written(s.workspaceId);
      if (w.answer.status !== 200) {
        expect(body.error, what).to.be.a('string').and.not.equal('');
        expect(after, `${what}: a refused file writes nothing`).to.deep.equal(before);
        if (w.answer.status === 413) expect(body.code, what).to.be.oneOf(['TOO_MANY_ROWS', 'PAYLOAD_TOO_LARGE']);
        if (body.code === 'TOO_MANY_ROWS') seen.tooMany += 1;
        else seen.refused += 1;
        expect(expected, `${what}: a clean file is imported`).to.equal(undefined);
        if (orders !== undefined)
          expect({ orders: orders > 20_000, status: w.answer.status, code: body.code }, what).to.deep.equal({
            orders: true,
            status: 413,
            code: 'TOO_MANY_ROWS',
          });
        return;
      }
      seen.imported += body.imported;
      expect(after.orders - before.orders, what).to.equal(body.imported);
      expect(after.operations - before.operations, what).to.equal(body.imported);
      expect(body.errors, what).to.have.length(body.skipped);
      expect(body.imported + body.skipped, what).to.be.at.most(20_000);
      if (orders !== undefined) expect({ imported: body.imported, skipped: body.skipped }, what).to.deep.equal({ imported: 0, skipped: orders });
      if (expected) {
        expect(body.skipped, `${what}: ${JSON.stringify(body.errors.slice(0, 3))}`).to.equal(0);
        const stored = new Map((await testKnex()('orders').whereIn('id', body.order_ids).select('id', 'client_name')).map((o) => [o.id, o.client_name]));
        expect(
          body.order_ids.map((id: string) => stored.get(id)),
          what,
        ).to.deep.equal(expected);
      }
    }

    it('random shapes and sizes up to a few thousand rows', async () => {
      const s = await shop();
      const seen = { imported: 0, tooMany: 0, refused: 0 };
      await fc.assert(
        fc.asyncProperty(fc.oneof({ weight: 3, arbitrary: messy }, { weight: 1, arbitrary: clean }), (c) => check(s, c, seen)),
        { seed: SEED, numRuns: RUNS },
      );
      // The generators reach both outcomes: orders imported, files refused.
      expect(seen.imported, JSON.stringify(seen)).to.be.greaterThan(0);
      expect(seen.refused, JSON.stringify(seen)).to.be.greaterThan(0);
    });

    it('right at the limit: 19,995 to 20,000 rows answered, 20,001 to 20,010 refused', async () => {
      const s = await shop();
      const seen = { imported: 0, tooMany: 0, refused: 0 };
      await fc.assert(
        fc.asyncProperty(nearLimit('under'), nearLimit('over'), async (under, over) => {
          await check(s, under, seen);
          await check(s, over, seen);
        }),
        { seed: SEED, numRuns: 1 },
      );
      expect(seen, 'the file over 20,000 rows refused').to.include({ tooMany: 1, refused: 0 });
    });
  });
});
