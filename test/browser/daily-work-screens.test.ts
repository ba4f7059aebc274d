import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ROOT } from '../../config';
import { TEST_ENV, uniqueEmail } from '../helpers/app';
import { launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { testKnex } from '../helpers/db';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

/**
 * The staff's daily work at phone width, in French and Arabic: the orders list (one compact row per order,
 * where you are, phones grouped and 44 px to tap), the order form (amount, currency, city, note) and
 * the import result (encoding read, ignored columns, line errors). The pictures go to
 * docs/screenshots/ for a person to look at.
 */
const SHOTS = path.join(ROOT, 'docs', 'screenshots');
const PHONE = { width: 390, height: 844 };

const ORDERS = [
  {
    clientName: 'فاطمة الزهراء',
    phone: '06 12 34 56 78',
    storeName: 'Atlas',
    productsName: 'Huile d’argan',
    city: 'الدار البيضاء',
    totalAmount: '349.00',
    externalRef: '#1001',
  },
  { clientName: 'Omar Tazi', phone: '+212 7 12 34 56 78', storeName: 'Atlas', productsName: 'Babouches, 42', city: 'Rabat', totalAmount: '2490.00' },
  { clientName: 'Hélène Martin', phone: '0661234567', storeName: 'Atlas', productsName: 'Savon noir', city: 'Fès' },
];

/** What French Excel writes: Windows-1252, semicolons, a no-break space in the amounts, columns we do not read. */
const FILE = Buffer.from(
  'Nom;Téléphone;Boutique;Produit;Ville;Montant;Date de commande;Livreur;Poids\r\n' +
    'Zoé Benali;06 12 34 56 78;Atlas;Argan;Marrakech;2\u00a0490,00;24/11/2026 14:30;Amana;2 kg\r\n' +
    'Karim;0698765432;Atlas;Savon;Agadir;douze;31/02/2026;;\r\n',
  'latin1',
);

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Whether, as drawn, the first `first` of the element's text sits to the left of the first `then` after it. */
async function leftOf(page: Page, selector: string, first: string, then: string): Promise<boolean> {
  return (await drawn(page, selector, first, then)).left;
}

/** Where the first `first` of the element's text and the first `then` after it are drawn: same line, first on the left. */
async function drawn(page: Page, selector: string, first: string, then: string): Promise<{ sameLine: boolean; left: boolean }> {
  return page.locator(selector).evaluate(
    (el, [a, b]) => {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        const i = text.indexOf(a);
        const j = text.indexOf(b, i + a.length);
        if (i < 0 || j < 0) continue;
        const at = (start: number, length: number) => {
          const range = document.createRange();
          range.setStart(node!, start);
          range.setEnd(node!, start + length);
          return range.getBoundingClientRect();
        };
        const [x, y] = [at(i, a.length), at(j, b.length)];
        // On one line, left of it; on the next line, a line below it.
        const sameLine = Math.abs(x.top - y.top) < 2;
        return { sameLine, left: sameLine ? x.left < y.left : x.top < y.top };
      }
      throw new Error(`"${a}" then "${b}" not found in ${el.textContent}`);
    },
    [first, then],
  );
}

/** No element wider than the phone: nothing to scroll sideways. */
async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width, `${what}: page width`).to.be.at.most(PHONE.width);
}

