import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';
import type { Browser, Page } from 'playwright-core';
import type { SignedIn } from '../helpers/app';
import { signUp, TEST_ENV } from '../helpers/app';
import { axeViolations, keptPage, launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { testDatabaseUrl } from '../helpers/db';
import { openAllDay } from '../helpers/loop';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 768 };

/** Long names and cities, Latin and Arabic, as a shop's customers have them. */
const CLIENTS = [
  { clientName: 'Fatima Zahra Benkirane El Idrissi', city: 'Casablanca' },
  { clientName: 'عبد الرحمن الزروالي', city: 'الدار البيضاء' },
  { clientName: 'Mohamed Amine Zeroualiyoussoufi', city: 'Sidi Slimane Moul Al Kifane' },
  { clientName: 'خديجة بنت عبد الله الإدريسي', city: 'القصر الكبير' },
  { clientName: 'Hélène Martin-Dubois', city: 'Marrakech' },
];

/** The order the call page and the order page show: a possible duplicate, with a note and a city. */
const DUPLICATED = {
  clientName: 'Abderrahmane Zeroualiyoussoufi',
  phone: '0710356355',
  storeName: 'Dar Zellige Casablanca',
  productsName: 'Tagine en terre cuite ×2, Théière en argent',
  address: 'Résidence Al Amal, immeuble 12, appartement 4, Hay Mohammadi',
  city: 'Casablanca',
  note: 'Livrer après 18 h, appeler avant de passer. Le client préfère le paiement en espèces à la porte.',
  externalRef: '#2104',
  totalAmount: '1250',
};

/** A shop after some weeks: 60 orders, long names and cities, pairs flagged as possible duplicates (two badges). */
async function seedShop(url: string): Promise<{ owner: SignedIn; orderId: string; callId: string }> {
  const owner = await signUp({ target: url, workspace: 'Dar Atlas', name: 'Karima Alami' });
  await openAllDay(owner);
  const api = owner.agent;
  // The call page's order first: the queue offers the oldest order first.
  const first = (await api.post('/api/orders').send(DUPLICATED).expect(201)).body;
  await api
    .post('/api/orders')
    .send({ ...DUPLICATED, externalRef: '#2104 / 2' })
    .expect(201);
  for (let i = 0; i < 58; i += 1) {
    const client = CLIENTS[i % CLIENTS.length];
    // Every third order repeats the one before (its phone and products): a possible duplicate, two badges.
    const phone = (n: number) => `06${String(20_000_000 + n)}`;
    await api
      .post('/api/orders')
      .send({
        ...client,
        phone: phone(i % 3 === 2 ? i - 1 : i),
        storeName: 'Boutique Atlas Casablanca',
        productsName: i % 3 === 2 || i % 3 === 1 ? 'Huile d’argan 250 ml ×2' : `Babouches taille ${36 + (i % 8)}`,
        externalRef: `#${2200 + i}`,
        totalAmount: String(149 + i * 100),
      })
      .expect(201);
  }
  const call = (await api.post('/api/calls/next').expect(200)).body;
  expect(call.order.id).to.equal(first.id);
  return { owner, orderId: first.id, callId: call.call.id };
}

/**
 * Runs in the page: each word of the names, cities and references a page shows (every `<bdi>`,
 * badge and date in `main`) sits on one line: a word cut in the middle has two line boxes.
 */
