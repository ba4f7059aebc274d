import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT, loadConfig } from '../../config';
import { AppError, ConflictError, ValidationError, decode, english, foreign, msg, parse, requiredText } from '../../services/shared';
import type { Message } from '../../services/shared';
import { z } from 'zod';
import { errorsByInput } from '../../routes/pages/forms';
import { localeHelpers } from '../../routes/pages/view-helpers';
import { createI18n } from '../../routes/middleware/i18n';
import { appUrl, csrfFrom, csrfOf, invitationPath, signUp, TEST_ENV } from '../helpers/app';
import { createOrder, openAllDay } from '../helpers/loop';
import { createServices } from '../../services';
import { Jobs } from '../../db/jobs';
import { SignedSender } from '../../integrations/http';
import type { SignedIn } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { COLUMN_NAMES } from '../../services/orders';
import { SHIPPING_ADAPTERS } from '../../services/shipping';
import { MAX_DAYS } from '../../services/stats';

const CATALOGUES = Object.fromEntries(
  ['en', 'fr', 'ar'].map((lng) => [lng, JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', `${lng}.json`), 'utf8')).messages as Record<string, string>]),
);

/** Every .ts file under a folder of the repository (no node_modules, no build). */
function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(rel);
    return entry.name.endsWith('.ts') ? [fs.readFileSync(path.join(ROOT, rel), 'utf8')] : [];
  });
}

/**
 * Not ours: validation's catch-all (its fields carry the codes), error codes libraries set (csv-parse, multer, streams) and
 * the Shopify webhook topics we subscribe to (services/stores/platforms/shopify/api.ts), the carriers' origin settings.
 */
const LIBRARY_CODES = [
  'VALIDATION_ERROR',
  'CSV_QUOTE_NOT_CLOSED',
  'LIMIT_FILE_SIZE',
  'ERR_STREAM_PREMATURE_CLOSE',
  ...['ORDERS_CREATE', 'ORDERS_UPDATED', 'ORDERS_CANCELLED', 'FULFILLMENTS_CREATE', 'FULFILLMENTS_UPDATE', 'APP_UNINSTALLED'],
  // The settings that point each carrier adapter at its API (SENDIT_API_ORIGIN…): names of settings, not messages.
  ...Object.values(SHIPPING_ADAPTERS).map((adapter) => adapter.originSetting),
];

