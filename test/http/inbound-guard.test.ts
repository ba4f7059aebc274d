import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import express from 'express';
import type { Express } from 'express';
import request from 'supertest';
import { ROOT } from '../../config';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import { jsonErrors } from '../../routes/middleware/errors';
import { isGuardedReader } from '../../routes/middleware/inbound-bodies';
import type { RunningWorker } from '../../worker';
import type { SignedIn } from '../helpers/app';
import { csrfOf, signUp, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { agentDouble, createOrder, ORDER, testWorker, voiceShop, waitFor } from '../helpers/loop';
import { APP_SECRET, whatsappAgent } from '../helpers/whatsapp';
import { opened, testSecrets } from '../helpers/secrets';

/**
 * Issue 51: every door that takes a body from outside a session (store, carrier and WhatsApp hooks, a
 * platform's callbacks, voice reports, the imports) goes through one guard. The routes are read from
 * the app itself: a new one that reads a body without the guard's reader fails here.
 */

const SHOPIFY_SECRET = 'shpss_guard_test_secret';

interface MountedRoute {
  method: string;
  path: string;
  handlers: unknown[];
}

interface Layer {
  route?: { path: string; methods: Record<string, boolean>; stack: Array<{ handle: unknown }> };
  handle: unknown;
  rawPath?: unknown;
}

/** Every route the app mounts, with the handlers of its own stack, its path joined with its routers' mount paths. */
function mountedRoutes(app: Express): MountedRoute[] {
  const routes: MountedRoute[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods))
          routes.push({ method, path: prefix + layer.route.path, handlers: layer.route.stack.map((l) => l.handle) });
        continue;
      }
      const inner = (layer.handle as { stack?: Layer[] }).stack;
      if (!Array.isArray(inner)) continue;
      const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      walk(inner, prefix + mount);
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return routes;
}

const TAKES_BODY = new Set(['post', 'put', 'patch']);
/** A body from outside any session: what strangers, platforms and agents post, and the files people upload. */
const fromOutside = (route: MountedRoute) => TAKES_BODY.has(route.method) && (route.path.startsWith('/hooks/') || /\/import$/.test(route.path));

