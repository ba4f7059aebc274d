import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { createServices } from '../../services';
import { signUp, TEST_ENV } from '../helpers/app';
import { axeViolations, keptPage, launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import { createOrder, ORDER } from '../helpers/loop';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const VIEWPORTS = { phone: { width: 390, height: 844 }, desktop: { width: 1366, height: 768 } };

/**
 * Issue 53's pages that changed for calls, statistics and stores, in French and Arabic, at 390 px and
 * 1366 px, on a server without Shopify's or YouCan's app credentials: the order page telling of a
 * call left open, the call page after a second "Start next call", /stats and /stats/team with what
 * their "confirmed" counts, and /stores/new offering the manual way. Each page fits its width (no
 * sideways scroll), is axe-core clean, and is kept as a screenshot under test-artifacts/.
 */
describe('issue 53: calls, statistics and stores pages in fr and ar, at 390 px and 1366 px (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl(), WORKER: 'off' }), launchChromium()]);
  });

  after(async () => {
    await releaseChromium(browser);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  for (const language of ['fr', 'ar'] as const) {
    it(`${language}: the pages fit, are axe-clean, and say what changed`, async () => {
      const owner = await signUp({ target: server!.url, name: language === 'ar' ? 'يوسف العمراني' : 'Karima Bennani' });
      await owner.agent.put('/api/account').send({ language }).expect(200);
      await owner.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
      await owner.agent
        .put('/api/settings/calls')
        .send({ callingHours: { start: '00:00', end: '24:00' } })
        .expect(200);
      // An order whose call was left open past its claim, and went back to the queue.
      const left = await createOrder(owner, { ...ORDER, clientName: 'Fatima Zahra El Idrissi' });
      const claim = await owner.agent.post('/api/calls/next').expect(200);
      await testKnex()('calls')
        .where({ id: claim.body.call.id })
        .update({ claim_expires_at: new Date(Date.now() - 1000) });
      await createServices(testKnex(), loadConfig({ ...TEST_ENV }), new Jobs(testKnex())).sweep.run();
      // Another order confirmed by a call, one by a person: the statistics have something to show.
      const confirmed = await owner.agent.post('/api/calls/next').expect(200);
      await owner.agent.post(`/api/calls/${confirmed.body.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
      const byHand = await createOrder(owner, { ...ORDER, clientName: 'Omar Tazi', phone: '0661234567' });
      await owner.agent.put(`/api/orders/${byHand.id}`).send({ status: 'confirmed' }).expect(200);
      await createOrder(owner, { ...ORDER, clientName: 'Hajar Alaoui', phone: '0662345678' });

      for (const [size, viewport] of Object.entries(VIEWPORTS)) {
        // bypassCSP: axe-core is injected as a script, which the pages' policy would refuse.
        // One kept page per language, its viewport set for each size (`keptPage`).
        const page = await keptPage(
          browser!,
          { viewport, deviceScaleFactor: 1, bypassCSP: true, baseURL: server!.url, locale: `${language}-MA`, timezoneId: 'Africa/Casablanca' },
          owner.cookie,
        );
        const shoot = screenshots(`issue53-calls-${language}-${size}`);
        /** Opens a page (or takes the one a click led to), checks its width and axe, and keeps a picture. */
        const check = async (label: string, path?: string) => {
          if (path) await page.goto(`${server!.url}${path}`);
          expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), `${label} scrolls sideways`).to.equal(0);
          expect(await axeViolations(page), label).to.deep.equal([]);
          await shoot(page, label);
        };

        await check('order-left-open', `/orders/${left.id}`);
        expect(await page.locator('.left-open').count()).to.equal(1);

        // "Start next call" twice: the second goes back to the first call, saying so.
        await page.goto(`${server!.url}/calls`);
        await Promise.all([page.waitForURL(/\/calls\/[0-9a-f-]{36}$/), page.locator('form.calls-start button[type=submit]').click()]);
        const first = page.url();
        await page.goto(`${server!.url}/calls`);
        await Promise.all([page.waitForURL(/\/calls\/[0-9a-f-]{36}$/), page.locator('form.calls-start button[type=submit]').click()]);
        expect(page.url()).to.equal(first);
        await check('call-resumed');
        expect(await page.locator('.notice').count()).to.equal(1);

        await check('stats', '/stats');
        expect(await page.locator('#confirmed-counts a').count()).to.equal(1);
        await check('stats-team', '/stats/team');
        expect(await page.locator('#confirmed-counts a').count()).to.equal(1);
        await check('stores-shopify', '/stores/new?kind=shopify');
        expect(await page.locator('form[action="/stores"]').count()).to.equal(1);
        expect(await page.locator('form[action="/stores/connect"]').count()).to.equal(0);
        await check('stores-youcan', '/stores/new?kind=youcan');
        expect(await page.locator('#youcan-unavailable a[href="/orders/import"]').count()).to.equal(1);
      }
    });
  }
});
