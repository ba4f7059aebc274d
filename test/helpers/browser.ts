import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { ROOT } from '../../config';

/** Debian's Chromium; `.ci/run` installs it when missing. */
const CHROMIUM = '/usr/bin/chromium';
/** Git-ignored, so a reviewer can look at the pages without them entering history. */
const SCREENSHOTS = path.join(ROOT, 'test-artifacts', 'screenshots');

/**
 * Skips the calling suite, saying why, when Chromium is not installed; under CI=true a missing
 * browser fails instead, since CI may skip nothing.
 */
export function requireChromium(ctx: Mocha.Context): void {
  if (fs.existsSync(CHROMIUM)) return;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing; CI=true requires the browser tests to run`);
  console.log(`      (skipped: ${CHROMIUM} is not installed; apt-get install chromium to run the browser tests)`);
  ctx.skip();
}

let shared: Promise<Browser> | undefined;

/**
 * One Chromium per test process, launched by the first file that asks (again if it has gone): each
 * file opens browser contexts of its own and closes them at its end (`releaseChromium`), and the
 * browser ends with the process. Starting Chromium for each file cost the browser tier more CPU
 * than some of its files.
 */
export async function launchChromium(): Promise<Browser> {
  const running = await shared?.catch(() => undefined);
  if (running?.isConnected()) return running;
  shared = chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  return shared;
}

/** A file's end: the contexts it opened are closed; the shared browser stays for the next file. */
export async function releaseChromium(browser: Browser | undefined): Promise<void> {
  await Promise.all((browser?.contexts() ?? []).map((context) => context.close()));
}

/**
 * Saves numbered full-page screenshots named `<label>-<nn>-<name>.jpg`, for a person to look at
 * (git-ignored; the README's pictures in docs/screenshots/ are PNG files of their own tests). JPEG at
 * quality 85: Chromium encodes a long page in about half the CPU of a PNG, and the browser tier
 * saves hundreds of them.
 */
export function screenshots(label: string): (page: Page, name: string) => Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  for (const file of fs.readdirSync(SCREENSHOTS)) {
    if (file.startsWith(`${label}-`)) fs.rmSync(path.join(SCREENSHOTS, file));
  }
  let n = 0;
  return async (page, name) => {
    n += 1;
    await page.screenshot({ path: path.join(SCREENSHOTS, `${label}-${String(n).padStart(2, '0')}-${name}.jpg`), fullPage: true, type: 'jpeg', quality: 85 });
  };
}

/** On a failed journey: a screenshot and the text of each open page, and the server's last requests. */
export async function reportFailure(label: string, pages: Page[], serverOutput: string): Promise<void> {
  for (const [i, page] of pages.entries()) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `${label}-failure-${i}.png`), fullPage: true }).catch(() => {});
    const text = await page
      .locator('main')
      .innerText()
      .catch(() => '(no main)');
    console.log(`      ${label}: page ${i} at ${page.url()}\n${text}`);
  }
  const requests = serverOutput
    .split('\n')
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line);
        return entry.req ? [`${entry.req.method} ${entry.req.url} → ${entry.res?.statusCode}`] : [];
      } catch {
        return [];
      }
    })
    .slice(-30);
  console.log(`      last requests the server saw:\n        ${requests.join('\n        ')}`);
}

/** The WCAG tags axe-core checks: 2.2 AA and everything under it. */
const WCAG_AA_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const AXE_SOURCE = require.resolve('axe-core/axe.min.js');

let axeAddress: Promise<string> | undefined;

/**
 * axe-core served from 127.0.0.1 with a day's cache: a page loads it as a script file, so Chromium
 * compiles its half megabyte once per browser context instead of on every page. The address has no
 * `.js` ending, so a test that refuses the pages' own scripts still lets it through.
 */
function axeScriptUrl(): Promise<string> {
  axeAddress ??= new Promise((resolve, reject) => {
    const source = fs.readFileSync(AXE_SOURCE);
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'public, max-age=86400' });
      res.end(source);
    });
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/axe-core`);
    });
  });
  return axeAddress;
}