describe('messages reach pages by their code', () => {
  const code = [...sources('services'), ...sources('routes')];
  const used = new Set<string>();
  for (const text of code) {
    for (const m of text.matchAll(/\bmsg\(\s*'([A-Za-z0-9_]+)'/g)) used.add(m[1]);
    // A code chosen between two: msg(unclosed ? 'importUnclosed' : 'importInvalidLine', …).
    for (const m of text.matchAll(/\bmsg\(\s*[\w.]+ \? '([A-Za-z0-9_]+)' : '([A-Za-z0-9_]+)'/g)) used.add(m[1]).add(m[2]);
    // Every AppError code thrown (UPPER_SNAKE literals), but validation's catch-all and the codes libraries give their own errors.
    for (const m of text.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)) if (!LIBRARY_CODES.includes(m[1])) used.add(m[1]);
  }

  it('every code the code base uses has an English, a French and an Arabic text', () => {
    expect(used.size).to.be.above(100);
    // zod's own words (a schema that gave none) reach a page by this one.
    used.add(decode(foreign('Invalid input', 'phone'))!.code);
    const missing = [...used].flatMap((c) => ['en', 'fr', 'ar'].filter((lng) => !CATALOGUES[lng][c]?.trim()).map((lng) => `${lng}: ${c}`));
    expect(missing).to.deep.equal([]);
  });

  it("a schema's message keeps its code for the pages and its English for the API", () => {
    const schema = z.object({ name: requiredText('Client name', 5) });
    let error: unknown;
    try {
      parse(schema, { name: 'much too long' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ValidationError);
    const v = error as ValidationError;
    expect(v.fields).to.deep.equal({ name: 'Client name must be at most 5 characters' });
    expect(v.codes).to.deep.equal({ name: { code: 'tooLong', params: { label: 'Client name', max: 5 } } });
    expect(english(decode(msg('tooLong', { label: 'Notes', max: 9 }))!)).to.equal('Notes must be at most 9 characters');
  });

  it('a page shows the French and Arabic text of the code, whatever the English says', async () => {
    const i18n = createI18n();
    const v = new ValidationError({ clientName: msg('required', { label: 'Client name' }) });
    // Rewording the English would not change the pages: they read the code.
    const onPage = errorsByInput(v, { clientName: 'client_name' }).client_name;
    for (const [lng, expected] of [
      ['fr', 'Le nom du client est obligatoire'],
      ['ar', CATALOGUES.ar.required.replace('{{label}}', '')],
    ] as const) {
      const t = i18n.getFixedT(lng);
      const shown = localeHelpers(lng, t).message(onPage);
      if (lng === 'fr') expect(shown).to.equal(expected);
      else
        expect(shown)
          .to.contain(expected.trim())
          .and.not.match(/[A-Za-z]{3}/);
    }
  });
});

describe('no message reaches a page without its code', () => {
  it('an error made from a text without a code is refused at once, whatever the kind of error', () => {
    const plainText = 'Rewritten in English only' as Message;
    expect(() => new ValidationError({ phone: plainText })).to.throw(TypeError, /without a code/);
    expect(() => new ValidationError({ phone: msg('phoneInvalid') }, plainText)).to.throw(TypeError, /without a code/);
    expect(() => new ConflictError(plainText, 'SOME_CODE')).to.throw(TypeError, /without a code/);
    expect(() => new AppError(400, plainText)).to.throw(TypeError, /without a code/);
  });

  it('the API keeps its English words: the catalogue’s for a code, zod’s own for a schema that gave none', () => {
    const refused = new ValidationError({ phone: msg('phoneInvalid'), status: foreign('Invalid input: expected string', 'status') });
    expect(refused.fields).to.deep.equal({ phone: 'Enter a valid Moroccan phone number, e.g. 06 12 34 56 78', status: 'Invalid input: expected string' });
    expect(refused.codes.status).to.include({ code: 'notValid' });
    const conflict = new ConflictError(msg('tooManyStores', { max: 20 }), 'TOO_MANY_STORES');
    expect(conflict.message).to.equal('A workspace has at most 20 store connections');
    expect(conflict.page).to.deep.equal({ code: 'tooManyStores', params: { max: 20 } });
  });

  it('a page never finds a message by its English text: a text without a code is shown as it is, never looked up', () => {
    const i18n = createI18n();
    for (const lng of ['fr', 'ar'] as const) {
      const helpers = localeHelpers(lng, i18n.getFixedT(lng));
      // The English of a catalogue message, without its code, is not translated (there is no English-matching fallback)…
      expect(helpers.message('Order not found')).to.equal('Order not found');
      // …while the same message by its code is.
      expect(helpers.message(msg('orderNotFound'))).to.equal(CATALOGUES[lng].orderNotFound);
    }
  });

  it('no error, field error or schema in services/ and routes/ is written as a literal text: each is a msg() with its code', () => {
    const code = [...sources('services'), ...sources('routes')];
    // The errors pages show: AppError and every class made from it.
    const kinds = new Set(['AppError']);
    for (let grown = true; grown; ) {
      grown = false;
      for (const text of code)
        for (const [, name, parent] of text.matchAll(/class (\w+) extends (\w+)/g)) if (kinds.has(parent) && !kinds.has(name)) grown = Boolean(kinds.add(name));
    }
    expect([...kinds]).to.include.members(['ValidationError', 'NotFoundError', 'ConflictError', 'ForbiddenError', 'GoneError']);
    const literal = [
      // new NotFoundError('…'), new AppError(400, '…')
      new RegExp(`new (?:${[...kinds].join('|')})\\((?:\\d+, )?['\`"]`),
      // z.string({ error: '…' }), z.enum(…, { error: '…' }), ctx.addIssue({ …, message: '…' }) (not a JSON answer's `error`)
      /(?:\(|, )\{ (?:[\w]+: [^,{}]+, )*(?:error|message): ['`"]/,
      // .min(1, '…'), .regex(/…/, '…'), .refine(…, '…'), .int('…')
      /\.(?:min|max|int|regex|refine|length|positive|nonnegative)\((?:(?:[^()]|\([^()]*\))*, )?['`"]/,
      // fields.phone = '…', fields[name] = `…`
      /\bfields(?:\.\w+|\[[^\]]+\]) \??\??= ['`"]/,
    ];
    const offending = code.flatMap((text) =>
      text
        .split('\n')
        .filter((line) => !/\blog(?:ger)?\.|\blines\.\w+\(|\.json\(/.test(line) && literal.some((pattern) => pattern.test(line)))
        .map((line) => line.trim()),
    );
    expect(offending).to.deep.equal([]);
  });
});

/** The services on the test database, for what no route does (a call the service ends itself). */
const callServices = (() => {
  let made: ReturnType<typeof createServices> | undefined;
  return () => (made ??= createServices(testKnex(), loadConfig({ ...TEST_ENV }), new Jobs(testKnex())));
})();

/** A shop whose owner reads the pages in `language`. */
async function shopIn(language: string): Promise<SignedIn> {
  const shop = await signUp();
  await shop.agent
    .post('/account/language')
    .type('form')
    .send({ _csrf: await csrfOf(shop.agent, '/orders/new'), language })
    .expect(303);
  return shop;
}

/** A message as a page writes it in `lng` (EJS escapes it once). */
function onPage(lng: 'fr' | 'ar', message: Message): string {
  const text = localeHelpers(lng, createI18n().getFixedT(lng)).message(message);
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c]!);
}

describe('refusals once found by their English text, on French and Arabic pages', () => {
  for (const lng of ['fr', 'ar'] as const) {
    /** The page shows the message in its language, and not its English. */
    const shows = (html: string, message: Message) => {
      const translated = onPage(lng, message);
      expect(translated, 'a text of its own').not.to.equal(english(decode(message)!));
      expect(html, lng).to.contain(translated);
      expect(html, lng).not.to.contain(english(decode(message)!));
    };

    it(`${lng}: an import refused for its header`, async () => {
      const shop = await shopIn(lng);
      const page = await shop.agent.get('/orders/import').expect(200);
      const res = await shop.agent
        .post('/orders/import')
        .field('_csrf', csrfFrom(page.text))
        .attach('file', Buffer.from('name,store,products\nAmina,Souk,Thé\n'), { filename: 'orders.csv', contentType: 'text/csv' })
        .expect(400);
      shows(res.text, msg('importNoColumn', { label: 'phone', names: COLUMN_NAMES.phone.join(', ') }));
      shows(res.text, msg('importHeader'));
    });

    it(`${lng}: a store connection refused for its shop address`, async () => {
      const shop = await shopIn(lng);
      const csrf = await csrfOf(shop.agent, '/stores/new');
      const res = await shop.agent.post('/stores').type('form').send({ _csrf: csrf, kind: 'shopify', name: 'Atlas', shop: 'atlas.com' }).expect(400);
      shows(res.text, msg('shopifyShop', { label: 'Shop address' }));
      expect(await testKnex()('store_connections').where({ workspace_id: shop.workspaceId })).to.deep.equal([]);
    });

    it(`${lng}: an order refused for its phone number, and a number blocked twice`, async () => {
      const shop = await shopIn(lng);
      const csrf = await csrfOf(shop.agent, '/orders/new');
      const res = await shop.agent
        .post('/orders')
        .type('form')
        .send({ _csrf: csrf, client_name: 'Imane', phone: '12', store_name: 'Souk', products_name: 'Thé' })
        .expect(400);
      shows(res.text, msg('phoneInvalid'));
      await shop.agent.post('/api/settings/blocked-phones').send({ phone: '0612345678' }).expect(201);
      const again = await shop.agent
        .post('/settings/blocked-phones')
        .type('form')
        .send({ _csrf: await csrfOf(shop.agent, '/settings'), phone: '06 12 34 56 78', reason: '' })
        .expect(409);
      shows(again.text, msg('PHONE_ALREADY_BLOCKED'));
    });

    it(`${lng}: invitation links that do not exist or were withdrawn`, async () => {
      const visitor = request.agent(appUrl());
      await visitor.post('/account/language').type('form').send({ language: lng }).expect(303);
      const missing = await visitor.get(`/join/${'x'.repeat(43)}`).expect(404);
      shows(missing.text, msg('inviteMissing'));
      const owner = await signUp();
      const path = await invitationPath(owner, `withdrawn-${Date.now()}@example.test`);
      const { body } = await owner.agent.get('/api/workspace/invitations').expect(200);
      await owner.agent.delete(`/api/workspace/invitations/${body.invitations[0].id}`).expect(204);
      shows((await visitor.get(path).expect(410)).text, msg('inviteWithdrawn'));
    });

    it(`${lng}: a call the service ended itself ("agent unreachable") on the order page; the API keeps its words`, async () => {
      const shop = await shopIn(lng);
      await openAllDay(shop);
      const order = await createOrder(shop);
      const { body } = await shop.agent.post('/api/calls/next').expect(200);
      expect(await callServices().calls.fail(body.call.id, msg('callAgentUnreachable'))).to.equal(true);
      expect(await testKnex()('calls').where({ id: body.call.id }).first()).to.include({ outcome: 'failed', ended_by: 'system', summary: 'agent unreachable' });
      shows((await shop.agent.get(`/orders/${order.id}`).expect(200)).text, msg('callAgentUnreachable'));
    });

    it(`${lng}: a webhook endpoint a member disabled, and the test event it then refuses`, async () => {
      const shop = await shopIn(lng);
      const { body: endpoint } = await shop.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201);
      const csrf = await csrfOf(shop.agent, `/webhooks/${endpoint.id}`);
      await shop.agent.post(`/webhooks/${endpoint.id}/enabled`).type('form').send({ _csrf: csrf, enabled: 'false' }).expect(303);
      shows((await shop.agent.get(`/webhooks/${endpoint.id}`).expect(200)).text, msg('hookDisabledByMember'));
      expect(await testKnex()('webhook_endpoints').where({ id: endpoint.id }).first()).to.include({
        enabled: false,
        disabled_reason: 'Disabled by a member of the workspace',
      });
      await shop.agent.post(`/webhooks/${endpoint.id}/test`).type('form').send({ _csrf: csrf }).expect(303);
      shows((await shop.agent.get(`/webhooks/${endpoint.id}`).expect(200)).text, msg('WEBHOOK_DISABLED'));
    });

    it(`${lng}: why a webhook delivery failed — the service's words by their code, the endpoint's answer as data; the API keeps its English`, async () => {
      const server = http.createServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('boom'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const sender = new SignedSender(true, 2000);
      try {
        const shop = await shopIn(lng);
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
        const { body: endpoint } = await shop.agent.post('/api/webhooks').send({ url }).expect(201);
        await shop.agent.post(`/api/webhooks/${endpoint.id}/test`).expect(202);
        const page = () => shop.agent.get(`/webhooks/${endpoint.id}`).expect(200);
        const delivery = () => testKnex()('webhook_deliveries').where({ endpoint_id: endpoint.id }).first();
        await callServices().webhooks.drain(endpoint.id, (m) => sender.send(m));
        const answered = msg('hookErrAnswer', { reason: msg('hookErrHttpStatus', { value: '500' }), answer: 'boom' });
        expect(await delivery()).to.include({ status: 'pending', last_error: 'HTTP 500: boom' });
        expect((await delivery()).last_error_code).to.deep.equal(decode(answered));
        shows((await page()).text, answered);
        const api = await shop.agent.get(`/api/webhooks/${endpoint.id}/deliveries`).expect(200);
        expect(api.body.deliveries[0].last_error).to.equal('HTTP 500: boom');

        // Failing for more than 5 days: the next failure disables the endpoint and fails what was pending.
        await testKnex()('webhook_endpoints')
          .where({ id: endpoint.id })
          .update({ failing_since: testKnex().raw("now() - interval '6 days'") });
        await testKnex()('webhook_deliveries')
          .where({ endpoint_id: endpoint.id })
          .update({ next_attempt_at: testKnex().raw("now() - interval '1 second'") });
        await callServices().webhooks.drain(endpoint.id, (m) => sender.send(m));
        expect(await delivery()).to.include({ status: 'failed', last_error: 'endpoint disabled after 5 days of failures' });
        shows((await page()).text, msg('hookDroppedAuto', { days: 5 }));

        // Enabled again, a test event queued, then disabled by a member: the pending delivery says so.
        await shop.agent.put(`/api/webhooks/${endpoint.id}`).send({ enabled: true }).expect(200);
        await shop.agent.post(`/api/webhooks/${endpoint.id}/test`).expect(202);
        await shop.agent.put(`/api/webhooks/${endpoint.id}`).send({ enabled: false }).expect(200);
        const dropped = await testKnex()('webhook_deliveries').where({ endpoint_id: endpoint.id, last_error: 'endpoint disabled' });
        expect(dropped).to.have.length(1);
        expect(dropped[0].last_error_code).to.deep.equal(decode(msg('hookDroppedByMember')));
        shows((await page()).text, msg('hookDroppedByMember'));

        // A transport failure the service names itself (nothing listens on port 9).
        const { body: refused } = await shop.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks' }).expect(201);
        await shop.agent.post(`/api/webhooks/${refused.id}/test`).expect(202);
        await callServices().webhooks.drain(refused.id, (m) => sender.send(m));
        expect(await testKnex()('webhook_deliveries').where({ endpoint_id: refused.id }).first()).to.include({ last_error: 'connection refused' });
        shows((await shop.agent.get(`/webhooks/${refused.id}`).expect(200)).text, msg('hookErrConnectionRefused'));
      } finally {
        sender.close();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it(`${lng}: a statistics period that is not one`, async () => {
      const shop = await shopIn(lng);
      shows((await shop.agent.get('/stats').query({ from: '2026-11-30', to: '2026-11-01' }).expect(400)).text, msg('fromBeforeTo'));
      shows((await shop.agent.get('/stats').query({ from: 'yesterday' }).expect(400)).text, msg('dateSuchAs', { label: 'from' }));
      shows((await shop.agent.get('/stats').query({ from: '2024-01-01', to: '2026-11-01' }).expect(400)).text, msg('maxDays', { days: MAX_DAYS }));
    });
  }
});
