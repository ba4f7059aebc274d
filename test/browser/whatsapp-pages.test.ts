import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { TEST_ENV, signUp } from '../helpers/app';
import { axeViolations, launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';
import { seedWhatsAppStep } from '../helpers/whatsapp';

const PHONE = { width: 390, height: 844 };

/**
 * A WhatsApp agent's page (its connection, the setup guide, the template) and an order whose
 * timeline went from WhatsApp to a person, in English, French and Arabic on a phone: nothing
 * scrolls sideways, axe-core finds nothing, and the screenshots are kept for a person to look at.
 */
describe('WhatsApp pages in three languages at 390 px (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
  });

  after(async () => {
    await releaseChromium(browser);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('the agent page and the order timeline: no sideways scroll, no axe-core violation, the guide and the reply in the page’s language', async () => {
    const owner = await signUp({ target: server!.url, workspace: 'Dar Atlas', name: 'Salma Idrissi' });
    const { agentId, orderId } = await seedWhatsAppStep(owner.agent);
    const expected = {
      en: ['Connect it in Meta', 'The customer wrote:', 'Read', 'step 2'],
      fr: ['Le relier dans le tableau de bord de Meta', 'Le client a écrit :', 'Lu', 'étape 2'],
      ar: ['ربطو من لوحة التحكم ديال Meta', 'الكليان كتب:', 'تقرات', 'المرحلة'],
    };
    const problems: Record<string, { sideways?: number; axe?: string[] }> = {};
    for (const lng of ['en', 'fr', 'ar'] as const) {
      await owner.agent.put('/api/account').send({ language: lng }).expect(200);
      const context = await browser!.newContext({
        viewport: PHONE,
        bypassCSP: true,
        baseURL: server!.url,
        locale: `${lng}-MA`,
        timezoneId: 'Africa/Casablanca',
      });
      const [name, value] = owner.cookie.split('=');
      await context.addCookies([{ name, value, url: server!.url }]);
      const shoot = screenshots(`whatsapp-${lng}`);
      try {
        const page = await context.newPage();
        let text = '';
        for (const [label, url] of [
          ['agent', `/agents/${agentId}`],
          ['order', `/orders/${orderId}`],
          ['stats', '/stats'],
        ]) {
          expect((await page.goto(url))?.status(), url).to.equal(200);
          expect(await page.getAttribute('html', 'lang')).to.equal(lng);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          const axe = await axeViolations(page);
          if (overflow > 0 || axe.length > 0)
            problems[`${lng} ${url}`] = { ...(overflow > 0 ? { sideways: overflow } : {}), ...(axe.length > 0 ? { axe } : {}) };
          text += await page.locator('main').innerText();
          await shoot(page, label);
        }
        for (const words of expected[lng]) expect(text, lng).to.contain(words);
        expect(text).to.contain('Bghit nbeddel l’adresse');
      } finally {
        await context.close();
      }
    }
    expect(problems).to.deep.equal({});
  });
});
