import { expect } from 'chai';
import type { Browser, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { TEST_ENV, uniqueEmail } from '../helpers/app';
import { launchChromium, releaseChromium, reportFailure, requireChromium, screenshots } from '../helpers/browser';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const PASSWORD = 'correct horse battery';
const PHONE_SIZE = { width: 390, height: 844 };
const DESKTOP_SIZE = { width: 1280, height: 860 };

/** Clicks a button or link that loads a new page and waits for that page (after any redirect). */
async function go(page: Page, target: Locator): Promise<void> {
  // A link of the navigation's menu: open the menu first (a <details>, as a person taps "Menu").
  const menu = page.locator('.main-nav details.menu');
  if (!(await target.isVisible()) && (await menu.count()) > 0 && (await menu.getAttribute('open')) === null) {
    await menu.locator('summary').click();
  }
  const loaded = page.waitForEvent('framenavigated', (frame) => frame === page.mainFrame());
  await target.click();
  await loaded;
  await page.waitForLoadState('load');
}

const pathOf = (page: Page) => {
  const url = new URL(page.url());
  return url.pathname + url.search;
};
const mainText = (page: Page) => page.locator('main').innerText();
const notice = (page: Page) => page.locator('.notice').innerText();
const navLink = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

async function signUpIn(page: Page, user: { name: string; email: string; workspace: string }) {
  await page.goto('/signup');
  await page.getByLabel('Your name').fill(user.name);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password (8 characters or more)').fill(PASSWORD);
  await page.getByLabel('Shop / workspace name').fill(user.workspace);
  await go(page, page.getByRole('button', { name: 'Sign up' }));
}

async function fillOrder(page: Page, order: Record<'client' | 'phone' | 'store' | 'products' | 'address', string>) {
  await page.getByLabel('Client name').fill(order.client);
  await page.getByLabel('Phone').fill(order.phone);
  await page.getByLabel('Store').fill(order.store);
  await page.getByLabel('Products').fill(order.products);
  await page.getByLabel('Delivery address').fill(order.address);
}

async function tokenExchange(baseUrl: string, key: string): Promise<number> {
  const res = await fetch(`${baseUrl}/api/v1/token`, { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
  return res.status;
}

/**
 * Everything shop staff do, through the pages only: written once, run with and without JavaScript.
 * Each step asserts what the user sees; the screenshots are for a human reviewer.
 */
async function journey(browser: Browser, server: RunningServer, label: string, options: BrowserContextOptions) {
  const shot = screenshots(label);
  const ownerContext = await browser.newContext({ ...options, baseURL: server.url });
  const memberContext = await browser.newContext({ ...options, baseURL: server.url });
  const problems: string[] = [];
  try {
    const page = await ownerContext.newPage();
    page.setDefaultTimeout(10_000);
    // The 400 and 404 pages this journey visits on purpose log "Failed to load resource"; anything else is a problem.
    page.on('console', (msg) => msg.type() === 'error' && !msg.text().startsWith('Failed to load resource') && problems.push(msg.text()));
    page.on('pageerror', (err) => problems.push(err.message));

    // Sign up with a workspace: the orders list is empty.
    const owner = { name: 'Salma Idrissi', email: uniqueEmail('owner'), workspace: 'Boutique Atlas' };
    await page.goto('/signup');
    await shot(page, 'signup');
    await signUpIn(page, owner);
    expect(pathOf(page)).to.equal('/orders');
    expect(await mainText(page)).to.contain('No orders yet');
    // The user and the workspace are in the navigation's menu.
    await page.locator('.main-nav summary').click();
    expect(await page.locator('header').innerText())
      .to.contain('Salma Idrissi')
      .and.contain('Boutique Atlas');
    await page.locator('.main-nav summary').click();
    await shot(page, 'orders-empty');

    // The workspace starts with its team's human agent as order handler: nothing stands before a first order.
    await go(page, navLink(page, 'Agents'));
    expect(await page.locator('tbody tr', { hasText: 'Boutique Atlas team' }).locator('.badge').innerText()).to.equal('order handler');
    await shot(page, 'agents-team');

    // Add an agent, then make it the order handler.
    await page.getByLabel('Agent name').fill('Youssef');
    await page.getByLabel('Make this agent the order handler').uncheck();
    await go(page, page.getByRole('button', { name: 'Add agent' }));
    expect(await notice(page)).to.equal('Youssef added.');
    await go(page, page.getByRole('button', { name: 'Make Youssef the order handler' }));
    expect(await notice(page)).to.equal('Youssef is now the order handler.');
    expect(await page.locator('tbody tr', { hasText: 'Youssef' }).locator('.badge').innerText()).to.equal('order handler');
    await shot(page, 'agents');

    // A bad phone re-renders the form with the input kept and the message beside the field.
    await go(page, navLink(page, 'Orders'));
    await go(page, page.getByRole('link', { name: 'New order' }));
    const fatima = { client: 'فاطمة الزهراء', phone: '06 12', store: 'Pâtisserie Élise', products: 'Crème brûlée ×2', address: 'Derb Sultan, Casablanca' };
    await fillOrder(page, fatima);
    await go(page, page.getByRole('button', { name: 'Add order' }));
    const phone = page.getByLabel('Phone');
    expect(await phone.getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#f-phone-error').innerText()).to.contain('Enter a valid Moroccan phone number');
    expect(await page.getByLabel('Client name').inputValue()).to.equal('فاطمة الزهراء');
    await shot(page, 'order-new-error');

    // Fixed, the order is listed with its normalized phone, pending.
    await phone.fill('06 12 34 56 78');
    await go(page, page.getByRole('button', { name: 'Add order' }));
    expect(pathOf(page)).to.equal('/orders');
    expect(await notice(page)).to.contain('Order for فاطمة الزهراء added');
    const fatimaRow = page.locator('tbody tr', { hasText: 'فاطمة الزهراء' });
    // The phone grouped as people read it; on a phone the row is one compact line (client, phone,
    // amount, status), products and store only in the order's page and on a wider screen.
    expect(await fatimaRow.innerText()).to.contain('06 12 34 56 78');
    expect(await fatimaRow.textContent())
      .to.contain('Crème brûlée ×2')
      .and.contain('Pâtisserie Élise');
    expect(await fatimaRow.locator('.badge').innerText()).to.equal('pending');
    expect(await fatimaRow.locator('.badge').getAttribute('class')).to.equal('badge badge-pending');

    await go(page, page.getByRole('link', { name: 'New order' }));
    await fillOrder(page, { client: 'Omar Tazi', phone: '+212 7 12 34 56 78', store: 'Atlas', products: 'Babouches', address: '' });
    await go(page, page.getByRole('button', { name: 'Add order' }));
    expect(await page.locator('tbody tr').count()).to.equal(2);
    expect(await page.locator('tbody tr').first().innerText(), 'newest first').to.contain('Omar Tazi');
    await shot(page, 'orders-list');

    // Edit the address while pending.
    await go(page, page.getByRole('link', { name: 'فاطمة الزهراء' }));
    const orderPath = pathOf(page);
    expect(await page.getByLabel('Delivery address').inputValue()).to.equal('Derb Sultan, Casablanca');
    await shot(page, 'order-detail');
    await page.getByLabel('Delivery address').fill('Hay Hassani, rue 12, Casablanca');
    await go(page, page.getByRole('button', { name: 'Save changes' }));
    expect(pathOf(page)).to.equal(orderPath);
    expect(await notice(page)).to.equal('Order updated.');
    expect(await page.locator('.details').innerText()).to.contain('Hay Hassani, rue 12, Casablanca');

    // Confirm it: the edit form is gone.
    await page.getByLabel('New status').selectOption('confirmed');
    await go(page, page.getByRole('button', { name: 'Save status' }));
    expect(await notice(page)).to.equal('Status changed to confirmed.');
    expect(await page.locator('.details .badge').innerText()).to.equal('confirmed');
    expect(await page.getByRole('button', { name: 'Save changes' }).count()).to.equal(0);
    expect(await page.getByLabel('Client name').count()).to.equal(0);
    expect(await mainText(page)).to.contain('Only a pending order can be edited');
    await shot(page, 'order-confirmed');

    // Filter the list by status.
    await go(page, navLink(page, 'Orders'));
    await go(page, page.getByRole('navigation', { name: 'Filter by status' }).getByRole('link', { name: 'confirmed 1' }));
    expect(pathOf(page)).to.equal('/orders?status=confirmed');
    expect(await page.locator('tbody tr').count()).to.equal(1);
    expect(await page.locator('tbody').innerText())
      .to.contain('فاطمة الزهراء')
      .and.not.contain('Omar Tazi');
    await shot(page, 'orders-filtered');

    // An API key is shown once, works, and stops working once revoked.
    await go(page, navLink(page, 'API keys'));
    await page.getByLabel('Name').fill('Boutique plugin');
    await page.getByLabel('Expires after (days)').fill('30');
    await go(page, page.getByRole('button', { name: 'Create key' }));
    const keyField = page.getByLabel('Full key');
    expect(await keyField.getAttribute('readonly')).to.equal('');
    const key = await keyField.inputValue();
    expect(key).to.match(/^sk_live_[\w-]{43}$/);
    await shot(page, 'api-key-created');
    expect(await tokenExchange(server.url, key)).to.equal(200);
    await go(page, navLink(page, 'API keys'));
    expect(await page.getByLabel('Full key').count()).to.equal(0);
    expect(await page.content()).not.to.contain(key);
    const keyRow = page.locator('tbody tr', { hasText: 'Boutique plugin' });
    expect(await keyRow.innerText()).to.contain(key.slice(0, 14));
    await go(page, keyRow.getByRole('button', { name: /^Revoke/ }));
    expect(await notice(page)).to.contain('API key revoked');
    expect(await keyRow.locator('.badge').innerText()).to.equal('revoked');
    expect(await tokenExchange(server.url, key)).to.equal(401);
    await shot(page, 'api-keys');

    await go(page, navLink(page, 'Credits'));
    expect(await page.locator('.stats').innerText())
      .to.contain('Available')
      .and.contain('Granted in total')
      .and.contain('Spent in total');
    await shot(page, 'credits');

    // Invite a member: the owner gets a join link to send; the member opens it in another browser,
    // signs up with the invited address (fixed) and sees the same orders.
    await go(page, navLink(page, 'Workspace'));
    const memberEmail = uniqueEmail('member');
    await page.getByLabel('Their email').fill(memberEmail);
    await go(page, page.getByRole('button', { name: 'Invite' }));
    expect(await mainText(page))
      .to.contain(memberEmail)
      .and.contain('WhatsApp or SMS');
    const joinUrl = new URL(await page.getByLabel('Join link').inputValue());
    expect(joinUrl.pathname).to.match(/^\/join\/[A-Za-z0-9_-]{43}$/);
    await shot(page, 'workspace');

    const memberPage = await memberContext.newPage();
    memberPage.setDefaultTimeout(10_000);
    await memberPage.goto(joinUrl.pathname);
    expect(await memberPage.getByLabel('Email').inputValue()).to.equal(memberEmail);
    expect(await memberPage.getByLabel('Email').getAttribute('readonly')).to.equal('');
    await memberPage.getByLabel('Your name').fill('Hajar Member');
    await memberPage.getByLabel('Password (8 characters or more)').fill(PASSWORD);
    await shot(memberPage, 'join');
    await go(memberPage, memberPage.getByRole('button', { name: 'Sign up and join' }));
    // A member joins to confirm orders: the call queue first (issue 53, friction 14).
    expect(pathOf(memberPage)).to.equal('/calls');
    // The member's name and the workspace are in the navigation's menu.
    expect(await memberPage.locator('header').textContent())
      .to.contain('Hajar Member')
      .and.contain('Boutique Atlas');
    await go(memberPage, navLink(memberPage, 'Orders'));
    expect(await memberPage.locator('tbody').innerText())
      .to.contain('فاطمة الزهراء')
      .and.contain('Omar Tazi');
    await shot(memberPage, 'member-orders');

    // Delete an order, through its confirmation page; the member no longer sees it.
    await go(page, navLink(page, 'Orders'));
    await go(page, page.getByRole('link', { name: 'Omar Tazi' }));
    await go(page, page.getByRole('link', { name: 'Delete this order…' }));
    expect(await mainText(page))
      .to.contain('Delete this order?')
      .and.contain('cannot be undone');
    await shot(page, 'order-delete');
    await go(page, page.getByRole('button', { name: 'Delete order' }));
    expect(pathOf(page)).to.equal('/orders');
    expect(await notice(page)).to.equal('The order for Omar Tazi was deleted.');
    expect(await page.locator('tbody tr').count()).to.equal(1);
    await memberPage.reload();
    expect(await memberPage.locator('tbody').innerText()).not.to.contain('Omar Tazi');

    await page.goto('/orders/not-an-order');
    expect(await page.locator('h1').innerText()).to.equal('Page not found');
    await shot(page, 'not-found');

    await go(page, page.getByRole('button', { name: 'Sign out' }));
    expect(pathOf(page)).to.equal('/login');
    await shot(page, 'login');
    expect(problems, 'console errors (a CSP violation shows up here)').to.deep.equal([]);
  } catch (err) {
    await reportFailure(label, [...ownerContext.pages(), ...memberContext.pages()], server.output());
    throw err;
  } finally {
    await ownerContext.close();
    await memberContext.close();
  }
}

describe('the dashboard in a real browser (headless Chromium)', function () {
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

  it('the full journey with JavaScript, on a desktop screen', async () => {
    await journey(browser!, server!, 'js-desktop', { viewport: DESKTOP_SIZE });
  });

  it('the same journey with JavaScript disabled, on a phone screen', async () => {
    await journey(browser!, server!, 'nojs-phone', { javaScriptEnabled: false, viewport: PHONE_SIZE, isMobile: true, hasTouch: true });
  });
});