function brokenWords(): string[] {
  const broken: string[] = [];
  for (const el of document.querySelectorAll('main bdi, main .badge, main time, main td.client a')) {
    if (el.getClientRects().length === 0) continue;
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      // A line may break at a space or after a hyphen ("Martin-" / "Dubois"): a word is what lies between.
      for (const m of text.matchAll(/[^\s\-\u2010]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index ?? 0);
        range.setEnd(node, (m.index ?? 0) + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return [...new Set(broken)];
}

/** The measures the issue names, printed before → after in the change's note. */
interface Measures {
  firstOrderTop?: number;
  ordersLength50?: number;
  confirmBottom?: number;
  ordersWidthDesktop?: number;
}

describe("a shop's day, laid out: /orders, an order, a call and /stats in fr and ar at 390 and 1366 px (headless Chromium)", function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let shop: Awaited<ReturnType<typeof seedShop>>;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
    shop = await seedShop(server.url);
  });

  after(async () => {
    await releaseChromium(browser);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  /** The owner's page in `lng` at `viewport`: one kept page per language and JavaScript setting (`keptPage`). */
  async function pageFor(lng: 'fr' | 'ar', viewport: { width: number; height: number }, javaScriptEnabled = true): Promise<Page> {
    await shop.owner.agent.put('/api/account').send({ language: lng }).expect(200);
    const options = {
      viewport,
      deviceScaleFactor: 1,
      javaScriptEnabled,
      bypassCSP: true,
      baseURL: server!.url,
      locale: `${lng}-MA`,
      timezoneId: 'Africa/Casablanca',
    };
    return keptPage(browser!, options, shop.owner.cookie);
  }

  const pages = () => ({
    orders: '/orders',
    orders50: '/orders?size=50',
    order: `/orders/${shop.orderId}`,
    call: `/calls/${shop.callId}`,
    stats: '/stats',
  });

  it('measures px to the first order, the 50-order page length, px to the confirm button and the desktop width (printed)', async () => {
    const measures: Measures = {};
    const page = await pageFor('fr', PHONE);
    await page.goto(pages().orders);
    measures.firstOrderTop = await page.evaluate(() =>
      Math.round(document.querySelector('table.orders-list tbody tr')!.getBoundingClientRect().top + window.scrollY),
    );
    await page.goto(pages().orders50);
    expect(await page.locator('table.orders-list tbody tr').count()).to.equal(50);
    measures.ordersLength50 = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.goto(pages().call);
    measures.confirmBottom = await page.evaluate(() =>
      Math.round(document.querySelector('button.outcome.confirmed')!.getBoundingClientRect().bottom + window.scrollY),
    );
    const desktop = await pageFor('fr', DESKTOP);
    await desktop.goto(pages().orders);
    measures.ordersWidthDesktop = await desktop.evaluate(() => document.documentElement.scrollWidth);
    console.log(`      measures (fr): ${JSON.stringify(measures)}`);
  });

  for (const lng of ['fr', 'ar'] as const) {
    for (const [label, viewport] of [
      ['390 px', PHONE],
      ['1366 px', DESKTOP],
    ] as const) {
      it(`${lng}, ${label}: no sideways scroll and no word broken inside a name, a city or a reference; screenshots kept`, async () => {
        const page = await pageFor(lng, viewport);
        const shoot = screenshots(`shop-day-${lng}-${viewport.width}`);
        const problems: Record<string, { sideways?: number; broken?: string[] }> = {};
        for (const [name, url] of Object.entries(pages())) {
          expect((await page.goto(url))?.status(), url).to.equal(200);
          const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          const broken = await page.evaluate(brokenWords);
          if (sideways > 0 || broken.length > 0) problems[url] = { ...(sideways > 0 ? { sideways } : {}), ...(broken.length > 0 ? { broken } : {}) };
          await shoot(page, name);
          // The first screen alone, as a phone shows it: a full page of 50 orders is too long to look at.
          await page.screenshot({
            path: path.join(ROOT, 'test-artifacts', 'screenshots', `shop-day-${lng}-${viewport.width}-screen-${name}.jpg`),
            type: 'jpeg',
            quality: 85,
          });
        }
        expect(problems).to.deep.equal({});
      });
    }

    it(`${lng}, 390 px: the call page shows the customer, the phone link and the confirm button in the first 844 px; the duplicate box's phone reads 07 10 35 63 55, isolated left to right`, async () => {
      const page = await pageFor(lng, PHONE);
      await page.goto(pages().call);
      const top = await page.evaluate(() => {
        const bottom = (selector: string) => Math.round(document.querySelector(selector)!.getBoundingClientRect().bottom + window.scrollY);
        return { name: bottom('h1'), phone: bottom('a.tel.call-button'), confirm: bottom('button.outcome.confirmed') };
      });
      expect(top.name).to.be.at.most(844);
      expect(top.phone).to.be.at.most(844);
      expect(top.confirm).to.be.at.most(844);
      for (const url of [pages().call, pages().order]) {
        await page.goto(url);
        const shown = await page.evaluate(() => {
          const box = document.querySelector('section[aria-labelledby="lookalikes-heading"]')!;
          return [...box.querySelectorAll('bdi, span')]
            .filter((el) => (el.textContent ?? '').includes('07'))
            .map((el) => ({ text: el.textContent, dir: getComputedStyle(el).direction, bidi: getComputedStyle(el).unicodeBidi }));
        });
        expect(shown, url).to.deep.include({ text: '07 10 35 63 55', dir: 'ltr', bidi: 'isolate' });
        expect(await page.locator('section[aria-labelledby="lookalikes-heading"]').textContent(), url).not.to.contain('+212710356355');
      }
    });

    it(`${lng}, 390 px: the filters of /orders are one row (it scrolls by itself, not the page) and the first order is in the first screen`, async () => {
      const page = await pageFor(lng, PHONE, false);
      for (const url of ['/orders', '/orders?q=zerouali']) {
        await page.goto(url);
        const shape = await page.evaluate(() => {
          const chips = [...document.querySelectorAll('.filter-bar .chip')].filter((el) => el.getBoundingClientRect().width > 0);
          const bar = document.querySelector('.filter-bar')!;
          return {
            chips: chips.length,
            rows: new Set(chips.map((el) => Math.round(el.getBoundingClientRect().top))).size,
            scrollsItself: bar.scrollWidth > bar.clientWidth,
            sideways: document.documentElement.scrollWidth - window.innerWidth,
            firstOrderTop: Math.round(document.querySelector('table.orders-list tbody tr')!.getBoundingClientRect().top + window.scrollY),
          };
        });
        expect(shape.chips, url).to.be.greaterThan(5);
        expect(shape, url).to.include({ rows: 1, scrollsItself: true, sideways: 0 });
        expect(shape.firstOrderTop, url).to.be.below(PHONE.height - 100);
      }
    });

    for (const javaScript of [true, false]) {
      it(`${lng}, JavaScript ${javaScript ? 'on' : 'off'}: axe-core finds nothing on /orders, the order page, the call page, /stats, the new-order form and the delete page, at 390 and 1366 px`, async () => {
        const problems: Record<string, string[]> = {};
        for (const viewport of [PHONE, DESKTOP]) {
          const page = await pageFor(lng, viewport);
          // "Off": none of the page's own scripts runs (they are all files; the pages allow no inline
          // script). axe-core, a script itself, cannot run where scripts are disabled, so they are refused instead.
          const refuseScripts = /\.js(\?|$)/;
          if (!javaScript) await page.route(refuseScripts, (route) => route.abort());
          try {
            // The pages this change touched: the amount's hint is on the new-order form, the phone in a sentence on the delete page.
            for (const url of [...Object.values(pages()), '/orders/new', `/orders/${shop.orderId}/delete`, '/orders?q=zerouali']) {
              await page.goto(url);
              const axe = await axeViolations(page);
              if (axe.length > 0) problems[`${url} @${viewport.width}`] = axe;
            }
          } finally {
            if (!javaScript) await page.unroute(refuseScripts);
          }
        }
        expect(problems).to.deep.equal({});
      });
    }
  }
});
