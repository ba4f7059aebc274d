import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import { app, appUrl, csrfFrom } from '../helpers/app';
import type { Dashboard, PageRoute } from '../helpers/dashboard';
import { NOT_PAGES, PAGE_ROUTES, pageRoutesInSource, realisticDashboard, SIGNED_OUT } from '../helpers/dashboard';

type Catalogue = { [key: string]: string | Catalogue };
const catalogue = (lng: string): Catalogue => JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', `${lng}.json`), 'utf8'));
const valuesOf = (tree: Catalogue): string[] => Object.values(tree).flatMap((v) => (typeof v === 'string' ? [v] : valuesOf(v)));
/** Latin words of a text, lower-cased: placeholders and markup left out. */
const latinWords = (text: string) =>
  (
    text
      .replace(/\{\{[^}]*\}\}|<[^>]*>/g, ' ')
      .toLowerCase()
      .match(/[\p{Script=Latin}][\p{Script=Latin}'’]*/gu) ?? []
  ).map((w) => w.replace(/['’]s?$/, ''));

/** Names that stay as they are in every language: brands, products, formats, protocols. */
const BRANDS = [
  'shopify',
  'woocommerce',
  'youcan',
  'wordpress',
  'google',
  'sheets',
  'csv',
  'api',
  'json',
  'url',
  'mad',
  'http',
  'https',
  'openapi',
  'webhook',
  'webhooks',
];
/** English words that are also French words a French page writes. */
const ALLOW = [
  'on',
  'a',
  'de',
  'en',
  'me',
  'page',
  'pages',
  'minute',
  'minutes',
  'client',
  'clients',
  'total',
  'message',
  'messages',
  'date',
  'note',
  'notes',
  'type',
  'code',
  'plan',
];

/**
 * The English words of the catalogue that no French or Arabic text uses, less names and the allow-list.
 * The stores' admin menu names are left out of that comparison: Arabic keeps them in English (the
 * admins have no Arabic), inside `<bdi>`, and they must not hide those words elsewhere.
 */
function englishWords(): Set<string> {
  const translated = (lng: string) => {
    const tree = catalogue(lng);
    const { admin: _admin, ...guide } = tree.storeGuide as Catalogue;
    return valuesOf({ ...tree, storeGuide: guide });
  };
  const elsewhere = new Set(['fr', 'ar'].flatMap((lng) => translated(lng).flatMap(latinWords)));
  const skip = new Set([...BRANDS, ...ALLOW]);
  return new Set(
    valuesOf(catalogue('en'))
      .flatMap(latinWords)
      .filter((w) => !elsewhere.has(w) && !skip.has(w)),
  );
}

/** Removes each element matched by `open` with its content, innermost first (a `<bdi>` may hold another). */
function removeElements(html: string, tag: string, attributes = ''): string {
  const innermost = new RegExp(`<${tag}\\b${attributes}[^>]*>(?:(?!<${tag}\\b)[\\s\\S])*?</${tag}>`, 'gi');
  let out = html;
  for (let before = ''; before !== out; ) {
    before = out;
    out = out.replace(innermost, ' ');
  }
  return out;
}

/** What a person reads on a page that is not data: text, titles and labels of attributes. */
function readableText(html: string): string {
  let text = html;
  for (const tag of ['script', 'style', 'bdi', 'code', 'textarea']) text = removeElements(text, tag);
  // Data cells: what a person typed, shown in its own direction.
  for (const tag of ['td', 'dd', 'div', 'span', 'p', 'option']) text = removeElements(text, tag, '(?=[^>]*dir="auto")');
  text = removeElements(text, 'form', '(?=[^>]*language-switcher)');
  const attributes = [...text.matchAll(/\s(?:title|aria-label|placeholder|alt)="([^"]*)"/g)].map((m) => m[1]);
  return [...attributes, text.replace(/<[^>]*>/g, ' ')]
    .join(' ')
    .replace(/[\u2066\u2067\u2068][^\u2069]*\u2069/g, ' ')
    .replace(/&[a-z#0-9]+;/gi, ' ');
}

const htmlTag = (html: string) => /<html[^>]*>/.exec(html)?.[0];

describe('languages: no English on any page in French and Arabic (a crawl with realistic data)', function () {
  this.timeout(120_000);
  let dashboard: Dashboard;
  const english = englishWords();

  before(async () => {
    dashboard = await realisticDashboard(app());
  });

  it('the crawl lists every GET route of routes/pages/*.ts, and each has an address', () => {
    expect([...pageRoutesInSource()].sort()).to.deep.equal([...PAGE_ROUTES].sort());
    for (const route of PAGE_ROUTES) expect(dashboard.pages[route], route).to.have.length.above(0);
  });

  it('the word list is a real one: English words of the catalogue, none of the brands', () => {
    expect([...english]).to.include.members(['orders', 'confirmed', 'store', 'delete', 'save', 'settings']);
    expect([...english]).not.to.include.members(['shopify', 'csv']);
  });

  for (const [lng, dir] of [
    ['fr', null],
    ['ar', 'rtl'],
  ] as const) {
    it(`${lng}: every page has <html lang="${lng}"${dir ? ` dir="${dir}"` : ''}> and no English word outside data`, async () => {
      const visitor = request.agent(appUrl());
      await visitor.post('/account/language').type('form').send({ language: lng }).expect(303);
      await dashboard.owner.agent.put('/api/account').send({ language: lng }).expect(200);
      const found: Record<string, string> = {};
      for (const route of PAGE_ROUTES) {
        if (NOT_PAGES.includes(route)) continue;
        const agent = SIGNED_OUT.includes(route as PageRoute) ? visitor : dashboard.owner.agent;
        for (const url of dashboard.pages[route]) {
          const res = await agent.get(url);
          expect(res.status, url).to.equal(200);
          expect(htmlTag(res.text), url).to.equal(dir ? `<html lang="${lng}" dir="${dir}">` : `<html lang="${lng}">`);
          const words = [...new Set(latinWords(readableText(res.text)).filter((w) => english.has(w)))];
          if (words.length > 0) found[url] = words.join(' ');
        }
      }
      expect(found).to.deep.equal({});
    });

    it(`${lng}: form errors and notices (a store refused, disabled, enabled; a file not imported) and a rejected order's reason`, async () => {
      const owner = dashboard.owner.agent;
      await owner.put('/api/account').send({ language: lng }).expect(200);
      const form = await owner.get('/stores/new').expect(200);
      const pages: Record<string, string> = {};
      pages.storeRefused = (
        await owner
          .post('/stores')
          .type('form')
          .send({ _csrf: csrfFrom(form.text), kind: 'shopify', name: '', shop: 'atlas.example', secret: '' })
          .expect(400)
      ).text;
      const storePage = dashboard.pages['/stores/:id'][0];
      const shown = await owner.get(storePage).expect(200);
      for (const enabled of ['false', 'true']) {
        pages[`store enabled=${enabled}`] = (
          await owner
            .post(`${storePage}/enabled`)
            .type('form')
            .send({ _csrf: csrfFrom(shown.text), enabled })
            .redirects(1)
            .expect(200)
        ).text;
      }
      const files = { header: 'name;city\r\nAli;Fès\r\n', empty: '\r\n', unclosed: 'client_name,phone,products\r\n"Ali,0612345678,Thé\r\n' };
      for (const [name, file] of Object.entries(files)) {
        const page = await owner.get('/orders/import').expect(200);
        pages[`import ${name}`] = (
          await owner
            .post('/orders/import')
            .field('_csrf', csrfFrom(page.text))
            .attach('file', Buffer.from(file), { filename: 'orders.csv', contentType: 'text/csv' })
            .expect(400)
        ).text;
      }
      const found: Record<string, string> = {};
      for (const [name, html] of Object.entries(pages)) {
        expect(html, name).to.match(/<p class="(notice|error-box)" role="(status|alert)"/);
        const words = [...new Set(latinWords(readableText(html)).filter((w) => english.has(w)))];
        if (words.length > 0) found[name] = words.join(' ');
      }
      expect(found).to.deep.equal({});
    });
  }
});
