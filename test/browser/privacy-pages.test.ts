import type { Browser } from 'playwright-core';
import { signUp, TEST_ENV } from '../helpers/app';
import { checkPagesIn, launchChromium, releaseChromium, requireChromium } from '../helpers/browser';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

/**
 * Issue 58's pages without JavaScript, at 390 px and on a desktop, in en, fr and ar: a customer's
 * lookup, their orders, the erasure's confirmation, the settings (retention) and an anonymised
 * order. Each answers 200 in its language, never scrolls sideways, and axe-core finds nothing.
 */
describe('the customers’ data pages without JavaScript, at 390 px and on a desktop (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let cookie: string;
  let pages: string[];

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl() }), launchChromium()]);
    const owner = await signUp({ target: server.url, name: 'Amina Benali', workspace: 'Dar Atlas' });
    cookie = owner.cookie;
    const order = (fields: object) =>
      owner.agent
        .post('/api/orders')
        .send({ clientName: 'Fatima Zahra El Idrissi', phone: '06 12 34 56 78', storeName: 'Atlas', productsName: 'Huile d’argan', ...fields })
        .expect(201);
    await order({});
    await order({ address: '12, rue Ibn Battouta, quartier Maârif, Casablanca' });
    const anonymised = (await order({ phone: '0698765432' })).body.id;
    await testKnex()('orders')
      .where({ id: anonymised })
      .update({ client_name: '—', phone: '+212000000000', address: null, city: null, note: null, anonymised_at: new Date() });
    pages = ['/customers', '/customers/0612345678', '/customers/0612345678/erase', '/settings', `/orders/${anonymised}`];
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
      it(`${label}, ${lng}: each page in its language, no sideways scroll, axe-core finds nothing`, async () => {
        await checkPagesIn(browser!, { baseURL: server!.url, cookie, viewport, lng, paths: pages });
      });
    }
  }
});