describe('daily work at phone width, in French and Arabic (screenshots)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
    fs.mkdirSync(SHOTS, { recursive: true });
  });

  after(async () => {
    await context?.close();
    await releaseChromium(browser);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('the list, the order form and the import result in fr and ar', async () => {
    context = await browser!.newContext({ viewport: PHONE, deviceScaleFactor: 1, baseURL: server!.url, locale: 'fr-MA', timezoneId: 'Africa/Casablanca' });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto('/signup');
    await page.locator('#f-name').fill('Salma Idrissi');
    await page.locator('#f-email').fill(uniqueEmail('salma'));
    await page.locator('#f-password').fill('correct horse battery');
    await page.locator('#f-workspace').fill('Boutique Atlas');
    await Promise.all([page.waitForURL('**/orders'), page.locator('form button[type="submit"]').first().click()]);
    const api = context.request;
    expect((await api.post('/api/agents', { data: { name: 'Youssef', orderHandler: true } })).status()).to.equal(201);
    for (const order of ORDERS) expect((await api.post('/api/orders', { data: order })).status()).to.equal(201);

    for (const language of ['fr', 'ar'] as const) {
      expect((await api.put('/api/account', { data: { language } })).status()).to.equal(200);

      await page.goto('/orders?size=25');
      await expectNoSidewaysScroll(page, `${language} list`);
      const rows = page.locator('table.orders-list tbody tr');
      expect(await rows.count()).to.be.at.least(ORDERS.length);
      for (let i = 0; i < ORDERS.length; i += 1) {
        const box = (await rows.nth(i).boundingBox())!;
        expect(box.height, `${language}: a compact row`).to.be.below(110);
        const tel = (await rows.nth(i).locator('a.tel').boundingBox())!;
        expect(tel.height, `${language}: tel link height`).to.be.at.least(44);
        expect(tel.width, `${language}: tel link width`).to.be.at.least(44);
      }
      expect(await rows.first().locator('a.tel').innerText()).to.match(/^0\d( \d\d){4}$/);
      expect(await page.locator('p.range').innerText()).to.match(language === 'fr' ? /^1–\d+ sur \d+$/ : /^1–\d+ من \d+$/);
      await shoot(page, `daily-work-list-${language}`);

      await page.goto('/orders/new');
      await page.locator('#f-client_name').fill('Imane');
      await page.locator('#f-phone').fill('0612');
      await page.locator('#f-total_amount').fill('1 250,00');
      await page.locator('#f-city').fill('Marrakech');
      await page.locator('#f-note').fill('Après 18h');
      await page.locator('form.card button[type="submit"]').click();
      await page.waitForSelector('.error');
      await expectNoSidewaysScroll(page, `${language} form`);
      expect(await page.locator('#f-total_amount').inputValue()).to.equal('1 250,00');
      const errors = await page.locator('p.error').allInnerTexts();
      for (const error of errors) expect(error, language).not.to.match(/ is required| must be /);
      await shoot(page, `daily-work-form-${language}`);

      await page.goto('/orders/import');
      await page.locator('#f-file').setInputFiles({ name: 'commandes.csv', mimeType: 'text/csv', buffer: FILE });
      await Promise.all([page.waitForLoadState('load'), page.locator('form[enctype] button[type="submit"]').click()]);
      await page.waitForSelector('[role="status"]');
      await expectNoSidewaysScroll(page, `${language} import`);
      const text = await page.locator('main').innerText();
      expect(text).to.contain(language === 'fr' ? 'Windows-1252 (Excel en français)' : 'Windows-1252');
      expect(text).to.contain('Livreur');
      expect(text).not.to.match(/must be|Enter a valid/);
      await shoot(page, `daily-work-import-${language}`);
    }
  });
  for (const language of ['fr', 'ar'] as const) {
    it(`${language}: the first hour and a call — the empty list, the first-order form, the queue, the call page and the agents page (test-artifacts/screenshots/first-hour-${language}-*)`, async () => {
      const own = await browser!.newContext({
        viewport: PHONE,
        deviceScaleFactor: 1,
        baseURL: server!.url,
        locale: `${language}-MA`,
        timezoneId: 'Africa/Casablanca',
      });
      const shot = screenshots(`first-hour-${language}`);
      try {
        const page = await own.newPage();
        page.setDefaultTimeout(10_000);
        await page.goto('/signup');
        expect(await page.getAttribute('html', 'lang')).to.equal(language);
        const email = uniqueEmail('owner');
        await page.locator('#f-name').fill(language === 'fr' ? 'Imane Alaoui' : 'إيمان العلوي');
        await page.locator('#f-email').fill(email);
        await page.locator('#f-password').fill('correct horse battery');
        await page.locator('#f-workspace').fill(language === 'fr' ? 'Dar Imane' : 'دار إيمان');
        await Promise.all([page.waitForURL('**/orders'), page.locator('form button[type="submit"]').first().click()]);
        await shot(page, 'empty-list');
        await expectNoSidewaysScroll(page, `${language} empty list`);

        // The empty list's invitation leads to a form that takes the order.
        await Promise.all([page.waitForURL('**/orders/new'), page.locator('.card.empty a.button').click()]);
        expect(await page.locator('main [role="note"]').count(), 'no detour to /agents').to.equal(0);
        // The examples in the hints read left to right, in Arabic too: "06" before "78", "1" before "250,00".
        expect(await leftOf(page, '#f-phone-hint', '06', '78')).to.equal(true);
        expect(await leftOf(page, '#f-total_amount-hint', '1', '250,00')).to.equal(true);
        // A number is not cut at the end of a line: "+212 6 12" above, "34 56 78" below, was.
        expect((await drawn(page, '#f-phone-hint', '+212', '78')).sameLine).to.equal(true);
        await shot(page, 'first-order-form');
        await expectNoSidewaysScroll(page, `${language} first-order form`);
        await page.locator('#f-client_name').fill(language === 'fr' ? 'Youssef Tazi' : 'يوسف التازي');
        await page.locator('#f-phone').fill('06 12 34 56 78');
        await page.locator('#f-store_name').fill('Souk');
        await page.locator('#f-products_name').fill(language === 'fr' ? 'Huile d’argan ×2' : 'زيت أركان ×2');
        await Promise.all([page.waitForURL('**/orders'), page.locator('form.card button[type="submit"]').click()]);
        const [order] = await testKnex()('orders as o')
          .join('workspace_members as m', 'm.workspace_id', 'o.workspace_id')
          .join('users as u', 'u.id', 'm.user_id')
          .where('u.email', email)
          .select('o.id', 'o.status');
        expect(order.status).to.equal('pending');
        await shot(page, 'list');

        expect((await own.request.put('/api/settings/calls', { data: { callingHours: { start: '00:00', end: '24:00' } } })).status()).to.equal(200);
        await page.goto('/calls');
        await shot(page, 'queue');
        // The calling hours on one line: not cut after the dash.
        expect(await page.locator('.stat.hours dd bdi').evaluate((el) => el.getClientRects().length)).to.equal(1);
        await expectNoSidewaysScroll(page, `${language} queue`);
        await Promise.all([page.waitForURL(/\/calls\/[0-9a-f-]{36}$/), page.locator('form[action="/calls/next"] button[type="submit"]').click()]);
        await shot(page, 'call');
        await expectNoSidewaysScroll(page, `${language} call`);
        await page.locator('details:has(#f-callback_at) > summary').click();
        await shot(page, 'call-back-later');

        await page.goto('/agents');
        await shot(page, 'agents');
        await expectNoSidewaysScroll(page, `${language} agents`);
        expect(await page.locator('main').innerText()).to.contain(language === 'fr' ? 'Équipe Dar Imane' : 'فريق دار إيمان');

        // The calling hours closed: the queue says when they open and its button waits.
        expect((await own.request.put('/api/settings/calls', { data: { callingHours: { start: '00:00', end: '00:30' } } })).status()).to.equal(200);
        await page.goto('/calls');
        await shot(page, 'queue-closed');
      } finally {
        await own.close();
      }
    });
  }
});