const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
/** What a stranger sends each door. */
const ATTACKS: Array<{ name: string; body: Buffer }> = [
  { name: 'NUL in a string', body: Buffer.from('{"type":"x\\u0000","data":{"a":"\\u0000"},"consumer_key":"a\\u0000","consumer_secret":"s","user_id":"x"}') },
  {
    name: 'an unpaired surrogate',
    body: Buffer.from('{"type":"\\ud800","consumer_key":"\\ud800","consumer_secret":"s","user_id":"x","shop_domain":"a\\ud800"}'),
  },
  { name: '100,000-deep nesting', body: Buffer.from(deep(100_000)) },
  { name: '2 MB', body: Buffer.from(`{"a":"${'a'.repeat(2 * 1024 * 1024)}"}`) },
  { name: 'invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]) },
  { name: 'an empty body', body: Buffer.alloc(0) },
  { name: '__proto__ keys', body: Buffer.from('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"type":"call.ended"}') },
  { name: '__proto__ as a column', body: Buffer.from('__proto__,constructor,phone\n{"polluted":true},x,0612345678\n') },
];

/** Every table's row count: what an attack may not change (the session store and one-time form tokens aside). */
async function rowCounts(): Promise<Record<string, number>> {
  const tables: string[] = await testKnex()('pg_tables').where({ schemaname: 'public' }).pluck('tablename');
  const counts: Record<string, number> = {};
  for (const table of tables.sort()) {
    if (['session', 'form_tokens'].includes(table) || table.startsWith('knex_')) continue;
    counts[table] = Number((await testKnex()(table).count('* as n'))[0].n);
  }
  return counts;
}

/** What an attack left: tables whose count changed, apart from the logs' `rejected` and `ignored` lines (a platform that must get 200 is answered so, and the message logged as kept for nothing). */
async function writtenSince(before: Record<string, number>, since: Date): Promise<Record<string, number>> {
  const after = await rowCounts();
  const changed: Record<string, number> = {};
  for (const [table, n] of Object.entries(after)) if (n !== before[table]) changed[table] = n - (before[table] ?? 0);
  for (const log of ['store_events', 'carrier_events']) {
    if (changed[log] === undefined) continue;
    const kept = await testKnex()(log).where('received_at', '>=', since).whereNotIn('result', ['rejected', 'ignored']).count('* as n');
    if (Number(kept[0].n) === 0) delete changed[log];
  }
  return changed;
}

describe('one guard for every door that takes a body from outside a session (issue 51)', function () {
  this.timeout(300_000);
  let guardApp: Express;
  let worker: RunningWorker;
  let agent: Awaited<ReturnType<typeof agentDouble>>;
  let shop: SignedIn;
  /** How each door is reached: its path's ids filled in, and the body signed as its sender signs it. */
  let reach: Record<string, (body: Buffer) => PromiseLike<request.Response>>;

  before(async () => {
    guardApp = testApp({ SHOPIFY_CLIENT_ID: 'guard-client', SHOPIFY_CLIENT_SECRET: SHOPIFY_SECRET });
    worker = await testWorker();
    agent = await agentDouble();
    const voice = await voiceShop(agent.url);
    shop = voice;
    const order = await createOrder(voice, ORDER);
    const call = await waitFor('a call requested', async () => agent.received[0]);
    const callId: string = call.json.data.call_id;
    // The call stays open for its reports; nothing else is written while the doors are tried.
    await worker.stop();
    const store = (await shop.agent.post('/api/stores').send({ kind: 'custom', name: 'Guarded store' }).expect(201)).body;
    const carrier = (await shop.agent.post('/api/carriers').send({ kind: 'custom', name: 'Guarded carrier' }).expect(201)).body;
    const human = (await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201)).body;
    const whatsapp = (
      await shop.agent
        .post('/api/agents')
        .send({ ...whatsappAgent(human.id), orderHandler: false })
        .expect(201)
    ).body;
    expect(order.id).to.be.a('string');
    // Carrier accounts written directly (making one checks its keys at the carrier): one that signs, one reached by its URL's token.
    const account = async (kind: string, credentials: Record<string, string>, token: string) =>
      (
        await testKnex()('carrier_accounts')
          .insert({
            workspace_id: shop.workspaceId,
            kind,
            name: `Guarded ${kind}`,
            credentials: testSecrets.seal(JSON.stringify(credentials)),
            hook_token: testSecrets.seal(token),
          })
          .returning('id')
      )[0].id as string;
    const sendit = await account('sendit', { public_key: 'pk', secret_key: 'sendit-secret' }, 'unused-token');
    const ozonToken = crypto.randomBytes(32).toString('base64url');
    const ozon = await account('ozon_express', { customer_id: '1', api_key: 'k' }, ozonToken);

    // Sent as bytes: superagent would serialise a Buffer given with a JSON type (the routes read any type raw).
    const standard = (url: string, secret: string) => (body: Buffer) =>
      request(guardApp)
        .post(url)
        .set(signedHeaders(secret, newMessageId(), body))
        .set('Content-Type', 'application/octet-stream')
        .send(body);
    const hmac = (secret: string, body: Buffer, encoding: 'hex' | 'base64') => crypto.createHmac('sha256', secret).update(body).digest(encoding);
    reach = {
      'post /hooks/calls/:callId': standard(`/hooks/calls/${callId}`, voice.secret),
      'post /hooks/stores/:id': standard(`/hooks/stores/${store.id}`, store.secret),
      'post /hooks/carriers/:id': standard(`/hooks/carriers/${carrier.id}`, carrier.secret),
      'post /hooks/stores/:id/keys': (body) =>
        request(guardApp).post(`/hooks/stores/${crypto.randomUUID()}/keys`).set('Content-Type', 'application/octet-stream').send(body),
      'post /hooks/shopify/privacy': (body) =>
        request(guardApp)
          .post('/hooks/shopify/privacy')
          .set('Content-Type', 'application/octet-stream')
          .set('X-Shopify-Topic', 'shop/redact')
          .set('X-Shopify-Hmac-Sha256', hmac(SHOPIFY_SECRET, body, 'base64'))
          .send(body),
      'post /hooks/whatsapp/:agentId': (body) =>
        request(guardApp)
          .post(`/hooks/whatsapp/${whatsapp.id}`)
          .set('Content-Type', 'application/octet-stream')
          .set('X-Hub-Signature-256', `sha256=${hmac(APP_SECRET, body, 'hex')}`)
          .send(body),
      'post /hooks/carrier-accounts/:id': (body) =>
        request(guardApp)
          .post(`/hooks/carrier-accounts/${sendit}`)
          .set('Content-Type', 'application/octet-stream')
          .set('X-Sendit-Signature', hmac('sendit-secret', body, 'hex'))
          .send(body),
      'post /hooks/carrier-accounts/:id/:token': (body) =>
        request(guardApp).post(`/hooks/carrier-accounts/${ozon}/${ozonToken}`).set('Content-Type', 'application/octet-stream').send(body),
      'post /api/orders/import': (body) => request(guardApp).post('/api/orders/import').set('Cookie', shop.cookie).set('Content-Type', 'text/csv').send(body),
      'post /api/deliveries/import': (body) =>
        request(guardApp).post('/api/deliveries/import').set('Cookie', shop.cookie).set('Content-Type', 'text/csv').send(body),
    };
  });
  after(async () => {
    await agent.close();
  });

  it('every route that reads a body from outside a session has the guard’s reader in its own stack', () => {
    const outside = mountedRoutes(guardApp).filter(fromOutside);
    expect(outside.map((r) => `${r.method} ${r.path}`)).to.include.members([
      'post /hooks/calls/:callId',
      'post /hooks/whatsapp/:agentId',
      'post /api/orders/import',
    ]);
    // The first route mounted for a method and path is the one that reads the body (a page's upload is read before its CSRF check, by a route of its own).
    const first = outside.filter((route, i) => outside.findIndex((r) => r.method === route.method && r.path === route.path) === i);
    const unguarded = first.filter((route) => !route.handlers.some(isGuardedReader)).map((r) => `${r.method} ${r.path}`);
    expect(unguarded, 'routes reading a body without the guard').to.deep.equal([]);
  });

  it('each of them, sent NUL, \\ud800, 100,000-deep nesting, 2 MB, invalid UTF-8, an empty body and __proto__ keys: never a 5xx, nothing written', async () => {
    const all = mountedRoutes(guardApp).filter(fromOutside);
    const outside = all.filter((route, i) => all.findIndex((r) => r.method === route.method && r.path === route.path) === i);
    const pages = outside.filter((r) => r.path === '/orders/import' || r.path === '/deliveries/import');
    const answers: string[] = [];
    for (const route of outside) {
      const key = `${route.method} ${route.path}`;
      const send = reach[key] ?? (pages.includes(route) ? pageUpload(route.path) : undefined);
      expect(send, `the test knows how to reach ${key}: add it to \`reach\``).to.not.equal(undefined);
      for (const attack of ATTACKS) {
        const before = await rowCounts();
        const since = new Date(Date.now() - 1000);
        const res = await send!(attack.body);
        answers.push(`${key} ← ${attack.name}: ${res.status}`);
        expect(res.status, `${key} ← ${attack.name}: ${res.text.slice(0, 200)}`).to.be.below(500);
        expect(res.text, 'no stack trace').to.not.match(/\n\s+at /);
        expect(await writtenSince(before, since), `${key} ← ${attack.name} wrote`).to.deep.equal({});
      }
    }
    expect(({} as Record<string, unknown>).polluted, 'no prototype polluted').to.equal(undefined);
    expect(answers.length).to.equal(outside.length * ATTACKS.length);
  });

  /** A page's upload: the form's CSRF token first, then the file. */
  function pageUpload(url: string) {
    return async (body: Buffer) => {
      const csrf = await csrfOf(shop.agent, url);
      return request(guardApp).post(url).set('Cookie', shop.cookie).field('_csrf', csrf).attach('file', body, 'attack.csv');
    };
  }
});

