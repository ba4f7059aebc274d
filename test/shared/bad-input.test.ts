import crypto from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import request from 'supertest';
import type { SignedIn } from '../helpers/app';
import { listening, signUp, TEST_ENV, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createKey, randomIp } from '../helpers/keys';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import { createServices } from '../../services';

/**
 * Property-based bad input: a few hundred seeded cases per route group. Every answer is a 2xx/3xx,
 * or a 4xx with a JSON `error` (/api, /data) or a page — never a 5xx, never a stack trace — and
 * afterwards no prototype is polluted and the database invariants hold.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 250);
const LEAK = /\bat [\w.<>]+ \(|node_modules|\.js:\d+:\d+|SELECT |INSERT |UPDATE |syntax error|TypeError|ReferenceError/;
const fuzzStats = { cases: 0 };

const ORDER_KEYS = [
  'clientName',
  'client_name',
  'phone',
  'storeName',
  'store_name',
  'productsName',
  'products_name',
  'address',
  'status',
  'id',
  'workspace_id',
  'operation_id',
  'created_at',
];
const nasty = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\r\n',
    'a\r\nSet-Cookie: x=1',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'a\udfffb',
    '\udc00\ud800',
    '\uFEFF',
    '\u202Eevil',
    'ﷺ',
    '٠٦١٢٣٤٥٦٧٨',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '../../etc/passwd',
    '%00',
    '{{7*7}}',
    '<%= 7*7 %>',
    'x'.repeat(5000),
  ),
  fc.string({ maxLength: 3 }).map((s) => s + 'x'.repeat(2000)),
);
/** A value wrapped in `depth` objects and arrays: text Postgres refuses may hide at any depth. */
const nestedIn = (depth: number, inner: unknown): unknown => {
  let value = inner;
  for (let i = 0; i < depth; i += 1) value = i % 2 === 0 ? { a: value } : [value];
  return value;
};
const anyValue = fc.oneof(
  nasty,
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.tuple(fc.integer({ min: 1, max: 80 }), nasty).map(([depth, text]) => nestedIn(depth, text)),
);
const deep = fc.oneof(
  fc.integer({ min: 50, max: 3000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 50, max: 3000 }).map((n) => `${'{"a":'.repeat(n)}"\\u0000"${'}'.repeat(n)}`),
);
/** NUL or an unpaired surrogate, as JSON escapes, somewhere in an order body. */
const unsafeEscapes = fc
  .tuple(fc.integer({ min: 0, max: 40 }), fc.constantFrom('\\u0000', '\\ud800', '\\udfff', 'x\\u0000y'), fc.constantFrom('clientName', 'phone', 'extra'))
  .map(
    ([depth, escaped, key]) =>
      `{"clientName":"A","phone":"0612345678","storeName":"S","productsName":"P","${key}":${'{"a":'.repeat(depth)}"${escaped}"${'}'.repeat(depth)}}`,
  );
const pollution = fc.constantFrom(
  '{"__proto__":{"polluted":"yes"},"clientName":"a"}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"clientName":{"__proto__":{"polluted":"yes"}}}',
  '{"name":"x","__proto__":{"isAdmin":true,"polluted":"yes"}}',
);
/** A raw body: JSON text of any shape, pollution attempts, deep nesting, or bytes that are not UTF-8. */
const rawBody = fc.oneof(
  fc
    .dictionary(fc.constantFrom(...ORDER_KEYS, 'name', 'orderHandler', 'expiresInDays', '__proto__', 'constructor'), anyValue, { maxKeys: 8 })
    .map((o) => JSON.stringify(o)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  pollution,
  deep,
  unsafeEscapes,
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, ...bytes])),
  fc.string({ maxLength: 50 }),
);
const pathId = fc.oneof(
  fc.uuid(),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
  fc.constantFrom('%', '%zz', '..', '%2e%2e%2f', 'null', 'undefined', '0', '-1', '1e309', "1'--", '%00', 'a'.repeat(300)),
);
const queryString = fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 4 }).map((q) => new URLSearchParams(q).toString());

