import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import { csrfFrom, signUp, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/**
 * Issue 53, friction 16 and "what must hold" 10: where this server offers no one-click connection
 * (SHOPIFY_CLIENT_ID, YOUCAN_CLIENT_ID … unset), /stores/new offers the manual way first, in the
 * owner's words: no server setting is named to the shop. Shopify's manual way works end to end;
 * YouCan has no manual way for a shop (its dashboard has no webhook screen), so none is offered: the
 * page says so and points to the order import and the order form instead.
 */

const SHOPIFY_ORDER = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'stores', 'shopify-orders-create.json'));
/** What a shop is never asked to act on: the server's settings, and a host to ask. */
const SERVER_WORDS = [/CLIENT_ID/, /CLIENT_SECRET/, /your host/i, /hébergeur/, /المستضيف/];

/** The page's main content, without the navigation. */
const mainOf = (html: string) => /<main[\s\S]*<\/main>/.exec(html)?.[0] ?? html;

describe('stores: the manual way first where one click is not offered (issue 53, friction 16)', () => {
  // No SHOPIFY_CLIENT_ID / YOUCAN_CLIENT_ID: the tests' configuration sets none.
  let plain: ReturnType<typeof testApp>;
  before(() => {
    plain = testApp();
  });

  async function ownerIn(language: 'en' | 'fr' | 'ar') {
    const owner = await signUp({ target: plain, name: 'Karima Bennani' });
    await owner.agent.put('/api/account').send({ language }).expect(200);
    return owner;
  }

  const cases = [
    {
      language: 'en' as const,
      heading: 'Connect by hand',
      shopify: 'Connecting in one click is not offered for Shopify on this service. Connect by hand',
      youcan: 'YouCan cannot be connected to this service yet',
      importLink: '<a href="/orders/import">Import orders</a>',
    },
    {
      language: 'fr' as const,
      heading: 'Connecter à la main',
      shopify: 'La connexion en un clic n’est pas proposée pour Shopify sur ce service. Connectez à la main',
      youcan: 'YouCan ne peut pas encore être connecté à ce service',
      importLink: '<a href="/orders/import">Importer des commandes</a>',
    },
    {
      language: 'ar' as const,
      heading: 'الربط يدويًا',
      shopify: 'الربط بنقرة واحدة غير متاح لـ Shopify في هذه الخدمة.',
      youcan: 'لا يمكن ربط YouCan بهذه الخدمة بعد',
      importLink: '<a href="/orders/import">استيراد الطلبات</a>',
    },
  ];

  for (const c of cases) {
    it(`${c.language}: Shopify's page opens on the manual form and its guide; YouCan's says it cannot be connected and where orders can come in; no server setting named`, async () => {
      const owner = await ownerIn(c.language);
      const shopify = mainOf((await owner.agent.get('/stores/new?kind=shopify').expect(200)).text);
      expect(shopify).to.contain(`<h2>${c.heading}</h2>`).and.contain(c.shopify);
      expect(shopify).to.contain('action="/stores"').and.not.contain('action="/stores/connect"');
      // The heading, then the form, then the guide to the Shopify admin.
      const [heading, form, guide] = [shopify.indexOf(c.heading), shopify.indexOf('action="/stores"'), shopify.indexOf('id="guide-heading"')];
      expect(heading).to.be.above(-1).and.below(form);
      expect(form).to.be.below(guide);
      expect(shopify).to.contain('name="secret"');
      for (const words of SERVER_WORDS) expect(shopify, String(words)).to.not.match(words);

      const youcan = mainOf((await owner.agent.get('/stores/new?kind=youcan').expect(200)).text);
      expect(youcan).to.contain(c.youcan).and.contain(c.importLink).and.contain('<a href="/orders/new">');
      expect(youcan, 'no manual YouCan form').to.not.contain('action="/stores"').and.not.contain('name="secret"');
      expect(youcan).to.not.contain('action="/stores/connect"');
      for (const words of SERVER_WORDS) expect(youcan, String(words)).to.not.match(words);

      // WooCommerce needs nothing from the server: one click stays first.
      const woo = mainOf((await owner.agent.get('/stores/new?kind=woocommerce').expect(200)).text);
      expect(woo.indexOf('action="/stores/connect"')).to.be.above(-1).and.below(woo.indexOf('action="/stores"'));
    });
  }

  it('a one-click attempt anyway (an old tab) lands back on the form with a reason in the shop’s words, and nothing is made', async () => {
    const owner = await ownerIn('fr');
    const page = await owner.agent.get('/stores/new?kind=woocommerce').expect(200);
    const res = await owner.agent
      .post('/stores/connect')
      .type('form')
      .send({ _csrf: csrfFrom(page.text), kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com' })
      .expect(303);
    expect(res.headers.location).to.equal('/stores/new?kind=shopify&connect_error=not_configured');
    const back = mainOf((await owner.agent.get(res.headers.location).expect(200)).text);
    expect(back).to.contain('La connexion en un clic n’est pas proposée pour cette plateforme sur ce service : rien n’a été connecté.');
    for (const words of SERVER_WORDS) expect(back, String(words)).to.not.match(words);
    expect(back).to.contain('action="/stores"');
    expect(await testKnex()('store_connections').where({ workspace_id: owner.workspaceId })).to.deep.equal([]);
  });

  it('Shopify by hand, from that page: the form (CSRF, one-time token) makes the connection, and an order signed with the pasted key arrives', async () => {
    const owner = await ownerIn('en');
    await owner.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
    const page = (await owner.agent.get('/stores/new?kind=shopify').expect(200)).text;
    const key = 'shopify-webhook-signing-key-3f9a';
    const made = await owner.agent
      .post('/stores')
      .type('form')
      .send({
        _csrf: csrfFrom(page),
        _once: /name="_once" value="([^"]+)"/.exec(page)![1],
        kind: 'shopify',
        name: 'Atlas Shopify',
        shop: '',
        secret: key,
        cod_only: 'true',
      })
      .expect(200);
    const connection = await testKnex()('store_connections').where({ workspace_id: owner.workspaceId }).first();
    expect(connection).to.include({ kind: 'shopify', name: 'Atlas Shopify', enabled: true });
    // Its page gives the intake URL to paste into the Shopify admin.
    expect(made.text).to.contain(`/hooks/stores/${connection.id}`);
    const signature = crypto.createHmac('sha256', key).update(SHOPIFY_ORDER).digest('base64');
    const delivered = await request(plain)
      .post(`/hooks/stores/${connection.id}`)
      .set('Content-Type', 'application/json')
      .set('X-Shopify-Topic', 'orders/create')
      .set('X-Shopify-Webhook-Id', crypto.randomUUID())
      .set('X-Shopify-Hmac-Sha256', signature)
      .send(SHOPIFY_ORDER.toString('utf8'))
      .expect(200);
    expect(delivered.body.result).to.equal('created');
    const orders = await testKnex()('orders').where({ workspace_id: owner.workspaceId });
    expect(orders).to.have.length(1);
    expect(orders[0]).to.include({ source: 'shopify', store_connection_id: connection.id, store_name: 'Atlas Shopify', status: 'pending' });
  });
});
