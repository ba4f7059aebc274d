import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { signUp, TEST_ENV } from '../helpers/app';
import { checkPagesIn, launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { senditDouble, SENDIT_KEYS } from '../helpers/carrier-doubles';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

/**
 * The carrier pages without JavaScript, at 390 px and on a desktop, in en, fr and ar: the accounts
 * with the form of a carrier, the ship page with its preselected orders, and a shipment with an
 * order whose city needs a choice. Each answers 200 in its language, never scrolls sideways, and
 * axe-core finds nothing.
 */
describe('the carrier pages without JavaScript, at 390 px and on a desktop (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let sendit: Awaited<ReturnType<typeof senditDouble>> | undefined;
  let cookie: string;
  let pages: string[];

  before(async function () {
    requireChromium(this);
    sendit = await senditDouble();
    [server, browser] = await Promise.all([
      startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl(), SENDIT_API_ORIGIN: sendit.url, WORKER: 'off' }),
      launchChromium(),
    ]);
    const owner = await signUp({ target: server.url, name: 'Karima Bennani', workspace: 'Dar Atlas' });
    cookie = owner.cookie;
    const account = await owner.agent
      .post('/api/carrier-accounts')
      .send({ kind: 'sendit', name: 'Sendit — Fès Médina', credentials: SENDIT_KEYS, pickup_city_id: '3' })
      .expect(201);
    const ids: string[] = [];
    for (const [clientName, city] of [
      ['Fatima Zahra El Idrissi Benjelloun', 'Fès'],
      ['Youssef Amrani', 'Fes Jdid'],
      ['سارة العلوي', 'الرباط'],
    ]) {
      const { body } = await owner.agent
        .post('/api/orders')
        .send({ clientName, phone: '0612345678', storeName: 'Atlas', productsName: 'Babouches', totalAmount: '249.00', city, address: 'Derb Sultan' })
        .expect(201);
      await owner.agent.put(`/api/orders/${body.id}`).send({ status: 'confirmed' }).expect(200);
      ids.push(body.id);
    }
    const shipped = await owner.agent
      .post('/api/shipments')
      .send({ accountId: account.body.id, orderIds: ids.slice(0, 2) })
      .expect(202);
    // One parcel sent (its tracking number shown), one waiting for its city.
    const [first] = await testKnex()('parcels').where({ shipment_id: shipped.body.shipment_id, state: 'queued' }).select('id');
    await testKnex()('parcels').where({ id: first.id }).update({ state: 'sent', tracking: 'SD100001' });
    pages = ['/deliveries/carriers', '/deliveries/carriers?kind=digylog', '/orders/ship', `/shipments/${shipped.body.shipment_id}`];
  });

  after(async () => {
    await releaseChromium(browser);
    await sendit?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  for (const [label, viewport] of [
    ['phone', { width: 390, height: 844 }],
    ['desktop', { width: 1366, height: 768 }],
  ] as const) {
    for (const lng of ['en', 'fr', 'ar'] as const) {
      it(`${label}, ${lng}: each page in its language, no sideways scroll, axe-core finds nothing`, async () => {
        const shoot = screenshots(`shipping-${label}-${lng}`);
        await checkPagesIn(browser!, { baseURL: server!.url, cookie, viewport, lng, paths: pages }, (page, path) =>
          shoot(
            page,
            path
              .split('/')
              .filter(Boolean)
              .join('-')
              .replace(/[^\w-]/g, '_')
              .slice(0, 40),
          ),
        );
        // With JavaScript, the carrier's long list of cities is searchable: "فاس" or "FÈS" picks Fes.
        const [name, value] = cookie.split('=');
        const scripted = await browser!.newContext({ viewport, baseURL: server!.url });
        try {
          await scripted.addCookies([{ name, value, url: server!.url }]);
          const page = await scripted.newPage();
          await page.goto(pages[3]);
          await page
            .locator('input.select-search')
            .first()
            .fill(lng === 'ar' ? 'فاس' : 'FÈS');
          expect(await page.locator('select[data-searchable]').first().inputValue()).to.equal('3');
        } finally {
          await scripted.close();
        }
      });
    }
  }
});
