import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { TEST_ENV } from '../helpers/app';
import { axeViolations, launchChromium, requireChromium } from '../helpers/browser';
import type { Dashboard } from '../helpers/dashboard';
import { NOT_PAGES, PAGE_ROUTES, realisticDashboard, SIGNED_OUT } from '../helpers/dashboard';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const PHONE = { width: 390, height: 844 };

interface Shape {
  /** Distinct rows (top offsets) of the main navigation's links and its menu button. */
  navRows: number;
  /** Phone links and primary buttons smaller than 44 × 44 px, by their text. */
  small: string[];
  /** How far the page scrolls sideways. */
  sideways: number;
}

/** Runs in the page: the navigation's rows, small tap targets, sideways scroll. */
function shape(): Shape {
  const nav = [...document.querySelectorAll('.main-nav > a, .main-nav > details > summary')].filter((el) => el.getBoundingClientRect().width > 0);
  const navRows = new Set(nav.map((el) => Math.round(el.getBoundingClientRect().top / 8))).size;
  const targets = [
    ...document.querySelectorAll(
      'a[href^="tel:"], main button[type="submit"]:not(.link):not(.secondary):not(.danger-text), main a.button, .main-nav > a, .main-nav summary',
    ),
  ];
  const small = targets
    .filter((el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && (r.width < 44 || r.height < 44);
    })
    .map(
      (el) =>
        `${el.tagName.toLowerCase()} "${(el.textContent ?? '').trim().slice(0, 30)}" ${Math.round(el.getBoundingClientRect().width)}×${Math.round(el.getBoundingClientRect().height)}`,
    );
  return { navRows, small, sideways: document.documentElement.scrollWidth - window.innerWidth };
}

/**
 * Every page at 390 px in English, French and Arabic: at most one row of primary navigation (the
 * day's links and a menu), no phone link or primary button under 44 px either way, no sideways
 * scroll, and axe-core's WCAG 2.2 A/AA rules find nothing.
 */
describe('the shape of every page at 390 px, in en, fr and ar (headless Chromium)', function () {
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

  for (const lng of ['en', 'fr', 'ar'] as const) {
    it(`${lng}: one row of navigation, tap targets of 44 px, no sideways scroll, no axe-core violation`, async () => {
      await dashboard.owner.agent.put('/api/account').send({ language: lng }).expect(200);
      // bypassCSP: the pages allow no inline script, and axe-core is one.
      const options = { viewport: PHONE, deviceScaleFactor: 1, bypassCSP: true, baseURL: server!.url, locale: `${lng}-MA`, timezoneId: 'Africa/Casablanca' };
      const owner = await browser!.newContext(options);
      const [name, value] = dashboard.owner.cookie.split('=');
      await owner.addCookies([{ name, value, url: server!.url }]);
      const visitor = await browser!.newContext(options);
      const problems: Record<string, Partial<Shape> & { axe?: string[] }> = {};
      try {
        const ownerPage = await owner.newPage();
        const visitorPage = await visitor.newPage();
        for (const route of PAGE_ROUTES) {
          if (NOT_PAGES.includes(route)) continue;
          const page = SIGNED_OUT.includes(route) ? visitorPage : ownerPage;
          for (const url of dashboard.pages[route]) {
            const res = await page.goto(url);
            expect(res?.status(), url).to.equal(200);
            const found = await page.evaluate(shape);
            const axe = await axeViolations(page);
            const wrong = {
              ...(found.navRows > 1 ? { navRows: found.navRows } : {}),
              ...(found.small.length > 0 ? { small: found.small } : {}),
              ...(found.sideways > 0 ? { sideways: found.sideways } : {}),
              ...(axe.length > 0 ? { axe } : {}),
            };
            if (Object.keys(wrong).length > 0) problems[url] = wrong;
          }
        }
        // The menu opens (no script needed: a <details>), and the integrator pages are under "Developers".
        await ownerPage.goto('/orders');
        await ownerPage.locator('.main-nav summary').click();
        const developers = ownerPage.locator('#menu-developers + ul a');
        expect(await developers.evaluateAll((links) => links.map((a) => a.getAttribute('href')))).to.deep.equal(['/api-keys', '/webhooks', '/docs']);
        expect(await ownerPage.locator('.menu-panel a[href="/agents"]').isVisible()).to.equal(true);
      } finally {
        await owner.close();
        await visitor.close();
      }
      expect(problems).to.deep.equal({});
    });
  }
});