/** A query value: dates (real, impossible, with odd offsets), numbers, statuses, cursors, and text meant to break SQL or parsers. */
const queryValue = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '%',
    '_',
    '\\',
    '%_\\',
    "'",
    '"',
    "' OR 1=1 --",
    '\u0000',
    '\uFEFF',
    'ﷺ',
    '٠٦١٢',
    'null',
    'undefined',
    'true',
    '[]',
    '{}',
    '0',
    '-1',
    '1',
    '500',
    '501',
    '1.5',
    '1e3',
    '1e309',
    '99999999999999999999999',
    '0x10',
    ' 5',
    '５',
    'pending',
    'confirmed,pending',
    ',',
    'confirmed,,',
    'CONFIRMED',
    'no-answer',
    '__proto__',
    'constructor',
    '2026-07-01',
    '2026-02-30',
    '2026-07-01T12:00',
    '2026-07-01T24:00',
    '2026-07-01T12:00:00Z',
    '2026-07-01T12:00:00.1234567Z',
    '2026-07-01T12:00:00+99:99',
    '2026-07-01T12:00:00-16:00',
    '2026-07-01T12:00:00+14:00',
    '0000-01-01',
    '1969-12-31',
    '9999-12-31',
    '10000-01-01',
    '2026-7-1',
    'WyIyMDI2LTAxLTAxVDAwOjAwOjAwLjAwMDAwMFoiLCJ4Il0',
    'eyJhIjoxfQ',
    'x'.repeat(201),
    'x'.repeat(2000),
    '0612345678',
    '+212 6 12',
  ),
);
const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
/** Date-times of every shape the filters accept, with components and offsets that may not exist. */
const dateLike = fc
  .tuple(
    fc.integer({ min: 0, max: 10_001 }),
    two(13),
    two(32),
    fc.option(fc.tuple(two(25), two(61), fc.option(two(61))), { nil: undefined }),
    fc.constantFrom('', 'Z', '+', '-', '+:', '-:'),
    two(99),
    two(99),
  )
  .map(([y, mo, d, time, zone, oh, om]) => {
    const date = `${String(y).padStart(4, '0')}-${mo}-${d}`;
    if (!time) return date;
    const offset = zone.length === 0 || zone === 'Z' ? zone : `${zone[0]}${oh}${zone.length > 1 ? ':' : ''}${om}`;
    return `${date}T${time[0]}:${time[1]}${time[2] === undefined ? '' : `:${time[2]}`}${offset}`;
  });

