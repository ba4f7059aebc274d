import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { SignedIn } from '../helpers/app';
import { signUp, TEST_ENV } from '../helpers/app';
import { keptPage, launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const PHONE = { width: 390, height: 844 };
const DUE = 20;

/**
 * A confirmer works through the queue at phone width, as a call centre does: from one call's page to
 * the next, she taps the number (the phone's dialler takes over) and then the outcome; the outcome is
 * saved and the next due call opens. Taps are the test's own clicks; page loads are the main frame's
 * committed navigations (a form post answered by a redirect is one).
 */
describe('confirming at call-centre speed (Chromium, 390 × 844)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl(), BCRYPT_COST: '4' }), launchChromium()]);
  });

  after(async () => {
    await releaseChromium(browser);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  /** A new workspace (its team's agent is the order handler from sign-up), open all day, with DUE orders. */
  async function queueOf(language: 'ar' | 'fr', count = DUE): Promise<SignedIn & { orderIds: string[] }> {
    const owner = await signUp({ target: server!.url, name: language === 'ar' ? 'سلمى' : 'Salma' });
    await owner.agent.put('/api/account').send({ language }).expect(200);
    await owner.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: '00:00', end: '24:00' } })
      .expect(200);
    const orderIds: string[] = [];
    for (let i = 0; i < count; i++) {
      const phone = `06${String(10_000_000 + i * 7919).slice(0, 8)}`;
      const { body } = await owner.agent
        .post('/api/orders')
        .send({ clientName: language === 'ar' ? `زبون ${i + 1}` : `Client ${i + 1}`, phone, storeName: 'Souk', productsName: 'Thé ×2' })
        .expect(201);
      orderIds.push(body.id);
    }
    return { ...owner, orderIds };
  }

  /** A phone-sized page in the run's language and Morocco's time, signed in with the owner's session cookie (kept for the run's two tests: `keptPage`). */
  async function signedInPhone(cookie: string, run: { language: string; javaScript: boolean }) {
    const page = await keptPage(
      browser!,
      {
        viewport: PHONE,
        deviceScaleFactor: 1,
        baseURL: server!.url,
        locale: `${run.language}-MA`,
        timezoneId: 'Africa/Casablanca',
        javaScriptEnabled: run.javaScript,
      },
      cookie,
    );
    page.setDefaultTimeout(15_000);
    return page;
  }

  for (const run of [
    { language: 'ar', javaScript: true },
    { language: 'fr', javaScript: false },
  ] as const) {
    it(`${run.language}, JavaScript ${run.javaScript ? 'on' : 'off'}: ${DUE} due orders, 2 taps and 1 page load per confirmed call, each outcome in the database`, async () => {
      const owner = await queueOf(run.language);
      const page = await signedInPhone(owner.cookie, run);
      const shoot = screenshots(`call-centre-${run.language}`);
      let loads = 0;
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) loads += 1;
      });
      let taps = 0;
      const tap = async (target: ReturnType<Page['locator']>, options: { trial?: boolean } = {}) => {
        taps += 1;
        await target.click(options);
      };

      await page.goto('/calls');
      expect(await page.getAttribute('html', 'lang')).to.equal(run.language);
      await shoot(page, 'queue');
      await Promise.all([page.waitForURL(/\/calls\/[0-9a-f-]{36}$/), page.locator('form[action="/calls/next"] button[type="submit"]').click()]);
      await shoot(page, 'call');

      const perCall: Array<{ taps: number; loads: number }> = [];
      const seen = new Set<string>();
      for (let i = 0; i < DUE; i++) {
        const url = page.url();
        const callId = url.split('/').pop()!;
        expect(seen.has(callId), `call ${i + 1} is a new call`).to.equal(false);
        seen.add(callId);
        [taps, loads] = [0, 0];
        const phoneLink = page.locator('a[href^="tel:"]');
        const box = await phoneLink.boundingBox();
        expect(box!.height, 'the number is a tap target of 44 px at least').to.be.at.least(44);
        // Tap 1: the number. The phone's dialler takes over, which a headless browser has not: the tap
        // is checked (visible, enabled, not covered) but not sent.
        await tap(phoneLink, { trial: true });
        // Tap 2: the outcome — saved, and the next due call (or the queue, after the last) opens.
        const confirm = page.locator('button[name="outcome"][value="confirmed"]');
        await Promise.all([page.waitForURL((u) => u.toString() !== url), tap(confirm)]);
        await page.waitForLoadState('load');
        perCall.push({ taps, loads });
        const call = await testKnex()('calls').where({ id: callId }).first();
        expect(call, `call ${i + 1}`).to.include({ outcome: 'confirmed', made_by: owner.userId, kind: 'human' });
      }
      await shoot(page, 'queue-done');
      expect(new URL(page.url()).pathname).to.equal('/calls');
      expect(perCall).to.deep.equal(Array.from({ length: DUE }, () => ({ taps: 2, loads: 1 })));
      const statuses = await testKnex()('orders').whereIn('id', owner.orderIds).pluck('status');
      expect(statuses).to.have.length(DUE);
      expect(new Set(statuses)).to.deep.equal(new Set(['confirmed']));
      expect(await testKnex()('calls').where({ workspace_id: owner.workspaceId, outcome: 'confirmed' })).to.have.length(DUE);
    });
  }
  for (const run of [
    { language: 'ar', javaScript: true },
    { language: 'fr', javaScript: false },
  ] as const) {
    it(`${run.language}, JavaScript ${run.javaScript ? 'on' : 'off'}: "Call back later" and "Changed" reveal their field on a tap; each records its outcome with what was typed and opens the next call`, async () => {
      const owner = await queueOf(run.language, 3);
      const page = await signedInPhone(owner.cookie, run);
      await page.goto('/calls');
      await Promise.all([page.waitForURL(/\/calls\/[0-9a-f-]{36}$/), page.locator('form[action="/calls/next"] button[type="submit"]').click()]);

      // "Call back later": the time field is hidden until its button is tapped.
      const first = page.url();
      const callback = page.locator('#f-callback_at');
      expect(await callback.isVisible()).to.equal(false);
      await page.locator('details:has(#f-callback_at) > summary').click();
      expect(await callback.isVisible()).to.equal(true);
      const day = new Intl.DateTimeFormat('sv-SE', { timeZone: 'Africa/Casablanca', year: 'numeric', month: '2-digit', day: '2-digit' }).format(
        new Date(Date.now() + 2 * 86_400_000),
      );
      await callback.fill(`${day}T11:15`);
      await Promise.all([page.waitForURL((u) => u.toString() !== first), page.locator('button[name="outcome"][value="postponed"]').click()]);
      const postponed = await testKnex()('calls')
        .where({ id: first.split('/').pop() })
        .first();
      expect(postponed).to.include({ outcome: 'postponed' });
      const operation = await testKnex()('operations').where({ id: postponed.operation_id }).first();
      expect(
        new Intl.DateTimeFormat('sv-SE', { timeZone: 'Africa/Casablanca', dateStyle: 'short', timeStyle: 'short' }).format(operation.next_attempt_at),
      ).to.equal(`${day} 11:15`);

      // "Changed": the changes field is hidden until its button is tapped.
      const second = page.url();
      expect(second).to.match(/\/calls\/[0-9a-f-]{36}$/);
      const changes = page.locator('#f-changes');
      expect(await changes.isVisible()).to.equal(false);
      await page.locator('details:has(#f-changes) > summary').click();
      expect(await changes.isVisible()).to.equal(true);
      await changes.fill('Deux boîtes au lieu d’une');
      await Promise.all([page.waitForURL((u) => u.toString() !== second), page.locator('button[name="outcome"][value="order-changed"]').click()]);
      const changed = await testKnex()('calls')
        .where({ id: second.split('/').pop() })
        .first();
      expect(changed).to.include({ outcome: 'order-changed', changes: 'Deux boîtes au lieu d’une' });
      const { order_id: orderId } = await testKnex()('operations').where({ id: changed.operation_id }).first('order_id');
      expect((await testKnex()('orders').where({ id: orderId }).first()).status).to.equal('order-changed');
      // The third due call is open; the queue link stays.
      expect(page.url()).to.match(/\/calls\/[0-9a-f-]{36}$/);
      expect(await page.locator('main a[href="/calls"]').count()).to.be.at.least(1);
    });
  }
});
