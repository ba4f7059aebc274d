import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import express from 'express';
import type { Request, Response } from 'express';
import request from 'supertest';
import { compressionFigures } from '../../bench/compression';
import { scenarios } from '../../bench/scenarios';
import { compressAnswers, shouldCompress } from '../../routes/middleware/compression';
import type { SignedIn } from '../helpers/app';
import { app, appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { opened } from '../helpers/secrets';

let base: string;

/** The bytes of an answer exactly as sent (supertest would decompress them). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${path}`,
      { method, headers: { ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Not compressed because the filter refused it, whatever its size: compression adds
 * `Vary: Accept-Encoding` to every answer its filter lets through, even one left as it is for being
 * under 1 kB, so a small answer proves its exclusion by that header's absence.
 */
function turnedDown(res: { headers: http.IncomingHttpHeaders }): void {
  expect(res.headers['content-encoding']).to.equal(undefined);
  expect(res.headers.vary ?? '').not.to.match(/Accept-Encoding/i);
}

async function shopWithOrders(n: number): Promise<SignedIn> {
  const shop = await signUp();
  await shop.agent.post('/api/agents').send({ name: 'Salma', orderHandler: true }).expect(201);
  for (let i = 0; i < n; i += 1) {
    await shop.agent
      .post('/api/orders')
      .send({ clientName: `Client ${i}`, phone: '0612345678', storeName: 'Atlas Shop', productsName: 'Argan oil x2' })
      .expect(201);
  }
  return shop;
}

describe('compressed answers over a phone network', () => {
  let shop: SignedIn;
  let server: http.Server;
  before(async () => {
    server = http.createServer(app());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    shop = await shopWithOrders(12);
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const [label, path] of [
    ['a page (/orders)', '/orders'],
    ['a JSON list (GET /api/orders)', '/api/orders'],
    ['a CSV export (GET /api/orders/export.csv)', '/api/orders/export.csv'],
  ] as const) {
    it(`${label}: gzip and brotli when asked, decompressing to the same bytes; nothing compressed when not asked`, async () => {
      const get = (encoding?: string) => raw('GET', path, { cookie: shop.cookie, ...(encoding ? { 'accept-encoding': encoding } : {}) });
      const plain = await get('identity');
      expect(plain.status).to.equal(200);
      expect(plain.headers['content-encoding']).to.equal(undefined);
      expect(plain.body.length).to.be.greaterThan(1024);
      const gzip = await get('gzip');
      expect(gzip.headers['content-encoding']).to.equal('gzip');
      expect(gzip.headers.vary).to.match(/Accept-Encoding/i);
      expect(gzip.body.length).to.be.lessThan(plain.body.length / 2);
      const br = await get('br');
      expect(br.headers['content-encoding']).to.equal('br');
      expect(zlib.gunzipSync(gzip.body).equals(plain.body), 'gzip decompresses to the same bytes').to.equal(true);
      expect(zlib.brotliDecompressSync(br.body).equals(plain.body), 'brotli decompresses to the same bytes').to.equal(true);
      const none = await get();
      expect(none.headers['content-encoding']).to.equal(undefined);
    });
  }

  it('an answer under 1 kB is not compressed', async () => {
    const res = await raw('GET', '/api/credits', { cookie: shop.cookie, 'accept-encoding': 'gzip' });
    expect(res.status).to.equal(200);
    expect(res.body.length).to.be.lessThan(1024);
    expect(res.headers['content-encoding']).to.equal(undefined);
    // The filter said yes, the size said no: how `turnedDown` below tells the two apart.
    expect(res.headers.vary).to.match(/Accept-Encoding/i);
  });

  it('answers that show a secret once are never compressed: a new API key (JSON and page), a voice agent’s secret', async () => {
    const json = { cookie: shop.cookie, 'accept-encoding': 'gzip, br', 'content-type': 'application/json' };
    const key = await raw('POST', '/api/keys', json, JSON.stringify({ name: 'x'.repeat(100) }));
    expect(key.status).to.equal(201);
    turnedDown(key);
    expect(JSON.parse(key.body.toString()).key).to.match(/^sk_live_/);

    const page = await shop.agent.get('/api-keys').expect(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    const form = new URLSearchParams({ _csrf: csrf, name: 'Store plugin', expires_in_days: '' }).toString();
    const shown = await raw(
      'POST',
      '/api-keys',
      { cookie: shop.cookie, 'accept-encoding': 'gzip, br', 'content-type': 'application/x-www-form-urlencoded' },
      form,
    );
    expect(shown.status).to.equal(201);
    expect(shown.body.length).to.be.greaterThan(1024);
    turnedDown(shown);
    expect(shown.body.toString()).to.match(/sk_live_/);

    const voice = await raw(
      'POST',
      '/api/agents',
      json,
      JSON.stringify({ name: 'Robot '.repeat(30), kind: 'voice', endpointUrl: `http://127.0.0.1:4000/${'a'.repeat(900)}` }),
    );
    expect(voice.status).to.equal(201);
    expect(voice.body.length).to.be.greaterThan(1024);
    turnedDown(voice);
    const agentId = JSON.parse(voice.body.toString()).id;
    const rotated = await raw('POST', `/api/agents/${agentId}/rotate-secret`, json);
    turnedDown(rotated);
    expect(opened(await testKnex()('agents').where({ id: agentId }).first()).secret).to.equal(JSON.parse(rotated.body.toString()).secret);
  });

  it('/hooks answers are never compressed, however the path is spelt', async () => {
    for (const path of ['/hooks/calls/00000000-0000-4000-8000-000000000000', '/HOOKS/calls/00000000-0000-4000-8000-000000000000?x=1']) {
      const res = await raw('POST', path, { 'accept-encoding': 'gzip', 'content-type': 'application/json' }, 'x'.repeat(5000));
      expect(res.status, path).to.equal(404);
      expect(JSON.parse(res.body.toString()), 'answered by the hooks router').to.deep.equal({ error: 'not_found' });
      turnedDown(res);
    }
  });

  it('npm run bench: its compression line measures /orders with gzip against without; its load scenarios send no Accept-Encoding', async () => {
    const figures = await compressionFigures(base, { ...shop, workspaceId: shop.workspaceId! }, 2);
    expect(figures.plain.bytes).to.be.greaterThan(1024);
    expect(figures.gzip.bytes)
      .to.be.greaterThan(0)
      .and.lessThan(figures.plain.bytes / 2);
    const account = { email: 'bench@example.test', cookie: 'ocs.sid=x', userId: 'u', workspaceId: 'w' };
    const inputs = { small: account, large: account, writer: account, keys: ['sk_live_x'], access: { token: 't', publishableKey: 'pk' } };
    for (const scenario of scenarios(inputs)) {
      for (const target of [scenario.service, scenario.baseline]) {
        const sent = Object.keys({ ...target.headers, ...target.perRequest?.().headers }).map((h) => h.toLowerCase());
        expect(sent, scenario.id).not.to.include('accept-encoding');
      }
    }
  });

  it('the filter: HTML, JSON, CSV and SVG yes; /hooks, event streams and marked secrets no', () => {
    const req = (path: string) => ({ path, originalUrl: path, headers: {} }) as unknown as Request;
    const res = (type: string, locals: Record<string, unknown> = {}) => ({ getHeader: () => type, locals }) as unknown as Response;
    for (const type of ['text/html; charset=utf-8', 'application/json; charset=utf-8', 'text/csv; charset=utf-8', 'image/svg+xml']) {
      expect(shouldCompress(req('/orders'), res(type)), type).to.equal(true);
    }
    for (const path of ['/hooks/calls/x', '/hooks', '/hooks?x=1', '/Hooks/calls/x', '/HOOKS/']) {
      expect(shouldCompress(req(path), res('application/json')), path).to.equal(false);
    }
    expect(shouldCompress(req('/hooksmith'), res('application/json')), 'only the /hooks prefix').to.equal(true);
    expect(shouldCompress(req('/events'), res('text/event-stream'))).to.equal(false);
    expect(shouldCompress(req('/api/keys'), res('application/json', { noCompression: true }))).to.equal(false);
    expect(shouldCompress(req('/assets/x.png'), res('image/png'))).to.equal(false);
  });
});

describe('static assets with a content hash', () => {
  it('pages link hashed URLs, answered with a one-year immutable cache and the current file; an unknown hash is 404', async () => {
    const page = await request(appUrl()).get('/login').expect(200);
    const css = /href="(\/assets\/app\.[0-9a-f]{10}\.css)"/.exec(page.text)?.[1];
    const icon = /href="(\/assets\/favicon\.[0-9a-f]{10}\.svg)"/.exec(page.text)?.[1];
    expect(css, 'the stylesheet link is hashed').to.be.a('string');
    expect(icon, 'the icon link is hashed').to.be.a('string');
    const res = await request(appUrl()).get(css!).expect(200);
    expect(res.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
    expect(res.headers['content-type']).to.match(/text\/css/);
    const plain = await request(appUrl()).get('/assets/app.css').expect(200);
    expect(res.text).to.equal(plain.text);
    expect(plain.headers['cache-control']).not.to.contain('immutable');
    await request(appUrl()).get('/assets/app.0000000000.css').expect(404);
    await request(appUrl()).get('/assets/nothing.css').expect(404);
  });
});

/** A promise and the function that settles it, for a route and its client to wait on each other. */
function signal(): { reached: Promise<void>; reach: () => void } {
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  return { reached, reach };
}

describe('streamed answers through the compression', () => {
  const PARTS = 4;
  const part = (i: number) => `${Array.from({ length: 20 }, (_, j) => `order-${i}-${j},Client ${j},+212612345678,Argan oil x2\n`).join('')}end of part ${i}\n`;

  for (const [encoding, decompressor] of [
    ['gzip', zlib.createGunzip],
    ['br', zlib.createBrotliDecompress],
  ] as const) {
    it(`stay streamed (${encoding}): each part reaches the client before the next one is written`, async () => {
      const arrivals = Array.from({ length: PARTS }, signal);
      let heldBack: number | undefined;
      // Our compression in front of a route that streams like a CSV export would.
      const streaming = express();
      streaming.use(compressAnswers());
      streaming.get('/export.csv', async (_req, res) => {
        res.type('text/csv');
        for (let i = 0; i < PARTS; i += 1) {
          res.write(part(i));
          // A watchdog, not a timing requirement: a part still held back after 5 s will only come
          // with the end of the answer, so stop there and let the assertions say so.
          let watchdog: NodeJS.Timeout | undefined;
          const arrived = await Promise.race([
            arrivals[i].reached.then(() => true),
            new Promise<boolean>((resolve) => (watchdog = setTimeout(resolve, 5000, false))),
          ]);
          clearTimeout(watchdog);
          if (!arrived) {
            heldBack = i;
            break;
          }
        }
        res.end();
      });
      const server = http.createServer(streaming);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const { headers, text } = await new Promise<{ headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
          http
            .get(`http://127.0.0.1:${port}/export.csv`, { headers: { 'accept-encoding': encoding } }, (res) => {
              let text = '';
              res
                .pipe(decompressor())
                .on('data', (chunk: Buffer) => {
                  text += chunk.toString('utf8');
                  for (const [i, a] of arrivals.entries()) if (text.includes(`end of part ${i}\n`)) a.reach();
                })
                .on('end', () => resolve({ headers: res.headers, text }))
                .on('error', reject);
            })
            .on('error', reject);
        });
        expect(heldBack, `part ${heldBack} was held back until the end of the answer`).to.equal(undefined);
        expect(headers['content-encoding']).to.equal(encoding);
        expect(text).to.equal(Array.from({ length: PARTS }, (_, i) => part(i)).join(''));
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  }
});
