import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { TEST_ENV } from '../helpers/app';
import { axeViolations, launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import type { Dashboard } from '../helpers/dashboard';
import { NOT_PAGES, PAGE_ROUTES, realisticDashboard, SIGNED_OUT } from '../helpers/dashboard';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const PHONE = { width: 390, height: 844 };
type Language = 'en' | 'fr' | 'ar';

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

/** What one page showed in one language: its answer, its `lang`, its shape and axe-core's violations. */
interface Seen extends Shape {
  status: number | undefined;
  lang: string | null;
  axe: string[];
}

/** One language's walk: every page as the crawl lists it, and the menu's Developers links. */
interface Walk {
  pages: Map<string, Seen>;
  developers: Array<string | null>;
  agentsInMenu: boolean;
}

/**
 * Every page of the dashboard at 390 px, walked once per language: each page is loaded once, and
 * every check below reads what that one load showed (the two suites used to load each page in
 * French and Arabic twice, once each).
 */
describe('every page at 390 px in Chromium (one walk per language)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let dashboard: Dashboard;
  const walks = new Map<Language, Promise<Walk>>();

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
    dashboard = await realisticDashboard(server.url);
  });

  after(async () => {
    await releaseChromium(browser);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  /** Walks the pages in `lng` (once: later calls share the first walk); French and Arabic keep each page's screenshot. */
  function walk(lng: Language): Promise<Walk> {
    let done = walks.get(lng);
    if (!done) {
      done = walkIn(lng);
      walks.set(lng, done);
    }
    return done;
  }

  async function walkIn(lng: Language): Promise<Walk> {
    await dashboard.owner.agent.put('/api/account').send({ language: lng }).expect(200);
    // bypassCSP: the pages allow no inline script, and axe-core is one.
    const options = { viewport: PHONE, deviceScaleFactor: 1, bypassCSP: true, baseURL: server!.url, locale: `${lng}-MA`, timezoneId: 'Africa/Casablanca' };
    const owner = await browser!.newContext(options);
    const [name, value] = dashboard.owner.cookie.split('=');
    await owner.addCookies([{ name, value, url: server!.url }]);
    const visitor = await browser!.newContext(options);
    const shoot = lng === 'en' ? undefined : screenshots(`languages-${lng}`);
    const pages = new Map<string, Seen>();
    try {
      const ownerPage = await owner.newPage();
      const visitorPage = await visitor.newPage();
      for (const route of PAGE_ROUTES) {
        if (NOT_PAGES.includes(route)) continue;
        const page = SIGNED_OUT.includes(route) ? visitorPage : ownerPage;
        for (const [i, url] of dashboard.pages[route].entries()) {
          const status = (await page.goto(url))?.status();
          const lang = await page.getAttribute('html', 'lang');
          const found = await page.evaluate(shape);
          const axe = await axeViolations(page);
          pages.set(url, { status, lang, ...found, axe });
          await shoot?.(page, `${route.replace(/^\//, '').replace(/[/:]+/g, '-') || 'home'}${i > 0 ? `-${i}` : ''}`);
        }
      }
      // The menu opens (no script needed: a <details>), and the integrator pages are under "Developers".
      await ownerPage.goto('/orders');
      await ownerPage.locator('.main-nav summary').click();
      const developers = await ownerPage.locator('#menu-developers + ul a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
      const agentsInMenu = await ownerPage.locator('.menu-panel a[href="/agents"]').isVisible();
      return { pages, developers, agentsInMenu };
    } finally {
      await owner.close();
      await visitor.close();
    }
  }

  /**
   * Every page at 390 px in English, French and Arabic: at most one row of primary navigation (the
   * day's links and a menu), no phone link or primary button under 44 px either way, no sideways
   * scroll, and axe-core's WCAG 2.2 A/AA rules find nothing.
   */
  describe('the shape of every page at 390 px, in en, fr and ar (headless Chromium)', () => {
    for (const lng of ['en', 'fr', 'ar'] as const) {
      it(`${lng}: one row of navigation, tap targets of 44 px, no sideways scroll, no axe-core violation`, async () => {
        const { pages, developers, agentsInMenu } = await walk(lng);
        expect(pages.size).to.be.greaterThan(20);
        const problems: Record<string, Partial<Shape> & { axe?: string[] }> = {};
        for (const [url, seen] of pages) {
          expect(seen.status, url).to.equal(200);
          const wrong = {
            ...(seen.navRows > 1 ? { navRows: seen.navRows } : {}),
            ...(seen.small.length > 0 ? { small: seen.small } : {}),
            ...(seen.sideways > 0 ? { sideways: seen.sideways } : {}),
            ...(seen.axe.length > 0 ? { axe: seen.axe } : {}),
          };
          if (Object.keys(wrong).length > 0) problems[url] = wrong;
        }
        expect(developers).to.deep.equal(['/api-keys', '/webhooks', '/docs']);
        expect(agentsInMenu).to.equal(true);
        expect(problems).to.deep.equal({});
      });
    }
  });

  /**
   * Every page of the dashboard (the crawl's list) in French and Arabic on a phone: nothing makes the
   * page scroll sideways, axe-core finds nothing, and a screenshot of each is kept in
   * test-artifacts/screenshots/ (git-ignored) for a person to look at.
   */
  describe('every page in French and Arabic at 390 px (headless Chromium)', () => {
    for (const lng of ['fr', 'ar'] as const) {
      it(`${lng}: no sideways scroll and no axe-core violation on any page; each page's screenshot is saved`, async () => {
        const { pages } = await walk(lng);
        expect(pages.size).to.be.greaterThan(20);
        const problems: Record<string, { sideways?: number; axe?: string[] }> = {};
        for (const [url, seen] of pages) {
          expect(seen.status, url).to.equal(200);
          expect(seen.lang, url).to.equal(lng);
          if (seen.sideways > 0 || seen.axe.length > 0)
            problems[url] = { ...(seen.sideways > 0 ? { sideways: seen.sideways } : {}), ...(seen.axe.length > 0 ? { axe: seen.axe } : {}) };
        }
        expect(problems).to.deep.equal({});
      });
    }
  });
});
