import { expect } from 'chai';
import request from 'supertest';
import { createI18n } from '../../routes/middleware/i18n';
import { localeHelpers } from '../../routes/pages/view-helpers';
import { appUrl, csrfOf, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/** `<html …>` of a page. */
const htmlTag = (html: string) => /<html[^>]*>/.exec(html)?.[0];
const languageOf = async (agent: { get(path: string): request.Test }, path = '/workspace') => htmlTag((await agent.get(path).expect(200)).text);

describe('languages: which one a page speaks (languages.md)', () => {
  describe('choosing the language', () => {
    it('follows Accept-Language among en, fr, ar (regional variants count), else English', async () => {
      expect(htmlTag((await request(appUrl()).get('/login').set('Accept-Language', 'ar-MA,ar;q=0.9').expect(200)).text)).to.equal('<html lang="ar" dir="rtl">');
      expect(htmlTag((await request(appUrl()).get('/login').set('Accept-Language', 'fr-FR,fr;q=0.9,en;q=0.8').expect(200)).text)).to.equal('<html lang="fr">');
      expect(htmlTag((await request(appUrl()).get('/login').set('Accept-Language', 'de-DE,es;q=0.5').expect(200)).text)).to.equal('<html lang="en">');
      expect(htmlTag((await request(appUrl()).get('/login').expect(200)).text)).to.equal('<html lang="en">');
    });

    it("a visitor's switcher sets the lang cookie, opens no session, and the cookie beats Accept-Language", async () => {
      const page = await request(appUrl()).get('/login').expect(200);
      expect(page.text)
        .to.contain('action="/account/language"')
        .and.contain('<button type="submit" class="link" name="language" value="ar" lang="ar">العربية</button>');
      const res = await request(appUrl()).post('/account/language').type('form').send({ language: 'ar', next: '/login' }).expect(303);
      expect(res.headers.location).to.equal('/login');
      const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
      expect(cookies).to.have.length(1);
      expect(cookies[0]).to.match(/^lang=ar; Max-Age=\d+; Path=\/; Expires=.*; HttpOnly; SameSite=Lax$/);
      const again = await request(appUrl()).get('/login').set('Cookie', 'lang=ar').set('Accept-Language', 'fr').expect(200);
      expect(htmlTag(again.text)).to.equal('<html lang="ar" dir="rtl">');
      // A page with no form of its own: its switcher opens no session.
      const missing = await request(appUrl()).get('/no-such-page').set('Cookie', 'lang=fr').expect(404);
      expect(htmlTag(missing.text)).to.equal('<html lang="fr">');
      expect(missing.text).to.contain('action="/account/language"');
      expect(missing.headers['set-cookie']).to.equal(undefined);
    });

    it('refuses a language it does not have, and an address off the site as `next`', async () => {
      await request(appUrl()).post('/account/language').type('form').send({ language: 'de' }).expect(400);
      const res = await request(appUrl()).post('/account/language').type('form').send({ language: 'fr', next: '//evil.example' }).expect(303);
      expect(res.headers.location).to.equal('/');
    });

    it("a signed-in user's choice needs the form's CSRF token", async () => {
      const user = await signUp();
      await user.agent.post('/account/language').type('form').send({ language: 'fr' }).expect(403);
    });

    it("the user's saved choice beats the cookie and the browser, and follows them to another device and after signing out", async () => {
      const user = await signUp();
      const csrf = await csrfOf(user.agent);
      await user.agent.post('/account/language').type('form').send({ _csrf: csrf, language: 'ar', next: '/orders' }).expect(303).expect('Location', '/orders');
      expect((await testKnex()('users').where({ id: user.userId }).first()).language).to.equal('ar');
      expect(await languageOf(user.agent)).to.equal('<html lang="ar" dir="rtl">');

      // Another device: a French browser with an English cookie, signing in.
      const phone = request.agent(appUrl());
      const login = await phone.get('/login').set('Cookie', 'lang=en').expect(200);
      const token = /name="_csrf" value="([^"]+)"/.exec(login.text)![1];
      await phone.post('/login').set('Accept-Language', 'fr').type('form').send({ _csrf: token, email: user.email, password: user.password }).expect(303);
      expect(htmlTag((await phone.get('/workspace').set('Accept-Language', 'fr').set('Cookie', 'lang=en').expect(200)).text)).to.equal(
        '<html lang="ar" dir="rtl">',
      );

      // Signing out and in again on the first device.
      await user.agent
        .post('/logout')
        .type('form')
        .send({ _csrf: await csrfOf(user.agent) })
        .expect(303);
      const again = await user.agent.get('/login').expect(200);
      await user.agent
        .post('/login')
        .type('form')
        .send({ _csrf: /name="_csrf" value="([^"]+)"/.exec(again.text)![1], email: user.email, password: user.password })
        .expect(303);
      expect(await languageOf(user.agent)).to.equal('<html lang="ar" dir="rtl">');
    });

    it('a change made on one device reaches the sessions already open on the others', async () => {
      const user = await signUp();
      const phone = request.agent(appUrl());
      const login = await phone.get('/login').expect(200);
      await phone
        .post('/login')
        .type('form')
        .send({ _csrf: /name="_csrf" value="([^"]+)"/.exec(login.text)![1], email: user.email, password: user.password })
        .expect(303);
      expect(await languageOf(phone)).to.equal('<html lang="en">');
      await user.agent.put('/api/account').send({ language: 'fr' }).expect(200, { language: 'fr' });
      expect(await languageOf(user.agent)).to.equal('<html lang="fr">');
      expect(await languageOf(phone)).to.equal('<html lang="fr">');
    });
  });

  describe('PUT /api/account', () => {
    it('saves en, fr or ar; anything else is a 400 with an English error code', async () => {
      const user = await signUp();
      await user.agent.put('/api/account').send({ language: 'ar' }).expect(200, { language: 'ar' });
      expect(await languageOf(user.agent)).to.equal('<html lang="ar" dir="rtl">');
      for (const language of ['de', 'AR', '', null, 3]) {
        const res = await user.agent.put('/api/account').set('Accept-Language', 'ar').send({ language }).expect(400);
        expect(res.body.code).to.equal('VALIDATION_ERROR');
        expect(res.body.fields).to.have.property('language');
      }
      await user.agent.put('/api/account').send({}).expect(400);
    });

    it('needs a session', async () => {
      await request(appUrl()).put('/api/account').send({ language: 'fr' }).expect(401);
    });
  });

  describe('one request, one language', () => {
    it('concurrent requests in three languages each get their own, never a neighbour’s', async () => {
      const users = await Promise.all(
        ['en', 'fr', 'ar'].map(async (language) => {
          const user = await signUp();
          await user.agent.put('/api/account').send({ language }).expect(200);
          return { user, language };
        }),
      );
      const expected: Record<string, string> = { en: 'Orders', fr: 'Commandes', ar: 'الطلبات' };
      const pages = await Promise.all(
        Array.from({ length: 36 }, (_, i) => users[i % 3]).map(async ({ user, language }) => ({
          language,
          html: (await user.agent.get('/workspace').expect(200)).text,
        })),
      );
      for (const { language, html } of pages) {
        expect(htmlTag(html)).to.match(new RegExp(`^<html lang="${language}"`));
        expect(html).to.contain(`<a href="/orders">${expected[language]}</a>`);
        for (const other of Object.keys(expected).filter((l) => l !== language)) expect(html).not.to.contain(`<a href="/orders">${expected[other]}</a>`);
      }
    });
  });

  describe('printing', () => {
    it('a translation with data in it is escaped exactly once: "Ali & Co"', async () => {
      const i18n = createI18n();
      expect(i18n.getFixedT('fr')('layout.times', { zone: 'Ali & Co <b>' })).to.equal('Heures du Maroc (Ali & Co <b>).');
      const user = await signUp({ workspace: 'Ali & Co' });
      await user.agent.put('/api/account').send({ language: 'fr' }).expect(200);
      const html = (await user.agent.get('/workspace').expect(200)).text;
      expect(html).to.contain('Ali &amp; Co').and.not.contain('&amp;amp;');
    });

    it('dates, amounts and plurals come from Intl for en-MA, fr-MA and ar-MA, with Western digits', () => {
      const i18n = createI18n();
      const en = localeHelpers('en', i18n.getFixedT('en'));
      const fr = localeHelpers('fr', i18n.getFixedT('fr'));
      const ar = localeHelpers('ar', i18n.getFixedT('ar'));
      const at = '2026-11-22T00:22:00Z';
      expect(en.formatDate(at)).to.equal('22 Nov 2026, 01:22');
      expect(fr.formatDate(at)).to.equal('22 nov. 2026, 01:22');
      expect(ar.formatDate(at)).to.contain('2026').and.contain('01:22').and.not.match(/[٠-٩]/);
      expect(fr.formatAmount(349)).to.equal('349,00\u00a0MAD');
      expect(ar.formatAmount(349)).to.contain('349,00').and.contain('د.م.');
      // An order's amount comes as text, in the order's own currency.
      expect(en.formatAmount('349.00')).to.equal('MAD\u00a0349.00');
      expect(fr.formatAmount('349.00', 'EUR')).to.equal('349,00\u00a0€');
      expect(fr.formatMoney('449.75')).to.equal('449,75');
      expect(en.formatNumber(12345.5)).to.equal('12,345.5');
      expect(ar.formatNumber(12345.5)).to.not.match(/[٠-٩]/);
      const count = (t: ReturnType<typeof i18n.getFixedT>, n: number) => t('orders.captionAll', { count: n }).split('،')[0].split(',')[0];
      expect([1, 2].map((n) => count(i18n.getFixedT('en'), n))).to.deep.equal(['1 order', '2 orders']);
      expect([1, 2, 1_000_000].map((n) => count(i18n.getFixedT('fr'), n))).to.deep.equal(['1 commande', '2 commandes', '1\u202f000\u202f000 de commandes']);
      expect([0, 1, 2, 3, 11, 100].map((n) => count(i18n.getFixedT('ar'), n))).to.deep.equal(['0 طلبات', 'طلب واحد', 'طلبان', '3 طلبات', '11 طلبًا', '100 طلب']);
    });

    it('statuses keep their API values and show translated', async () => {
      const i18n = createI18n();
      expect(localeHelpers('fr', i18n.getFixedT('fr')).statusLabel('confirmed')).to.equal('confirmée');
      expect(localeHelpers('ar', i18n.getFixedT('ar')).statusLabel('confirmed')).to.equal('مؤكد');
      expect(localeHelpers('en', i18n.getFixedT('en')).statusLabel('no-answer')).to.equal('no answer');
    });
  });
});
