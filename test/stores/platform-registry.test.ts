import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';
import { ORDER_SOURCES, STORE_KINDS, STORE_PLATFORMS, WRITE_BACK_KINDS, createSchema, writeBackFunction } from '../../services/stores';
import { signUp, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/**
 * Issue 54, "platforms as providers": a store platform is its folder (services/stores/platforms/<kind>/)
 * and one line in the registry; everything else reads the registry. Adding one touches that folder,
 * the registry, the locales and the docs.
 */

const CATALOGUES = Object.fromEntries(
  ['en', 'fr', 'ar'].map((language) => [language, JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', `${language}.json`), 'utf8'))]),
);

/** A catalogue's text at a dotted key, or undefined. */
function textAt(catalogue: Record<string, unknown>, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), catalogue);
}

/** Every locale key a platform's strings use: its name, its guide (heading, steps, values), its one-click words. */
function keysOf(platform: (typeof STORE_PLATFORMS)[number]): string[] {
  const keys = [`storesPage.kind.${platform.kind}`, platform.guide.secretHint];
  if ('heading' in platform.guide) keys.push(platform.guide.heading);
  if ('oneClickOnly' in platform.guide) keys.push(...Object.values(platform.guide.oneClickOnly));
  if ('connect' in platform) keys.push(`storeConnect.intro.${platform.kind}`, `storeConnect.approve.${platform.kind}`);
  const t = (key: string) => {
    keys.push(key);
    return key;
  };
  const text = platform.guide.text({ t, url: null, admin: (key) => t(`storeGuide.admin.${key}`), code: (code) => code });
  for (const [key] of [...text.steps, ...text.after]) keys.push(key);
  return keys;
}

/** The code files under `dir` (TypeScript, views, SQL), by their path from the root. */
function codeFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return rel === path.join('db', 'migrations') ? [] : codeFiles(rel);
    return /\.(ts|ejs|sql)$/.test(entry.name) ? [rel] : [];
  });
}

/** Where the rest of the service lives: a platform is named nowhere here but in its folder and its registry line. */
const OUTSIDE = ['services', 'routes', 'views', 'openapi', 'jobs', 'db', 'integrations'];

/** The files outside a kind's folder and the registry that name it (in any case), by their path. */
function naming(kind: string): string[] {
  const word = new RegExp(kind, 'i');
  const own = [path.join('services', 'stores', 'platforms', kind) + path.sep, path.join('services', 'stores', 'platforms', 'registry.ts')];
  return OUTSIDE.flatMap(codeFiles)
    .filter((file) => !own.some((mine) => file.startsWith(mine)))
    .filter((file) => word.test(fs.readFileSync(path.join(ROOT, file), 'utf8')));
}

