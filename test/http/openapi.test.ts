import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { openApiDocument } from '../../openapi';
import { ORDER_STATUSES } from '../../services/orders';
import { app, appUrl, signUp } from '../helpers/app';
import { launchChromium, requireChromium, screenshots } from '../helpers/browser';
import { documentedOperation, responseViolation } from '../helpers/openapi';

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: string;
}

/** Every `METHOD /path` registered in an Express 5 app, nested routers included, `:id` as `{id}`. */
function registeredRoutes(stack: Layer[], prefix = ''): string[] {
  const out: string[] = [];
  for (const layer of stack) {
    if (layer.route) {
      for (const path of ([] as string[]).concat(layer.route.path)) {
        const full = `${prefix}${path}`.replace(/\/$/, '').replace(/:(\w+)/g, '{$1}') || '/';
        for (const method of Object.keys(layer.route.methods)) if (method !== '_all') out.push(`${method.toUpperCase()} ${full}`);
      }
    } else if (layer.handle?.stack) {
      const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      out.push(...registeredRoutes(layer.handle.stack, prefix + mount));
    }
  }
  return out;
}

describe('OpenAPI document', () => {
  const doc = openApiDocument() as {
    openapi: string;
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: Record<string, { properties?: Record<string, { enum?: string[]; $ref?: string }> }>; securitySchemes: Record<string, unknown> };
  };

  it('is served at /openapi.json as OpenAPI 3.1', async () => {
    const res = await request(appUrl())
      .get('/openapi.json')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    expect(res.body.openapi).to.equal('3.1.0');
    expect(res.body.paths).to.have.property('/api/orders');
    expect(Object.keys(res.body.components.securitySchemes)).to.include.members(['session', 'apikey', 'bearerToken', 'apiKey', 'hookSignature']);
  });

  it('documents every JSON route the app registers (/api, /data, /hooks), and nothing that is not registered', () => {
    const registered = registeredRoutes((app() as unknown as { router: { stack: Layer[] } }).router.stack).filter((route) =>
      /^\w+ \/(api|data|hooks)\//.test(route),
    );
    expect(registered.length, 'routes found in the app').to.be.greaterThan(40);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    const missing = registered.filter((route) => !documented.includes(route));
    expect(missing, 'registered routes missing from /openapi.json').to.deep.equal([]);
    const extra = documented.filter((route) => !registered.includes(route));
    expect(extra, 'documented routes the app does not register').to.deep.equal([]);
  });

  it('lists the ten order statuses as an enum', () => {
    expect(doc.components.schemas.Order.properties!.status.$ref).to.equal('#/components/schemas/OrderStatus');
    expect((doc.components.schemas.OrderStatus as { enum: string[] }).enum).to.deep.equal([...ORDER_STATUSES]);
  });

  it('gives every operation its error answers with the error body, and an example per JSON answer it documents', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(
        item as Record<string, { responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }> }>,
      )) {
        const statuses = Object.keys(op.responses);
        expect(
          statuses.some((s) => s.startsWith('4')),
          `${method} ${path} has 4xx answers`,
        ).to.equal(true);
        expect(statuses, `${method} ${path}`).to.include('500');
        for (const status of statuses.filter((s) => Number(s) >= 400)) {
          expect(op.responses[status].content!['application/json'].schema.$ref, `${method} ${path} ${status}`).to.equal('#/components/schemas/Error');
        }
      }
    }
  });

  it('the drift check: finds the operation, and refuses a body without a required field or with an undocumented status', () => {
    expect(documentedOperation('GET', '/api/orders/export.csv')!.template).to.equal('/api/orders/export.csv');
    expect(documentedOperation('GET', '/api/orders/0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10')!.template).to.equal('/api/orders/{id}');
    expect(documentedOperation('GET', '/nowhere')).to.equal(undefined);
    const order = {
      id: '0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10',
      workspace_id: '5d2c7a40-8e8b-4f0e-9d1c-6a1b2c3d4e5f',
      client_name: 'A',
      phone: '+212612345678',
      store_name: 'S',
      products_name: 'P',
      address: null,
      city: null,
      note: null,
      status: 'pending',
      created_at: '2026-11-23T13:05:00.000Z',
      placed_at: null,
      operation_id: null,
      flags: [],
      source: 'api',
      store_connection_id: null,
      external_id: null,
      external_ref: null,
      total_amount: null,
      currency: null,
      delivery: null,
      assigned_to: null,
      assigned_at: null,
      rescheduled_for: null,
    };
    const url = `/api/orders/${order.id}`;
    expect(responseViolation('GET', url, 200, 'application/json', order)).to.equal(null);
    const { operation_id: _dropped, ...withoutOperation } = order;
    expect(responseViolation('GET', url, 200, 'application/json', withoutOperation)).to.match(/must have required property 'operation_id'/);
    expect(responseViolation('GET', url, 200, 'application/json', { ...order, status: 'shipped' })).to.match(
      /status must be equal to one of the allowed values/,
    );
    expect(responseViolation('GET', url, 418, 'application/json', { error: 'teapot' })).to.match(/status is not documented/);
    expect(responseViolation('GET', url, 200, 'text/html', '<p>')).to.match(/Content-Type/);
  });

  it('checks the responses tests receive (a real answer passes through the check)', async () => {
    const { agent } = await signUp();
    const res = await agent.get('/api/orders?limit=5').expect(200);
    expect(res.body).to.have.property('next_cursor');
  });
});

describe('API reference page /docs', () => {
  it("is an HTML page with no inline script, under the app's CSP unchanged", async () => {
    const res = await request(appUrl())
      .get('/docs')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).to.include("script-src 'self'").and.include("style-src 'self'");
    expect(csp).not.to.include('unsafe');
    expect(res.text).not.to.match(/<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.text).not.to.match(/\sstyle=|<style/);
    for (const src of [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])) {
      expect(src.startsWith('/'), `${src} is of our own origin`).to.equal(true);
      await request(appUrl()).get(src).expect(200);
    }
  });

  it('renders every operation in Chromium with no CSP violation or script error', async function () {
    requireChromium(this);
    this.timeout(60_000);
    const server = http.createServer(app());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const browser = await launchChromium();
    try {
      const shoot = screenshots('docs');
      const operations = Object.values(openApiDocument().paths as Record<string, object>).reduce((n, item) => n + Object.keys(item).length, 0);
      for (const width of [390, 1280]) {
        const page = await browser.newPage({ viewport: { width, height: 900 } });
        const problems: string[] = [];
        page.on('console', (m) => {
          if (m.type() === 'error') problems.push(m.text());
        });
        page.on('pageerror', (e) => problems.push(e.message));
        await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/docs`);
        await page
          .locator('.opblock')
          .nth(operations - 1)
          .waitFor();
        expect(await page.locator('.opblock').count()).to.equal(operations);
        await page.locator('.opblock-summary').first().click();
        await page.locator('.responses-wrapper').first().waitFor();
        await shoot(page, `${width}`);
        expect(problems, `console errors at ${width} px`).to.deep.equal([]);
        await page.close();
      }
    } finally {
      await browser.close();
      server.close();
    }
  });
});
