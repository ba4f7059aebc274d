import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ROOT } from '../../config';
import { TEST_ENV, uniqueEmail } from '../helpers/app';
import { launchChromium, releaseChromium, requireChromium } from '../helpers/browser';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

/** The README's pictures, remade on every run so that they show the pages as they are. */
const README_SCREENSHOTS = path.join(ROOT, 'docs', 'screenshots');
const PHONE = { width: 390, height: 844 };

const ORDERS = [
  { clientName: 'فاطمة الزهراء', phone: '06 12 34 56 78', storeName: 'Pâtisserie Élise', productsName: 'Crème brûlée ×2', address: 'Derb Sultan, Casablanca' },
  { clientName: 'Omar Tazi', phone: '+212 7 12 34 56 78', storeName: 'Atlas', productsName: 'Babouches, size 42', address: 'Hay Riad, Rabat' },
  { clientName: 'Hélène Martin', phone: '0661234567', storeName: 'Atlas', productsName: 'Argan oil x2' },
  { clientName: 'Youssef Alaoui', phone: '0522123456', storeName: 'Dar Zellige', productsName: 'Tagine pot' },
];

/** PNG width and height, from the IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const header = fs.readFileSync(file).subarray(0, 24);
  return { width: header.readUInt32BE(16), height: header.readUInt32BE(20) };
}

async function shoot(page: Page, name: string): Promise<string> {
  const file = path.join(README_SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

describe('the README screenshots (docs/screenshots/)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
    fs.mkdirSync(README_SCREENSHOTS, { recursive: true });
  });

  after(async () => {
    await context?.close();
    await releaseChromium(browser);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('the orders list and the call page, at phone width', async () => {
    context = await browser!.newContext({ viewport: PHONE, deviceScaleFactor: 1, baseURL: server!.url, locale: 'en-MA', timezoneId: 'Africa/Casablanca' });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);

    await page.goto('/signup');
    await page.getByLabel('Your name').fill('Salma Idrissi');
    await page.getByLabel('Email').fill(uniqueEmail('salma'));
    await page.getByLabel('Password (8 characters or more)').fill('correct horse battery');
    await page.getByLabel('Shop / workspace name').fill('Boutique Atlas');
    await Promise.all([page.waitForURL('**/orders'), page.getByRole('button', { name: 'Sign up' }).click()]);

    // The rest of the setup through the session API, with the page's own cookie.
    const api = context.request;
    expect((await api.post('/api/agents', { data: { name: 'Youssef', orderHandler: true } })).status()).to.equal(201);
    expect((await api.put('/api/settings/calls', { data: { callingHours: { start: '00:00', end: '24:00' } } })).status()).to.equal(200);
    for (const order of ORDERS) expect((await api.post('/api/orders', { data: order })).status()).to.equal(201);

    await page.goto('/orders');
    expect(await page.locator('tbody tr').count()).to.equal(ORDERS.length);
    const orders = await shoot(page, 'orders');

    await page.goto('/calls');
    await Promise.all([page.waitForURL(/\/calls\/[0-9a-f-]{36}$/), page.getByRole('button', { name: 'Start next call' }).click()]);
    expect(await page.locator('main').innerText()).to.contain('One tap saves the outcome, with the amount above, and opens the next call.');
    const call = await shoot(page, 'call-page');

    for (const file of [orders, call]) expect(pngSize(file)).to.deep.equal(PHONE);
  });
});