describe('store platforms: one folder and one registry line each (issue 54)', () => {
  it('every registry entry is a kind the API, the order sources and the pages take, with its folder', () => {
    expect(STORE_KINDS).to.deep.equal(STORE_PLATFORMS.map((platform) => platform.kind));
    expect(new Set(STORE_KINDS).size).to.equal(STORE_KINDS.length);
    for (const platform of STORE_PLATFORMS) {
      expect(createSchema.shape.kind.safeParse(platform.kind).success, platform.kind).to.equal(true);
      expect(ORDER_SOURCES, platform.kind).to.include(platform.kind);
      expect(platform.kind).to.match(/^[a-z][a-z0-9_]{0,39}$/);
      expect(fs.existsSync(path.join(ROOT, 'services', 'stores', 'platforms', platform.kind, 'index.ts')), platform.kind).to.equal(true);
    }
    expect(createSchema.shape.kind.safeParse('etsy').success).to.equal(false);
  });

  it('every platform has its strings in English, French and Arabic, and a section in docs/stores.md', () => {
    const docs = fs.readFileSync(path.join(ROOT, 'docs', 'stores.md'), 'utf8');
    const missing = STORE_PLATFORMS.flatMap((platform) =>
      keysOf(platform).flatMap((key) =>
        ['en', 'fr', 'ar'].filter((language) => typeof textAt(CATALOGUES[language], key) !== 'string').map((language) => `${language}: ${key}`),
      ),
    );
    expect(missing).to.deep.equal([]);
    // Its section: a heading naming it (`### YouCan`) in docs/stores.md.
    for (const platform of STORE_PLATFORMS) expect(docs, platform.kind).to.match(new RegExp(`^#+ .*${platform.kind}`, 'im'));
  });

  it('no file outside its folder and the registry names YouCan (17 files before the registry)', () => {
    expect(naming('youcan')).to.deep.equal([]);
  });

  it('no CHECK constraint lists the kinds', async () => {
    const { rows } = await testKnex().raw(
      `SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conname IN ('orders_source_check', 'store_connections_kind_check', 'oauth_states_kind_check')`,
    );
    expect(rows).to.have.length(3);
    for (const row of rows) for (const kind of STORE_KINDS) expect(row.definition, row.conname).not.to.contain(`'${kind}'`);
  });

  it('the write-back trigger queues for the kinds the registry says write back: its text, generated from the registry, is the database’s', async () => {
    const [{ current }] = (await testKnex().raw("SELECT pg_get_functiondef('orders_store_write_back'::regproc) AS current")).rows;
    expect(writeBackFunction).to.equal(`${current.trim()}\n`);
    const listed = /c\.kind IN \(([^)]*)\)/.exec(writeBackFunction)?.[1] ?? '';
    expect([...listed.matchAll(/'([a-z0-9_]+)'/g)].map((m) => m[1])).to.deep.equal(WRITE_BACK_KINDS);
  });

  describe('write-back: the registry and the trigger agree for every kind', () => {
    let app: ReturnType<typeof testApp>;
    before(() => {
      app = testApp();
    });

    /** Credentials of each shape the API takes: the platform that writes back accepts one of them. */
    const CREDENTIALS = [{ access_token: 'shpat_token' }, { consumer_key: 'ck_key', consumer_secret: 'cs_secret' }];

    for (const platform of STORE_PLATFORMS) {
      const writesBack = 'writeBack' in platform;
      it(`${platform.kind}: ${writesBack ? 'its credentials are kept, and an outcome queues a write-back job' : 'no credentials are kept, and an outcome queues nothing, even with credentials forced in'}`, async () => {
        expect(WRITE_BACK_KINDS.includes(platform.kind)).to.equal(writesBack);
        const owner = await signUp({ target: app, name: 'Salma Idrissi' });
        const shop = 'address' in platform ? platform.address.example : 'https://atlas.ma';
        const base = { kind: platform.kind, name: 'Atlas', shop, ...(platform.signingKey === 'store' ? { secret: 'the-store-key' } : {}) };
        const accepted = [];
        for (const write_back of CREDENTIALS) {
          const res = await owner.agent.post('/api/stores').send({ ...base, write_back });
          if (res.status === 201) accepted.push(res.body.id);
          else expect(res.body.fields, JSON.stringify(res.body)).to.have.property('write_back');
        }
        expect(accepted).to.have.length(writesBack ? 1 : 0);
        const connectionId = accepted[0] ?? (await owner.agent.post('/api/stores').send(base).expect(201)).body.id;
        // Credentials forced in beside the service's rules: the trigger decides by the kind all the same.
        if (!writesBack)
          await testKnex()('store_connections')
            .where({ id: connectionId })
            .update({ write_back: JSON.stringify(CREDENTIALS[0]) });
        const [order] = await testKnex()('orders')
          .insert({
            workspace_id: owner.workspaceId,
            client_name: 'Yassine Alami',
            phone: '+212612345678',
            store_name: 'Atlas',
            products_name: '1 × Tajine',
            status: 'pending',
            source: platform.kind,
            store_connection_id: connectionId,
            external_id: '1001',
          })
          .returning('id');
        await testKnex()('orders').where({ id: order.id }).update({ status: 'confirmed' });
        const jobs = await testKnex()('pgboss.job').where({ name: 'store-write-back' }).whereRaw("data->>'orderId' = ?", [order.id]);
        expect(jobs).to.have.length(writesBack ? 1 : 0);
      });
    }
  });
});
