import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { signUp, TEST_ENV } from '../helpers/app';
import { axeViolations, keptPage, launchChromium, releaseChromium, requireChromium } from '../helpers/browser';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

/**
 * The audit log in a browser without JavaScript, at 390 px and at desktop width, in en, fr and ar:
 * no sideways scroll with a long browser name and an IPv6 address, the Older and Newer links page
 * through it, and axe-core finds nothing.
 */
describe('the audit log page without JavaScript, at 390 px and on a desktop (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let cookie: string;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
    const owner = await signUp({ target: server.url, name: 'Amina Benali', workspace: 'Dar Atlas' });
    cookie = owner.cookie;
    await owner.agent.post('/api/keys').send({ name: 'Google Sheets' }).expect(201);
    // 60 more events: two pages, with what is long on a phone (an IPv6 address, a browser's whole name).
    await testKnex().raw(
      `INSERT INTO audit_events (workspace_id, actor_id, action, target_type, target_label, ip, user_agent, created_at)
       SELECT ?, ?, 'webhook_secret_rotated', 'webhook', 'https://hooks.example-shop-with-a-very-long-name.ma/orders/confirmed/incoming',
              '2001:db8:85a3:8d3:1319:8a2e:370:' || n, repeat('Mozilla/5.0(Linux;Android14;SM-A546B)AppleWebKit/537.36', 3), now() - make_interval(mins => n)
         FROM generate_series(1, 60) n`,
      [owner.workspaceId, owner.userId],
    );
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
      it(`${label}, ${lng}: no sideways scroll, Older and Newer page through it, axe-core finds nothing`, async () => {
        // One kept page per language without JavaScript, and one with it for axe-core (`keptPage`).
        const page = await keptPage(browser!, { viewport, javaScriptEnabled: false, bypassCSP: true, baseURL: server!.url, locale: `${lng}-MA` }, cookie);
        await page.setExtraHTTPHeaders({ 'Accept-Language': lng });
        expect((await page.goto('/workspace/audit'))?.status()).to.equal(200);
        expect(await page.locator('html').getAttribute('lang')).to.equal(lng);
        const first = await page.locator('.audit-log li').count();
        expect(first).to.equal(50);
        expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).to.be.at.most(0);
        await page.locator('a[rel="next"]').click();
        await page.waitForURL(/older=/);
        expect(await page.locator('.audit-log li').count()).to.equal(11);
        expect(await page.locator('.audit-log').textContent()).to.contain('Amina Benali');
        expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).to.be.at.most(0);
        await page.locator('a[rel="prev"]').click();
        await page.waitForURL(/newer=/);
        expect(await page.locator('.audit-log li').count()).to.equal(50);
        // axe-core runs as a script: on a page of its own with JavaScript.
        const axePage = await keptPage(browser!, { viewport, bypassCSP: true, baseURL: server!.url }, cookie);
        await axePage.setExtraHTTPHeaders({ 'Accept-Language': lng });
        await axePage.goto('/workspace/audit');
        expect(await axeViolations(axePage)).to.deep.equal([]);
      });
    }
  }
});
