import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { signUp, TEST_ENV } from '../helpers/app';
import { axeViolations, launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { testDatabaseUrl } from '../helpers/db';
import { openAllDay } from '../helpers/loop';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const PHONE = { width: 390, height: 844 };

/**
 * The delivery pages (delivery.md) in English, French and Arabic on a phone: the order's delivery and
 * its history, a carrier's report and its result, the carriers, /stats with the delivered rate and
 * /stats/team. Nothing scrolls sideways, axe-core finds nothing, the words are the page's language,
 * and the screenshots are kept for a person to look at.
 */
describe('delivery pages in three languages at 390 px (headless Chromium)', function () {
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

  it('every delivery page: no sideways scroll, no axe-core violation, in the page’s language', async () => {
    const owner = await signUp({ target: server!.url, workspace: 'Dar Atlas', name: 'Salma Idrissi' });
    const api = owner.agent;
    const order = (
      await api
        .post('/api/orders')
        .send({
          clientName: 'فاطمة الزهراء',
          phone: '0612345678',
          storeName: 'Atlas',
          productsName: 'Argan oil',
          city: 'Fès',
          totalAmount: 349,
          status: 'confirmed',
        })
        .expect(201)
    ).body;
    await api
      .put(`/api/orders/${order.id}/delivery`)
      .send({ status: 'shipped', carrier: 'Ozon Express', trackingNumber: 'OZ123456789MA', carrierStatus: 'Ramassé' })
      .expect(200);
    // This workspace makes no follow-up calls (docs/team.md): the queue below holds the new orders alone.
    await api.put('/api/settings/team').send({ followUps: false }).expect(200);
    await api.put(`/api/orders/${order.id}/delivery`).send({ status: 'refused', carrierStatus: 'Refusé par le client' }).expect(200);
    // A call Salma made and its parcel delivered: a row of figures on /stats/team.
    await openAllDay(owner);
    const called = (await api.post('/api/orders').send({ clientName: 'Youssef', phone: '0677777777', storeName: 'Atlas', productsName: 'Tajine' }).expect(201))
      .body;
    const call = (await api.post('/api/calls/next').expect(200)).body;
    expect(call.order.id).to.equal(called.id);
    await api.post(`/api/calls/${call.call.id}/outcome`).send({ outcome: 'confirmed' }).expect(200);
    await api.put(`/api/orders/${called.id}/delivery`).send({ status: 'delivered', carrier: 'Amana' }).expect(200);
    const again = (
      await api.post('/api/orders').send({ clientName: 'فاطمة الزهراء', phone: '0612345678', storeName: 'Atlas', productsName: 'Savon noir' }).expect(201)
    ).body;
    expect(again.flags).to.include('refused_before');
    // The call page of that customer's new order, claimed: the refusals and their links.
    const riskCall = (await api.post('/api/calls/next').expect(200)).body;
    expect(riskCall.order.id).to.equal(again.id);
    await api.post('/api/carriers').send({ kind: 'custom', name: 'Ozon Express' }).expect(201);
    // Each language's report has a parcel of its own to deliver, so that each result page shows a change.
    const parcels: Record<string, string> = {};
    for (const lng of ['en', 'fr', 'ar']) {
      const parcel = (
        await api
          .post('/api/orders')
          .send({
            clientName: `Client ${lng}`,
            phone: `06660000${lng === 'en' ? 10 : lng === 'fr' ? 20 : 30}`,
            storeName: 'Souk',
            productsName: 'P',
            city: 'Rabat',
            status: 'confirmed',
          })
          .expect(201)
      ).body;
      await api
        .put(`/api/orders/${parcel.id}/delivery`)
        .send({ status: 'shipped', carrier: 'Ozon Express', trackingNumber: `OZ-${lng}` })
        .expect(200);
      parcels[lng] = parcel.id;
    }
    const report = (lng: string) =>
      Buffer.from(`N° de suivi;Statut\nOZ123456789MA;Retourné\nOZ-${lng};Livré\nOZ-404;Livré\nOZ123456789MA;Colis en souffrance\n`, 'latin1');

    const expected = {
      en: ['Delivery history', 'parcel returned', 'matched no order', 'Delivered rate', 'Team results', 'Carriers that send their news'],
      fr: [
        'Historique de livraison',
        'colis retourné',
        'sans commande',
        'Taux de livraison',
        'Résultats de l’équipe',
        'Transporteurs qui envoient leurs nouvelles',
      ],
      ar: ['سجل التوصيل', 'مرتجع', 'بلا طلب', 'نسبة التسليم', 'نتائج الفريق', 'شركات توصيل ترسل أخبارها'],
    };
    const problems: Record<string, { sideways?: number; axe?: string[] }> = {};
    for (const lng of ['en', 'fr', 'ar'] as const) {
      await api.put('/api/account').send({ language: lng }).expect(200);
      const context = await browser!.newContext({
        viewport: PHONE,
        bypassCSP: true,
        baseURL: server!.url,
        locale: `${lng}-MA`,
        timezoneId: 'Africa/Casablanca',
      });
      const [name, value] = owner.cookie.split('=');
      await context.addCookies([{ name, value, url: server!.url }]);
      const shoot = screenshots(`delivery-${lng}`);
      try {
        const page = await context.newPage();
        let text = '';
        const check = async (label: string) => {
          expect(await page.getAttribute('html', 'lang')).to.equal(lng);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          const axe = await axeViolations(page);
          if (overflow > 0 || axe.length > 0)
            problems[`${lng} ${label}`] = { ...(overflow > 0 ? { sideways: overflow } : {}), ...(axe.length > 0 ? { axe } : {}) };
          text += await page.locator('main').innerText();
          await shoot(page, label);
        };
        // A carrier's report through the page's own form: the result page.
        expect((await page.goto('/deliveries/import'))?.status()).to.equal(200);
        await check('import-form');
        await page.setInputFiles('#f-file', { name: 'ozon.csv', mimeType: 'text/csv', buffer: report(lng) });
        await Promise.all([page.waitForNavigation(), page.locator('form[action="/deliveries/import"] button[type=submit]').click()]);
        await check('import-result');
        expect((await api.get(`/api/orders/${parcels[lng]}`).expect(200)).body.delivery.status, lng).to.equal('delivered');
        for (const [label, url] of [
          ['order', `/orders/${order.id}`],
          ['order-risk', `/orders/${again.id}`],
          ['call-risk', `/calls/${riskCall.call.id}`],
          ['orders-filtered', '/orders?delivery=returned'],
          ['deliveries', '/deliveries'],
          ['stats', '/stats'],
          ['team', '/stats/team'],
          ['settings', '/settings'],
        ]) {
          expect((await page.goto(url))?.status(), url).to.equal(200);
          await check(label);
        }
        for (const words of expected[lng]) expect(text, lng).to.contain(words);
      } finally {
        await context.close();
      }
    }
    expect(problems).to.deep.equal({});
  });
});