/** A WhatsApp agent of a new workspace, handing over to a person. */
async function newWhatsAppAgent(): Promise<{ id: string }> {
  const shop = await signUp();
  const human = (await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201)).body;
  return (
    await shop.agent
      .post('/api/agents')
      .send({ ...whatsappAgent(human.id), orderHandler: false })
      .expect(201)
  ).body;
}

describe('the attacks of issue 51, each failing before its fix', () => {
  it('item 1: the WooCommerce keys callback, sent NUL or \\ud800 in a key, answers 404 and writes nothing (was a 500 from the jsonb bind)', async () => {
    const stranger = request(testApp());
    for (const body of [
      '{"user_id":"x","consumer_key":"a\\u0000","consumer_secret":"s"}',
      '{"user_id":"x","consumer_key":"\\ud800","consumer_secret":"s"}',
      '{"user_id":"x","consumer_key":"a","consumer_secret":"s\\u0000"}',
    ]) {
      const res = await stranger.post(`/hooks/stores/${crypto.randomUUID()}/keys`).set('Content-Type', 'application/json').send(body);
      expect(res.status, body).to.equal(404);
      expect(res.body).to.deep.equal({ error: 'not_found' });
    }
  });

  it('item 2: the WhatsApp verify handshake with a non-ASCII token of the right length in characters is 403, not a 500', async () => {
    const created = await newWhatsAppAgent();
    const token: string = opened(await testKnex()('whatsapp_agents').where({ agent_id: created.id }).first('verify_token'), ['verify_token']).verify_token;
    const lookalike = `é${'a'.repeat(token.length - 1)}`;
    expect(lookalike.length).to.equal(token.length);
    const query = (verify: string) => `hub.mode=subscribe&hub.challenge=1&hub.verify_token=${encodeURIComponent(verify)}`;
    const refused = await request(testApp()).get(`/hooks/whatsapp/${created.id}?${query(lookalike)}`);
    expect(refused.status).to.equal(403);
    expect(refused.body).to.deep.equal({ error: 'forbidden' });
    const answered = await request(testApp())
      .get(`/hooks/whatsapp/${created.id}?${query(token)}`)
      .expect(200);
    expect(answered.text).to.equal('1');
  });

  it('item 3: a signed WhatsApp body nested 400,000 deep (800 kB, under the 1 MB bound) is refused from its bytes (400), before it is parsed', async () => {
    const created = await newWhatsAppAgent();
    const body = Buffer.from(deep(400_000));
    const res = await request(testApp())
      .post(`/hooks/whatsapp/${created.id}`)
      .set('Content-Type', 'application/json')
      .set('X-Hub-Signature-256', `sha256=${crypto.createHmac('sha256', APP_SECRET).update(body).digest('hex')}`)
      .send(body.toString('utf8'));
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal({ error: 'unreadable_body' });
    expect(await testKnex()('whatsapp_events').where({ agent_id: created.id })).to.deep.equal([]);
  });

  it('a database refusal of text (NUL in JSONB, 22P05) that some entry point let through is a 400 naming the body, never a 500', async () => {
    const probe = express();
    probe.post('/probe', async (_req, res) => {
      await testKnex().raw('SELECT ?::jsonb AS value', ['{"key":"a\\u0000"}']);
      res.json({ ok: true });
    });
    probe.use(jsonErrors);
    const res = await request(probe).post('/probe').expect(400);
    expect(res.body).to.include({ code: 'VALIDATION_ERROR' });
    expect(res.body.fields).to.have.property('body');
  });

  it('item 4: every comparison of a secret goes through the one helper that compares byte lengths first', () => {
    const sources: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (file.endsWith('.ts')) sources.push(file);
      }
    };
    for (const dir of ['services', 'integrations', 'routes', 'jobs']) walk(dir);
    const comparing = sources.filter((file) => fs.readFileSync(path.join(ROOT, file), 'utf8').includes('timingSafeEqual'));
    expect(comparing).to.deep.equal([path.join('integrations', 'secret-compare.ts')]);
  });
});
