import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { signUp, TEST_ENV } from '../helpers/app';
import { checkPagesIn, launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

/**
 * Issue 56's pages without JavaScript, at 390 px and on a desktop, in en, fr and ar: the shift toggle
 * in the navigation, the Team page (assignment, shares, pay rules, stores), the Pay view and saved
 * parcels on /stats/team, the orders list with its assignees and the owner's selection, and a
 * follow-up call's page. Each answers 200 in its language, never scrolls sideways, the toggle sits
 * in the navigation's one row and posts without JavaScript, and axe-core finds nothing.
 */
describe('the team pages without JavaScript, at 390 px and on a desktop (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let cookie: string;
  let pages: string[];

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
    const owner = await signUp({ target: server.url, name: 'Amina Benali', workspace: 'Dar Atlas' });
    const member = await signUp({ target: server.url, invitedBy: owner, name: 'Nadia Berrada' });
    cookie = owner.cookie;
    const api = owner.agent;
    await api
      .put('/api/settings/calls')
      .send({ callingHours: { start: '00:00', end: '24:00' } })
      .expect(200);
    await api.put('/api/settings/team').send({ assignment: 'weighted', reserveMinutes: 20 }).expect(200);
    await api
      .put(`/api/team/${owner.userId}`)
      .send({ share: 60, pay: { fixed: 3000 } })
      .expect(200);
    await api
      .put(`/api/team/${member.userId}`)
      .send({ share: 40, pay: { fixed: 1500, perDelivered: 10 } })
      .expect(200);
    await api
      .put('/api/settings/team/stores')
      .send({ storeName: 'Pâtisserie Élise', userIds: [member.userId] })
      .expect(200);
    // A parcel in trouble: confirmed by a call, shipped, the courier could not deliver.
    const parcel = (
      await api
        .post('/api/orders')
        .send({ clientName: 'Fatima Zahra El Idrissi', phone: '06 12 34 56 78', storeName: 'Atlas', productsName: 'Huile d’argan', totalAmount: 349 })
        .expect(201)
    ).body;
    const confirm = (await api.post('/api/calls/next').expect(200)).body;
    await api.post(`/api/calls/${confirm.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    await api
      .put(`/api/orders/${parcel.id}/delivery`)
      .send({ status: 'shipped', carrier: 'Amana', trackingNumber: 'AM123', at: new Date(Date.now() - 86_400_000).toISOString() })
      .expect(200);
    await api.put(`/api/orders/${parcel.id}/delivery`).send({ status: 'attempted', carrierStatus: 'Client injoignable' }).expect(200);
    await api.put('/api/me/shift').send({ on: true }).expect(200);
    await member.agent.put('/api/me/shift').send({ on: true }).expect(200);
    const followUp = (await api.post('/api/calls/next').expect(200)).body;
    expect(followUp.order.id).to.equal(parcel.id);
    for (const [i, name] of ['Omar Tazi', 'يوسف العلوي', 'Hélène Martin'].entries())
      await api
        .post('/api/orders')
        .send({ clientName: name, phone: `066123456${i}`, storeName: i === 1 ? 'Pâtisserie Élise' : 'Atlas', productsName: 'Babouches' })
        .expect(201);
    pages = ['/team', '/stats/team', `/calls/${followUp.call.id}`, '/orders', '/orders?assignee=mine', `/orders/${parcel.id}`];
  });

  after(async () => {
    await releaseChromium(browser);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  for (const [label, viewport] of [
    ['phone', { width: 390, height: 844 }],
    ['desktop', { width: 1280, height: 860 }],
  ] as const) {
    for (const lng of ['en', 'fr', 'ar'] as const) {
      it(`${label}, ${lng}: each page in its language, no sideways scroll, the day's links in one row with the toggle beside or under them, nothing cut off, axe-core finds nothing`, async () => {
        const shot = screenshots(`team-${label}-${lng}`);
        await checkPagesIn(browser!, { baseURL: server!.url, cookie, viewport, lng, paths: pages }, async (page, path) => {
          // The primary links and the menu share one row (the toggle too on a desktop; a line of its own
          // on a phone), nothing overlaps or is cut off, and the toggle is at least 44 px tall.
          const shape = await page.evaluate(() => {
            const nav = document.querySelector('.main-nav')!;
            const links = [...nav.querySelectorAll(':scope > a, :scope > details > summary')].map((el) => el.getBoundingClientRect());
            const button = document.querySelector('button.shift')!.getBoundingClientRect();
            const row = [...links, button].filter((b) => Math.abs(b.top - links[0].top) < 8).sort((a, b) => a.left - b.left);
            const overlap = row.some((b, i) => i > 0 && b.left < row[i - 1].right - 0.5);
            const scrolls = [...nav.querySelectorAll(':scope > a, :scope > details > summary, button.shift')].some((el) => el.scrollWidth > el.clientWidth + 1);
            return {
              rows: new Set(links.map((b) => Math.round(b.top))).size,
              height: button.height,
              inside: button.left >= 0 && button.right <= window.innerWidth,
              overlap,
              scrolls,
            };
          });
          expect(shape.rows, path).to.equal(1);
          expect(shape.overlap, path).to.equal(false);
          expect(shape.scrolls, path).to.equal(false);
          expect(shape.inside, path).to.equal(true);
          expect(shape.height, path).to.be.at.least(44);
          await shot(page, path.replace(/[^a-z]+/g, '-').replace(/^-|-$/g, '') || 'root');
        });
      });
    }
  }

  it('without JavaScript: one tap on the toggle takes the owner off shift and back, on the page it was tapped', async () => {
    const [name, value] = cookie.split('=');
    const context = await browser!.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false, baseURL: server!.url });
    try {
      await context.addCookies([{ name, value, url: server!.url }]);
      const page = await context.newPage();
      await page.goto('/stats/team');
      expect(await page.locator('button.shift').getAttribute('aria-pressed')).to.equal('true');
      await page.locator('button.shift').click();
      await page.waitForURL('**/stats/team');
      expect(await page.locator('button.shift').getAttribute('aria-pressed')).to.equal('false');
      await page.locator('button.shift').click();
      await page.waitForURL('**/stats/team');
      expect(await page.locator('button.shift').getAttribute('aria-pressed')).to.equal('true');
    } finally {
      await context.close();
    }
  });
});