/** axe-core's violations on the page, each as "rule: the elements it names". */
export async function axeViolations(page: Page, tags: string[] = WCAG_AA_TAGS): Promise<string[]> {
  await page.addScriptTag({ url: await axeScriptUrl() });
  return page.evaluate(async (only) => {
    const axe = (
      window as unknown as {
        axe: { run: (ctx: Document, options: object) => Promise<{ violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> }> };
      }
    ).axe;
    // Only the violations are read: axe-core then keeps one node of each other result, not all of them.
    return (await axe.run(document, { runOnly: { type: 'tag', values: only }, resultTypes: ['violations'] })).violations.map(
      (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
  }, tags);
}

/** Each file's kept pages, by browser and by what their context was opened with. */
const kept = new WeakMap<Browser, Map<string, Promise<Page>>>();

/**
 * A page for a file's tests that share a context's options, opened once and kept until the file
 * releases its contexts (`releaseChromium`): a browser context costs Chromium more CPU than the
 * pages a test loads in it (a renderer started and warmed for each), so the tests of a file that
 * differ only in size or user reuse one. Each call sets the page's viewport to `viewport`, clears
 * the headers a test added, and signs it in with `cookie` ("name=value") for `options.baseURL`, or
 * out: a signed-in page and a visitor's are two pages, never one.
 */
export async function keptPage(
  browser: Browser,
  options: BrowserContextOptions & { baseURL: string; viewport: { width: number; height: number } },
  cookie?: string,
): Promise<Page> {
  let byKey = kept.get(browser);
  if (!byKey) {
    byKey = new Map();
    kept.set(browser, byKey);
  }
  const { viewport, ...rest } = options;
  const key = JSON.stringify([rest, cookie !== undefined]);
  let opened = byKey.get(key);
  if (!opened) {
    opened = (async () => {
      const context = await browser.newContext(options);
      context.once('close', () => byKey.delete(key));
      return context.newPage();
    })();
    byKey.set(key, opened);
  }
  const page = await opened;
  await page.context().clearCookies();
  if (cookie) {
    const [name, value] = cookie.split('=');
    await page.context().addCookies([{ name, value, url: options.baseURL }]);
  }
  await page.setViewportSize(viewport);
  await page.setExtraHTTPHeaders({});
  return page;
}

/**
 * A signed-in user's pages in one language at one size: each `path` opened without JavaScript
 * answers 200 in `lng` (its `lang`, and `dir` right to left in Arabic) and never scrolls sideways;
 * `each` adds a page's own checks; then axe-core (a script: on a twin page with JavaScript) finds
 * nothing. The shape every page test of a set of pages shares.
 */
export async function checkPagesIn(
  browser: Browser,
  options: { baseURL: string; cookie: string; viewport: { width: number; height: number }; lng: 'en' | 'fr' | 'ar'; paths: readonly string[] },
  each: (page: Page, path: string) => Promise<void> = async () => {},
): Promise<void> {
  const { baseURL, viewport, lng, cookie } = options;
  const page = await keptPage(browser, { viewport, javaScriptEnabled: false, baseURL }, cookie);
  const axePage = await keptPage(browser, { viewport, bypassCSP: true, baseURL }, cookie);
  for (const p of [page, axePage]) await p.setExtraHTTPHeaders({ 'Accept-Language': lng });
  for (const path of options.paths) {
    expect((await page.goto(path))?.status(), path).to.equal(200);
    expect(await page.locator('html').getAttribute('lang'), path).to.equal(lng);
    expect((await page.locator('html').getAttribute('dir')) === 'rtl', path).to.equal(lng === 'ar');
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), path).to.be.at.most(0);
    await each(page, path);
    await axePage.goto(path);
    expect(await axeViolations(axePage), path).to.deep.equal([]);
  }
}
