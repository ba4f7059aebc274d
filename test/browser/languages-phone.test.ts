import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { TEST_ENV } from '../helpers/app';
import { axeViolations, launchChromium, requireChromium, screenshots } from '../helpers/browser';
import type { Dashboard, PageRoute } from '../helpers/dashboard';
import { NOT_PAGES, PAGE_ROUTES, realisticDashboard, SIGNED_OUT } from '../helpers/dashboard';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const PHONE = { width: 390, height: 844 };
/** axe-core's WCAG 2.1 A and AA rules: what the dashboard promises. */

/**
 * Every page of the dashboard (the crawl's list) in French and Arabic on a phone: nothing makes the
 * page scroll sideways, axe-core finds nothing, and a screenshot of each is kept in
 * test-artifacts/screenshots/ (git-ignored) for a person to look at.
 */
describe('every page in French and Arabic at 390 px (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let dashboard: Dashboard;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
    dashboard = await realisticDashboard(server.url);
  });

  after(async () => {
    await browser?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  for (const lng of ['fr', 'ar'] as const) {
    it(`${lng}: no sideways scroll and no axe-core violation on any page; each page's screenshot is saved`, async () => {
      await dashboard.owner.agent.put('/api/account').send({ language: lng }).expect(200);
      // bypassCSP: the pages allow no inline script, and axe-core is one.
      const options = { viewport: PHONE, deviceScaleFactor: 1, bypassCSP: true, baseURL: server!.url, locale: `${lng}-MA`, timezoneId: 'Africa/Casablanca' };
      const owner = await browser!.newContext(options);
      const [name, value] = dashboard.owner.cookie.split('=');
      await owner.addCookies([{ name, value, url: server!.url }]);
      const visitor = await browser!.newContext(options);
      const shoot = screenshots(`languages-${lng}`);
      const problems: Record<string, { sideways?: number; axe?: string[] }> = {};
      try {
        const ownerPage = await owner.newPage();
        const visitorPage = await visitor.newPage();
        for (const route of PAGE_ROUTES) {
          if (NOT_PAGES.includes(route)) continue;
          const page = SIGNED_OUT.includes(route as PageRoute) ? visitorPage : ownerPage;
          for (const [i, url] of dashboard.pages[route].entries()) {
            const res = await page.goto(url);
            expect(res?.status(), url).to.equal(200);
            expect(await page.getAttribute('html', 'lang'), url).to.equal(lng);
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            const axe = await axeViolations(page);
            if (overflow > 0 || axe.length > 0) problems[url] = { ...(overflow > 0 ? { sideways: overflow } : {}), ...(axe.length > 0 ? { axe } : {}) };
            await shoot(page, `${route.replace(/^\//, '').replace(/[/:]+/g, '-') || 'home'}${i > 0 ? `-${i}` : ''}`);
          }
        }
      } finally {
        await owner.close();
        await visitor.close();
      }
      expect(problems).to.deep.equal({});
    });
  }
});
