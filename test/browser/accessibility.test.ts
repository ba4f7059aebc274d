import crypto from 'node:crypto';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ORDER_STATUSES } from '../../services/orders';
import type { SignedIn } from '../helpers/app';
import { invitationPath, signUp, TEST_ENV, uniqueEmail } from '../helpers/app';
import { keptPage, launchChromium, releaseChromium, requireChromium } from '../helpers/browser';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

/**
 * Checks every page as rendered by Chromium, at phone and desktop widths: each form control has a
 * label, each field error is announced through aria-describedby, text contrast meets WCAG AA, and
 * keyboard focus is visible on every focusable element.
 */
interface Findings {
  unlabelled: string[];
  unannounced: string[];
  lowContrast: string[];
}

/** Runs in the page: labels, error announcements and WCAG contrast of every visible text. */
function audit(): Findings {
  const describe = (el: Element) =>
    `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ').join('.')}` : ''} "${(el.textContent ?? '').trim().slice(0, 30)}"`;
  const unlabelled = [...document.querySelectorAll('input, select, textarea')]
    .filter((el) => !['hidden', 'submit', 'button'].includes((el as HTMLInputElement).type))
    .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
    .map(describe);
  const described = new Set([...document.querySelectorAll('[aria-describedby]')].flatMap((el) => el.getAttribute('aria-describedby')!.split(/\s+/)));
  const unannounced = [...document.querySelectorAll('.error[id]')].filter((el) => !described.has(el.id)).map(describe);

  const rgba = (value: string) => {
    const [r, g, b, a = 1] = (value.match(/[\d.]+/g) ?? ['0', '0', '0', '0']).map(Number);
    return { r, g, b, a };
  };
  const luminance = ({ r, g, b }: { r: number; g: number; b: number }) => {
    const lin = (c: number) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const background = (el: Element | null): { r: number; g: number; b: number } => {
    for (let node = el; node; node = node.parentElement) {
      const bg = rgba(getComputedStyle(node).backgroundColor);
      if (bg.a > 0) return bg;
    }
    return { r: 255, g: 255, b: 255 };
  };
  const lowContrast: string[] = [];
  for (const el of document.querySelectorAll('body *')) {
    const hasText = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '');
    const rect = el.getBoundingClientRect();
    if (!hasText || rect.width === 0 || rect.right < 0 || rect.bottom < 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden') continue;
    const fg = luminance(rgba(style.color));
    const bg = luminance(background(el));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) lowContrast.push(`${describe(el)} ${ratio.toFixed(2)}:1`);
  }
  return { unlabelled, unannounced, lowContrast };
}

/**
 * Tabs through the page; every element that takes focus must show an outline (or a shadow). Each
 * element is looked at as focus reaches it (a `focusin` listener in the page), so a Tab is one
 * round trip to the browser, and the findings are read once at the end.
 */
async function invisibleFocus(page: Page): Promise<string[]> {
  const count = await page.locator('a[href], button, input:not([type=hidden]), select, textarea').count();
  await page.locator('body').focus();
  await page.evaluate(() => {
    const invisible: string[] = [];
    (window as unknown as { invisibleFocus: string[] }).invisibleFocus = invisible;
    document.addEventListener('focusin', (event) => {
      const el = event.target;
      if (!(el instanceof Element) || el === document.body) return;
      const s = getComputedStyle(el);
      const visible = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
      if (!visible) invisible.push(`${el.tagName.toLowerCase()} "${(el.textContent ?? (el as HTMLInputElement).name ?? '').trim().slice(0, 30)}"`);
    });
  });
  for (let i = 0; i < count; i++) await page.keyboard.press('Tab');
  return page.evaluate(() => (window as unknown as { invisibleFocus: string[] }).invisibleFocus);
}

/** A Shopify connection whose log holds what a day brings: a created order, a paid one ignored, a rejected one. */
async function connectedStore(owner: SignedIn): Promise<{ id: string }> {
  const secret = 'shpss_accessibility_0123456789';
  const store = (await owner.agent.post('/api/stores').send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret }).expect(201)).body;
  const orders = [
    { id: 5001, name: '#1001', financial_status: 'pending', shipping_address: { first_name: 'Amina', last_name: 'Benali', phone: '0612345678', city: 'Fès' } },
    { id: 5002, name: '#1002', financial_status: 'paid', shipping_address: { first_name: 'Omar', last_name: 'Tazi', phone: '0612345679' } },
    { id: 5003, name: '#1003', financial_status: 'pending', shipping_address: { first_name: 'Karim', last_name: 'Alaoui', phone: '12 34' } },
  ];
  for (const order of orders) {
    const body = JSON.stringify({ ...order, line_items: [{ name: 'Babouches', quantity: 2 }], total_price: '349.00', currency: 'MAD' });
    await owner.agent
      .post(`/hooks/stores/${store.id}`)
      .set({
        'Content-Type': 'application/json',
        'X-Shopify-Topic': 'orders/create',
        'X-Shopify-Webhook-Id': crypto.randomUUID(),
        'X-Shopify-Hmac-Sha256': crypto.createHmac('sha256', secret).update(body).digest('base64'),
      })
      .send(body)
      .expect(200);
  }
  const events = (await owner.agent.get(`/api/stores/${store.id}/events`).expect(200)).body.events;
  expect(events.map((e: { result: string }) => e.result)).to.deep.equal(['rejected', 'ignored_paid', 'created']);
  return store;
}

describe('accessibility of every page (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let cookie: string;
  let pages: string[];
  let joinPath: string;

  before(async function () {
    requireChromium(this);
    [server, browser] = await Promise.all([startServer({ ...TEST_ENV, DATABASE_URL: testDatabaseUrl(), BCRYPT_COST: '4' }), launchChromium()]);
    const owner = await signUp({ target: server.url, workspace: 'Dar Atlas' });
    cookie = owner.cookie;
    await owner.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
    const orders = [];
    for (const status of ORDER_STATUSES) {
      orders.push(
        (
          await owner.agent
            .post('/api/orders')
            .send({ clientName: 'فاطمة', phone: '0612345678', storeName: 'Souk', productsName: 'Thé', address: 'Fès', status })
            .expect(201)
        ).body,
      );
    }
    await owner.agent.post('/api/keys').send({ name: 'Plugin' }).expect(201);
    joinPath = await invitationPath(owner, uniqueEmail('invited'));
    await testKnex()('credit_ledger').insert({ user_id: owner.userId, kind: 'grant', amount: 100 });
    const pendingId = orders[0].id;
    await owner.agent
      .put('/api/settings/calls')
      .send({ callingHours: { start: '00:00', end: '24:00' } })
      .expect(200);
    const claimed = (await owner.agent.post('/api/calls/next').expect(200)).body;
    const voice = (await owner.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/calls' }).expect(201)).body;
    const store = await connectedStore(owner);
    // An order whose customer's details were anonymised (retention, or a customer's erasure): its page says so.
    const anonymised = orders[orders.length - 1].id;
    await testKnex()('orders')
      .where({ id: anonymised })
      .update({ client_name: '—', phone: '+212000000000', address: null, city: null, note: null, anonymised_at: new Date() });
    pages = [
      '/orders',
      '/orders?status=pending',
      '/orders/new',
      `/orders/${pendingId}`,
      `/orders/${orders[3].id}`,
      `/orders/${pendingId}/delete`,
      `/orders/${anonymised}`,
      '/calls',
      `/calls/${claimed.call.id}`,
      '/settings',
      '/agents',
      `/agents/${voice.id}`,
      '/api-keys',
      '/credits',
      '/workspace',
      '/workspace/audit',
      '/stores',
      '/stores/new',
      '/stores/new?kind=custom',
      `/stores/${store.id}`,
      `/stores/${store.id}/delete`,
      '/customers',
      '/customers/%2B212612345678',
      '/customers/%2B212612345678/erase',
      '/no-such-page',
    ];
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
    it(`${label}: labels, announced errors, contrast and visible focus on every page`, async () => {
      // The owner's page and a visitor's, kept for both sizes (`keptPage`).
      const page = await keptPage(browser!, { viewport, baseURL: server!.url }, cookie);
      const signedOut = await keptPage(browser!, { viewport, baseURL: server!.url });
      const findings: Record<string, Findings & { focus: string[] }> = {};
      const check = async (p: Page, key: string) => {
        findings[key] = { ...(await p.evaluate(audit)), focus: await invisibleFocus(p) };
      };
      for (const path of pages) {
        await page.goto(path);
        await check(page, path);
      }
      // Error states: a form re-rendered with a message beside each field.
      await page.goto('/orders/new');
      await page.getByRole('button', { name: /add order/i }).click();
      await page.waitForLoadState('load');
      await check(page, 'POST /orders (errors)');
      await page.goto('/settings');
      await page.fill('#f-max_attempts', '99');
      await page.selectOption('#f-hours_start', '22:00');
      await page.getByRole('button', { name: /save settings/i }).click();
      await page.waitForLoadState('load');
      await check(page, 'POST /settings (errors)');
      await page.goto(pages.find((p) => p.startsWith('/calls/'))!);
      await page.locator('summary', { hasText: 'Call back later' }).click();
      await page.getByRole('button', { name: /call back at this time/i }).click();
      await page.waitForLoadState('load');
      await check(page, 'POST /calls/:id/outcome (errors)');
      expect(findings['POST /calls/:id/outcome (errors)'].unannounced).to.deep.equal([]);
      for (const path of ['/login', '/signup']) {
        await signedOut.goto(path);
        await check(signedOut, path);
      }
      await signedOut.getByRole('button', { name: 'Sign up' }).click();
      await signedOut.waitForLoadState('load');
      await check(signedOut, 'POST /signup (errors)');
      await signedOut.goto(joinPath);
      await check(signedOut, '/join/{token}');
      expect(findings['POST /orders (errors)'].unannounced).to.deep.equal([]);
      expect(Object.keys(findings)).to.have.length(pages.length + 7);

      const problems = Object.entries(findings).filter(([, f]) => f.unlabelled.length + f.unannounced.length + f.lowContrast.length + f.focus.length > 0);
      expect(Object.fromEntries(problems)).to.deep.equal({});
    });
  }

  it('phone (390 px): the statistics and the import page fit the screen; the chart is drawn to its width, its numbers in a table', async () => {
    const page = await keptPage(browser!, { viewport: { width: 390, height: 844 }, baseURL: server!.url }, cookie);
    const layout = async (path: string) => {
      await page.goto(path);
      expect(new URL(page.url()).pathname, path).to.equal(path);
      const fit = await page.evaluate(() => {
        const svg = document.querySelector('svg');
        return {
          // Nothing makes the page itself scroll sideways (a wide table may scroll inside its own box).
          sideways: document.documentElement.scrollWidth > window.innerWidth,
          chartFits: svg ? svg.getBoundingClientRect().right <= window.innerWidth : null,
          tables: document.querySelectorAll('table').length,
          // The one script a page loads is the copy buttons' file: the chart needs none.
          scripts: document.querySelectorAll('script:not([src*="/assets/copy."])').length,
          fontPx: parseFloat(getComputedStyle(document.body).fontSize),
        };
      });
      return { ...fit, ...(await page.evaluate(audit)) };
    };
    const stats = await layout('/stats');
    expect(stats).to.deep.include({ sideways: false, chartFits: true, scripts: 0, unlabelled: [], unannounced: [], lowContrast: [] });
    expect(stats.tables).to.be.at.least(1);
    expect(stats.fontPx).to.be.at.least(14);
    const upload = await layout('/orders/import');
    expect(upload).to.deep.include({ sideways: false, unlabelled: [], unannounced: [], lowContrast: [] });
  });
});