/** encodeURIComponent, with a lone surrogate sent as U+FFFD (as a browser would) instead of throwing. */
const encode = (text: string) => encodeURIComponent(text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
const LISTING_KEYS = ['limit', 'cursor', 'status', 'q', 'from', 'to'];
/** Up to 6 parameters (keys may repeat, making arrays), each encoded, raw, or with a malformed %-escape; under Node's 16 kB header limit. */
const listingQuery = fc
  .array(
    fc.tuple(
      fc.oneof(
        { arbitrary: fc.constantFrom(...LISTING_KEYS), weight: 4 },
        fc.constantFrom('limit[]', 'status[0]', 'q[a]', '__proto__', 'from.x', ''),
        fc.string({ maxLength: 8 }),
      ),
      fc.oneof({ arbitrary: queryValue, weight: 3 }, dateLike),
      fc.constantFrom('encoded', 'encoded', 'raw', 'malformed'),
    ),
    { maxLength: 6 },
  )
  .map((pairs) =>
    pairs
      .map(([key, value, style]) => {
        const k = encode(key);
        if (style === 'encoded') return `${k}=${encode(value)}`;
        // Raw: only what can go in a request line unescaped (the HTTP client refuses the rest).
        if (style === 'raw') return `${k}=${value.replace(/[^\x21-\x7e]/g, '').replace(/[#&]/g, '')}`;
        return `${k}=${encode(value.slice(0, 10))}%${value.length % 2 ? 'zz' : 'E'}`;
      })
      .join('&'),
  );

function checkJson(res: request.Response, label: string): void {
  fuzzStats.cases += 1;
  expect(res.status, `${label} → ${res.status} ${res.text.slice(0, 200)}`).to.be.lessThan(500);
  expect(res.text, label).not.to.match(LEAK);
  if (res.status >= 400) {
    expect(res.headers['content-type'], label).to.match(/application\/json/);
    expect(res.body.error, label).to.be.a('string');
  }
}

function checkPage(res: request.Response, label: string): void {
  fuzzStats.cases += 1;
  expect(res.status, `${label} → ${res.status}`).to.be.lessThan(500);
  expect(res.text, label).not.to.match(LEAK);
}

async function invariantsHold(workspaceIds: string[]): Promise<void> {
  expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  expect((Object.prototype as Record<string, unknown>).isAdmin).to.equal(undefined);
  const orphans = await testKnex()('orders as o')
    .leftJoin('operations as op', 'op.order_id', 'o.id')
    .whereIn('o.workspace_id', workspaceIds)
    .groupBy('o.id')
    .havingRaw('count(op.id) < 1')
    .select('o.id');
  expect(orphans, 'every order has an operation').to.deep.equal([]);
  const twoOpen = await testKnex()('operations')
    .whereIn('workspace_id', workspaceIds)
    .whereIn('status', ['pending', 'in_progress'])
    .groupBy('order_id')
    .havingRaw('count(*) > 1')
    .select('order_id');
  expect(twoOpen, 'at most one open operation per order').to.deep.equal([]);
  const settings = await testKnex()('call_settings')
    .whereIn('workspace_id', workspaceIds)
    .whereRaw('NOT (max_attempts BETWEEN 1 AND 10 AND hours_start < hours_end)');
  expect(settings).to.deep.equal([]);
  const handlers = await testKnex()('agents')
    .whereIn('workspace_id', workspaceIds)
    .where({ is_order_handler: true })
    .groupBy('workspace_id')
    .havingRaw('count(*) > 1')
    .select('workspace_id');
  expect(handlers).to.deep.equal([]);
  const bad = await testKnex()('orders').whereIn('workspace_id', workspaceIds).whereRaw("phone !~ '^\\+212[0-9]{9}$' OR btrim(client_name) = ''").select('id');
  expect(bad).to.deep.equal([]);
}

describe('bad input (property-based, seeded)', function () {
  this.timeout(180_000);
  let target: string;
  let shop: SignedIn;
  let orderId: string;
  let agentId: string;
  let keyId: string;
  let token: string;
  let callId: string;
  let voiceCallId: string;
  let voiceSecret: string;
  const publishableKey = loadConfig(TEST_ENV).publishableKey;

  before(async () => {
    target = listening(testApp({ TRUST_PROXY: '1', TOKEN_LIMIT_PER_IP: '100000', TOKEN_LIMIT_PER_KEY: '100000' }));
    shop = await signUp({ target });
    agentId = (await shop.agent.post('/api/agents').send({ name: 'Handler', orderHandler: true }).expect(201)).body.id;
    orderId = (await shop.agent.post('/api/orders').send({ clientName: 'A', phone: '0612345678', storeName: 'S', productsName: 'P' }).expect(201)).body.id;
    const key = await createKey(shop);
    keyId = key.id;
    token = (await request(target).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key.key}`).expect(200)).body
      .access_token;
    // A claimed human call, and a voice call (dispatched by the worker's own service call).
    await shop.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: '00:00', end: '24:00' } })
      .expect(200);
    await shop.agent.post('/api/orders').send({ clientName: 'Call me', phone: '0612345678', storeName: 'S', productsName: 'P' }).expect(201);
    callId = (await shop.agent.post('/api/calls/next').expect(200)).body.call.id;
    const voiceShop = await signUp({ target });
    const voice = await voiceShop.agent
      .post('/api/agents')
      .send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/', orderHandler: true })
      .expect(201);
    voiceSecret = voice.body.secret;
    await voiceShop.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: '00:00', end: '24:00' } })
      .expect(200);
    const voiceOrder = await voiceShop.agent
      .post('/api/orders')
      .send({ clientName: 'Robot call', phone: '0612345678', storeName: 'S', productsName: 'P' })
      .expect(201);
    const owner = await testKnex()('workspaces').where({ id: voiceShop.workspaceId }).first('owner_id');
    await testKnex()('credit_ledger').insert({ user_id: owner.owner_id, kind: 'grant', amount: 10 });
    const services = createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
    expect(await services.calls.dispatch(voiceOrder.body.operation_id)).to.equal('dispatched');
    voiceCallId = (await testKnex()('calls').where({ operation_id: voiceOrder.body.operation_id }).first('id')).id;
  });

  after(async () => {
    await invariantsHold([shop.workspaceId!]);
    console.log(`      (${fuzzStats.cases} fuzz cases, seed ${SEED})`);
  });

  const bodyRoutes: Array<[string, 'post' | 'put' | 'patch', () => string]> = [
    ['/api/orders', 'post', () => '/api/orders'],
    ['/api/orders/:id', 'put', () => `/api/orders/${orderId}`],
    ['/api/agents', 'post', () => '/api/agents'],
    ['/api/agents/:id', 'put', () => `/api/agents/${agentId}`],
    ['/api/keys', 'post', () => '/api/keys'],
    ['/api/workspace/invitations', 'post', () => '/api/workspace/invitations'],
    ['/data/v1/orders', 'post', () => '/data/v1/orders'],
    ['/data/v1/orders/:id', 'patch', () => `/data/v1/orders/${orderId}`],
    ['/api/settings/calls', 'put', () => '/api/settings/calls'],
    ['/api/calls/:callId/outcome', 'post', () => `/api/calls/${callId}/outcome`],
    ['/api/orders/:id/operations', 'post', () => `/api/orders/${orderId}/operations`],
    ['/api/agents/:id/rotate-secret', 'post', () => `/api/agents/${agentId}/rotate-secret`],
    ['/api/calls/next', 'post', () => '/api/calls/next'],
    ['/data/v1/orders/:id/operations', 'post', () => `/data/v1/orders/${orderId}/operations`],
  ];

  for (const [name, method, path] of bodyRoutes) {
    it(`${method.toUpperCase()} ${name}: random bodies, any Content-Type`, async () => {
      await fc.assert(
        fc.asyncProperty(
          rawBody,
          fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'),
          async (body, type) => {
            let req = name.startsWith('/data')
              ? request(target)[method](path()).set('apikey', publishableKey).set('Authorization', `Bearer ${token}`)
              : shop.agent[method](path());
            req = req.set('Content-Type', type);
            checkJson(await req.send(body as string), `${method} ${name} ${String(body).slice(0, 80)}`);
          },
        ),
        { seed: SEED, numRuns: RUNS },
      );
    });
  }

  it('every :id route: random path ids and query strings', async () => {
    await fc.assert(
      fc.asyncProperty(pathId, queryString, fc.constantFrom('get', 'put', 'delete'), async (id, query, method) => {
        const q = query ? `?${query}` : '';
        const routes =
          method === 'get'
            ? [
                `/api/orders/${id}`,
                `/data/v1/orders/${id}`,
                `/api/orders/${id}/operations`,
                `/data/v1/orders/${id}/operations`,
                `/api/settings/calls${q}`,
                `/api/orders${q}`,
                `/api/agents${q}`,
                `/api/keys${q}`,
                `/api/credits${q}`,
                `/data/v1/orders${q}`,
                `/data/v1/credits${q}`,
                `/orders${q}`,
                `/orders/${id}`,
                `/api/workspace/invitations${q}`,
                `/join/${id}`,
              ]
            : method === 'put'
              ? [`/api/orders/${id}`, `/api/agents/${id}`]
              : [`/api/orders/${id}`, `/api/keys/${id}`, `/data/v1/orders/${id}`, `/api/workspace/invitations/${id}`];
        for (const route of routes) {
          const req = route.startsWith('/data')
            ? request(target)[method === 'put' ? 'patch' : method](route).set('apikey', publishableKey).set('Authorization', `Bearer ${token}`)
            : shop.agent[method](route);
          const res = await (method === 'get' ? req : req.send({ status: 'confirmed' }));
          (route.startsWith('/api') || route.startsWith('/data') ? checkJson : checkPage)(res, `${method} ${route}`);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The shop's own order and key were never touched by a random id.
    expect(await testKnex()('orders').where({ id: orderId })).to.have.length(1);
    expect((await testKnex()('api_keys').where({ id: keyId }).first()).revoked_at).to.equal(null);
  });

  it('POST /api/orders/import: random CSV files → 200 with exactly `imported` new orders, or a 4xx and nothing written', async () => {
    const cell = fc.oneof(
      nasty,
      fc.constantFrom('0612345678', '+212 6 98 76 54 32', '٠٦١٢٣٤٥٦٧٨', 'confirmed', 'Pending', 'Atlas', '"', '""', '"a,b"', '"x\ny"', ';', ','),
    );
    const headerName = fc.oneof(
      fc.constantFrom('client_name', 'Nom complet', 'Téléphone', 'phone', 'store', 'boutique', 'المنتج', 'produit', 'adresse', 'status', 'STATUS', 'id', ''),
      fc.string({ maxLength: 10 }),
    );
    const csvFile = fc
      .tuple(
        fc.array(headerName, { minLength: 0, maxLength: 8 }),
        fc.array(fc.array(cell, { maxLength: 9 }), { maxLength: 12 }),
        fc.constantFrom(',', ';'),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.boolean(),
      )
      .map(([header, rows, sep, eol, bom]) => (bom ? '\ufeff' : '') + [header, ...rows].map((r) => r.join(sep)).join(eol));
    const valid = fc
      .array(fc.tuple(cell, fc.constantFrom('0612345678', '06 98 76 54 32', '12'), cell), { minLength: 1, maxLength: 5 })
      .map((rows) =>
        ['name;phone;store;product;status', ...rows.map(([n, p, st]) => `"${n.replace(/"/g, '""')}";${p};Atlas;"${st.replace(/"/g, '""')}";`)].join('\n'),
      );
    // The agents fuzz above may have left the workspace without an order handler (then every file is a 422).
    await shop.agent.put(`/api/agents/${agentId}`).send({ orderHandler: true }).expect(200);
    const count = async () => Number((await testKnex()('orders').where({ workspace_id: shop.workspaceId }).count({ n: '*' }))[0].n);
    const seen = { imported: 0, skipped: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          csvFile,
          valid,
          rawBody.map((b) => (Buffer.isBuffer(b) ? b.toString('latin1') : b)),
        ),
        fc.constantFrom('text/csv', 'text/plain', 'application/octet-stream'),
        async (file, type) => {
          const before = await count();
          const res = await shop.agent.post('/api/orders/import').set('Content-Type', type).send(file);
          checkJson(res, `import ${JSON.stringify(file.slice(0, 120))}`);
          const after = await count();
          if (res.status !== 200) {
            expect(after, 'a refused file writes nothing').to.equal(before);
            seen.refused += 1;
            return;
          }
          seen.imported += res.body.imported;
          seen.skipped += res.body.skipped;
          expect(Object.keys(res.body)).to.deep.equal(['imported', 'skipped', 'errors', 'order_ids', 'format', 'encoding', 'ignored_columns']);
          expect(after - before).to.equal(res.body.imported);
          expect(res.body.order_ids).to.have.length(res.body.imported);
          expect(res.body.errors).to.have.length(res.body.skipped);
          for (const e of res.body.errors) {
            expect(e.line).to.be.a('number').and.at.least(2);
            expect(Object.keys(e.fields)).not.to.be.empty;
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    // The generators reach all three outcomes: orders imported, lines skipped, files refused.
    expect(seen.imported, JSON.stringify(seen)).to.be.greaterThan(0);
    expect(seen.skipped, JSON.stringify(seen)).to.be.greaterThan(0);
    expect(seen.refused, JSON.stringify(seen)).to.be.greaterThan(0);
  });

  it('listing, export and stats: random query strings (filters, junk keys, repeated keys, odd encodings)', async () => {
    const before = await testKnex()('orders').where({ workspace_id: shop.workspaceId }).count({ n: '*' });
    await fc.assert(
      fc.asyncProperty(listingQuery, async (query) => {
        const q = query ? `?${query}` : '';
        for (const route of ['/api/orders', '/data/v1/orders', '/api/orders/export.csv', '/api/stats']) {
          const res = route.startsWith('/data')
            ? await request(target).get(`${route}${q}`).set('apikey', publishableKey).set('Authorization', `Bearer ${token}`)
            : await shop.agent.get(`${route}${q}`);
          checkJson(res, `GET ${route}${q.slice(0, 200)}`);
          if (res.status === 400) expect(res.body.code, `GET ${route}${q.slice(0, 200)}`).to.be.oneOf(['VALIDATION_ERROR', 'BAD_REQUEST']);
          if (res.status === 200 && route.endsWith('.csv')) expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8');
          if (res.status === 200 && !route.endsWith('.csv')) expect(res.body).to.be.an('object');
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Reading never writes.
    expect(await testKnex()('orders').where({ workspace_id: shop.workspaceId }).count({ n: '*' })).to.deep.equal(before);
  });

  it('/hooks/calls/:callId: random bodies, signatures and ids → 400/401/404, never 5xx; nothing changes without a valid signature', async () => {
    const before = await testKnex()('calls').where({ id: voiceCallId }).first();
    const header = fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom('v1,', 'v1,AAAA', 'v2,abc', '', ' '));
    await fc.assert(
      fc.asyncProperty(rawBody, fc.oneof(fc.constant(voiceCallId), pathId), header, fc.boolean(), async (body, id, signature, signIt) => {
        // supertest would serialise a Buffer as JSON: send text (invalid UTF-8 arrives as U+FFFD).
        const text = Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
        const headers = signIt
          ? signedHeaders(voiceSecret, newMessageId(), text)
          : {
              'webhook-id': newMessageId(),
              'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
              'webhook-signature': signature.replace(/[^\t\x20-\x7e]/g, ''),
            };
        const res = await request(target).post(`/hooks/calls/${id}`).set(headers).set('Content-Type', 'application/json').send(text);
        checkJson(res, `hooks ${id} ${text.slice(0, 80)}`);
        if (!signIt) expect([400, 401, 404], `unsigned → ${res.status}`).to.include(res.status);
        else expect([200, 400, 404, 409, 413], `signed → ${res.status}`).to.include(res.status);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    const after = await testKnex()('calls').where({ id: voiceCallId }).first();
    if (after.ended_at) expect(after.ended_by).to.equal('agent');
    else expect(after).to.deep.equal(before);
  });

  it('/hooks/stores/:id: random signed bodies (NUL, unpaired surrogates, deep nesting) → 200 or 400, never 5xx', async () => {
    const secret = 'shpss_fuzz';
    const store = (await shop.agent.post('/api/stores').send({ kind: 'shopify', name: 'Fuzz', shop: 'fuzz.myshopify.com', secret }).expect(201)).body;
    const order = fc
      .tuple(anyValue, anyValue, fc.constantFrom('id', 'name', 'line_items', 'shipping_address', 'cancelled_at', 'note'))
      .map(([id, value, key]) => JSON.stringify({ id, [key]: value, shipping_address: { first_name: value, phone: '0612345678' } }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(rawBody, order), fc.constantFrom('orders/create', 'orders/updated', 'orders/cancelled'), async (body, topic) => {
        const text = Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
        const res = await request(target)
          .post(`/hooks/stores/${store.id}`)
          .set({
            'Content-Type': 'application/json',
            'X-Shopify-Topic': topic,
            'X-Shopify-Webhook-Id': newMessageId(),
            'X-Shopify-Hmac-Sha256': crypto.createHmac('sha256', secret).update(text).digest('base64'),
          })
          .send(text);
        checkJson(res, `store hook ${text.slice(0, 80)}`);
        expect([200, 400, 413], `signed → ${res.status}`).to.include(res.status);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('the token endpoint: random Authorization headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 80 }),
          fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`),
          fc.string({ maxLength: 43, minLength: 43 }).map((s) => `Bearer sk_live_${s}`),
        ),
        async (header) => {
          const safe = header.replace(/[^\t\x20-\x7e]/g, '');
          const res = await request(target).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', safe);
          checkJson(res, `token ${safe}`);
          expect(res.status).to.equal(401);
          expect(res.text).to.equal('{"error":"invalid_api_key"}');
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  // Deleting and revoking come last: the shop's own order and key are in play for the routes before.
  const FORM_POSTS = [
    '/signup',
    '/login',
    '/workspace',
    '/workspace/invitations',
    '/join/:id',
    '/orders',
    '/orders/:id',
    '/orders/:id/status',
    '/agents',
    '/agents/:id/order-handler',
    '/api-keys',
    '/orders/:id/delete',
    '/api-keys/:id/revoke',
    '/workspace/invitations/:id/revoke',
  ];
  const formField = fc.constantFrom(
    'name',
    'email',
    'password',
    'workspace',
    'client_name',
    'phone',
    'store_name',
    'products_name',
    'address',
    'status',
    'order_handler',
    'expires_in_days',
    'next',
    '__proto__',
    'constructor',
    'toString',
    '_csrf[]',
  );
  for (const route of FORM_POSTS) {
    it(`POST ${route} (form): random fields with a valid CSRF token`, async () => {
      const page = await shop.agent.get('/workspace').expect(200);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
      await fc.assert(
        fc.asyncProperty(pathId, fc.boolean(), fc.dictionary(formField, nasty, { maxKeys: 6 }), async (id, ownId, fields) => {
          const path = route.replace(':id', ownId ? (route.includes('agents') ? agentId : route.includes('orders') ? orderId : keyId) : id);
          const form = new URLSearchParams({ ...fields, _csrf: csrf }).toString();
          checkPage(await shop.agent.post(path).type('form').send(form), `POST ${path} ${form.slice(0, 120)}`);
        }),
        { seed: SEED, numRuns: RUNS },
      );
    });
  }

  it('a form body that is not UTF-8', async () => {
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await shop.agent.get('/workspace')).text)![1];
    const raw = await shop.agent
      .post('/workspace/invitations')
      .type('form')
      .send(Buffer.concat([Buffer.from(`_csrf=${csrf}&email=`), Buffer.from([0xff, 0xfe, 0x25, 0x25])]));
    checkPage(raw, 'invalid UTF-8 form');
    expect(raw.status).to.be.within(400, 499);
  });
});
