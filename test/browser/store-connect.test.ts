import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { signUp, TEST_ENV } from '../helpers/app';
import { launchChromium, releaseChromium, requireChromium, screenshots } from '../helpers/browser';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const PHONE = { width: 390, height: 844 };
const CLIENT_SECRET = 'shpss_browser_app_secret';

/** A free port, so that the server's PUBLIC_BASE_URL (Shopify's redirect URL) is known before it starts. */
async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

/**
 * Shopify as a shop owner meets it: the approval page (Install / Cancel), which sends the browser
 * back to our redirect URL with the query signed by the app's client secret, then the token
 * exchange and the GraphQL subscriptions.
 */
async function shopifyDouble() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (url.pathname === '/admin/oauth/authorize') {
        const back = (params: Record<string, string>) => {
          const sorted = new URLSearchParams(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : 1)));
          const hmac = crypto.createHmac('sha256', CLIENT_SECRET).update(sorted.toString()).digest('hex');
          return `${url.searchParams.get('redirect_uri')}?${new URLSearchParams({ ...params, hmac })}`;
        };
        const common = { shop: 'atlas-maroc.myshopify.com', state: url.searchParams.get('state') ?? '', timestamp: String(Math.floor(Date.now() / 1000)) };
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<!doctype html><html lang="fr"><head><meta name="viewport" content="width=device-width"><title>Installer l’application</title></head>
<body style="font-family:sans-serif;padding:16px"><h1>Installer Order Confirmation</h1>
<p>Cette application pourra : lire et modifier les commandes, lire les expéditions (${url.searchParams.get('scope')}).</p>
<p><a id="install" href="${back({ ...common, code: 'code-from-shopify', host: 'YWRtaW4uc2hvcGlmeS5jb20' })}">Installer</a></p>
<p><a id="cancel" href="${back({ ...common, error: 'access_denied' })}">Annuler</a></p></body></html>`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.pathname === '/admin/oauth/access_token') return void res.end(JSON.stringify({ access_token: 'shpua_browser', scope: 'read_orders' }));
      const n = crypto.randomInt(1_000_000);
      res.end(
        JSON.stringify({
          data: { webhookSubscriptionCreate: { webhookSubscription: { id: `gid://shopify/WebhookSubscription/${n}` }, userErrors: [] } },
          body: body.length,
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('connecting Shopify in one click, in French at 390 px (headless Chromium)', function () {
  this.timeout(600_000);
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let shopify: Awaited<ReturnType<typeof shopifyDouble>> | undefined;

  before(async function () {
    requireChromium(this);
    shopify = await shopifyDouble();
    const port = await freePort();
    [server, browser] = await Promise.all([
      startServer({
        ...TEST_ENV,
        DATABASE_URL: testDatabaseUrl(),
        PORT: String(port),
        PUBLIC_BASE_URL: `http://localhost:${port}`,
        SHOPIFY_CLIENT_ID: 'browser-client-id',
        SHOPIFY_CLIENT_SECRET: CLIENT_SECRET,
        SHOPIFY_API_ORIGIN: shopify.url,
        WORKER: 'off',
      }),
      launchChromium(),
    ]);
  });

  after(async () => {
    await releaseChromium(browser);
    await shopify?.close();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('the owner types the shop, approves on Shopify and lands on the connected store; a cancelled approval says why', async () => {
    const owner = await signUp({ target: server!.url });
    await owner.agent.put('/api/account').send({ language: 'fr' }).expect(200);
    const context = await browser!.newContext({ viewport: PHONE, deviceScaleFactor: 1, locale: 'fr-MA', timezoneId: 'Africa/Casablanca' });
    const [name, value] = owner.cookie.split('=');
    await context.addCookies([{ name, value, url: server!.url }]);
    const shoot = screenshots('store-connect-fr');
    try {
      const page = await context.newPage();
      await page.goto(`${server!.url}/stores/new?kind=shopify`);
      expect(await page.locator('#connect-heading').innerText()).to.equal('Connecter en un clic');
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).to.equal(0);
      await page.fill('#c-name', 'Atlas Maroc');
      await page.fill('#c-shop', 'atlas-maroc.myshopify.com');
      await shoot(page, 'new');
      await page.click('button:has-text("Connecter Shopify")');
      await page.waitForSelector('#install');
      await shoot(page, 'shopify-approval');
      await page.click('#install');
      await page.waitForURL(/\/stores\/[0-9a-f-]{36}$/);
      expect(await page.locator('main').innerText()).to.contain('Shopify est connecté');
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).to.equal(0);
      await shoot(page, 'connected');
      const [connection] = await testKnex()('store_connections').where({ workspace_id: owner.workspaceId });
      expect(connection).to.include({ shop: 'atlas-maroc.myshopify.com', enabled: true, pending: false, connected_by: 'oauth' });

      await page.goto(`${server!.url}/stores/new?kind=shopify`);
      await page.fill('#c-name', 'Atlas Maroc 2');
      await page.fill('#c-shop', 'atlas-maroc.myshopify.com');
      await page.click('button:has-text("Connecter Shopify")');
      await page.waitForSelector('#cancel');
      await page.click('#cancel');
      await page.waitForURL(/connect_error=refused/);
      expect(await page.locator('[role=alert]').first().innerText()).to.contain('L’autorisation a été refusée');
      // What the owner typed is there again: trying again is one press.
      expect(await page.inputValue('#c-name')).to.equal('Atlas Maroc 2');
      expect(await page.inputValue('#c-shop')).to.equal('atlas-maroc.myshopify.com');
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).to.equal(0);
      await shoot(page, 'refused');
      expect(await testKnex()('store_connections').where({ workspace_id: owner.workspaceId })).to.have.length(1);
    } finally {
      await context.close();
    }
  });
});
