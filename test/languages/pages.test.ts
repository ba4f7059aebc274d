import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import { elide } from '../../routes/middleware/i18n';
import { appUrl, csrfFrom, csrfOf, invitationPath, signUp, uniqueEmail } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, ORDER, openAllDay } from '../helpers/loop';

/** A fresh visitor's agent whose browser asks for `language`. */
async function visitor(language: string) {
  const agent = request.agent(appUrl());
  await agent.post('/account/language').type('form').send({ language }).expect(303);
  return agent;
}

const errorBeside = (html: string, field: string) => new RegExp(`<p class="error" id="f-${field}-error">([^<]*)</p>`).exec(html)?.[1];

describe('languages: form errors, notices and plurals on the pages', () => {
  it('a form error beside its field in each language, the data typed kept and escaped once', async () => {
    const expected = {
      en: {
        email: 'Enter a valid email address',
        password: 'Password must be at least 8 characters',
        summary: '2 fields need fixing: the message is beside each one.',
      },
      fr: {
        email: 'Saisissez une adresse e-mail valide',
        password: 'Le mot de passe doit faire au moins 8 caractères',
        summary: '2 champs sont à corriger : le message est à côté de chacun.',
      },
      ar: {
        email: 'أدخل بريدًا إلكترونيًا صحيحًا',
        password: 'يجب أن تتكون كلمة المرور من 8 أحرف على الأقل',
        summary: 'حقلان يحتاجان إلى تصحيح: الرسالة بجانب كل واحد منهما.',
      },
    };
    for (const [language, want] of Object.entries(expected)) {
      const agent = await visitor(language);
      const page = await agent.get('/signup').expect(200);
      const res = await agent
        .post('/signup')
        .type('form')
        .send({ _csrf: csrfFrom(page.text), name: 'Ali & Co', email: 'not-an-address', password: 'short', workspace: '' })
        .expect(400);
      expect(errorBeside(res.text, 'email'), language).to.equal(want.email);
      expect(errorBeside(res.text, 'password'), language).to.equal(want.password);
      expect(res.text, language).to.contain('value="Ali &amp; Co"').and.not.contain('&amp;amp;');
    }
  });

  it('a label inside a message is translated too: "Name is required"', async () => {
    const want = { en: 'Name is required', fr: 'Le nom est obligatoire', ar: 'الاسم مطلوب' };
    for (const [language, text] of Object.entries(want)) {
      const agent = await visitor(language);
      const page = await agent.get('/signup').expect(200);
      const res = await agent
        .post('/signup')
        .type('form')
        .send({ _csrf: csrfFrom(page.text), name: '', email: 'a@example.test', password: 'long enough password' })
        .expect(400);
      expect(errorBeside(res.text, 'name'), language).to.equal(text);
    }
  });

  it('the sign-in refusal and the error pages', async () => {
    const want = {
      en: ['Invalid email or password', 'Page not found', 'Your form has expired. Reload the page and try again.'],
      fr: ['E-mail ou mot de passe incorrect', 'Page introuvable', 'Le formulaire a expiré. Rechargez la page et réessayez.'],
      ar: ['البريد الإلكتروني أو كلمة المرور غير صحيحة', 'الصفحة غير موجودة', 'انتهت صلاحية النموذج. أعد تحميل الصفحة وحاول مرة أخرى.'],
    };
    for (const [language, [refusal, notFound, expired]] of Object.entries(want)) {
      const agent = await visitor(language);
      const page = await agent.get('/login').expect(200);
      const res = await agent
        .post('/login')
        .type('form')
        .send({ _csrf: csrfFrom(page.text), email: 'nobody@example.test', password: 'whatever it is' })
        .expect(401);
      expect(res.text, language).to.contain(`<p class="error" role="alert">${refusal}</p>`);
      expect((await agent.get('/no-such-page').expect(404)).text, language).to.contain(`<h1>${notFound}</h1>`);
      expect((await agent.post('/login').type('form').send({ _csrf: 'stale' }).expect(403)).text, language).to.contain(`<p>${expired}</p>`);
    }
  });

  it('a sentence with data in it keeps the data in its own <bdi>, escaped once: the join page in Arabic', async () => {
    const owner = await signUp({ workspace: 'Ali & Co' });
    const path = await invitationPath(owner, uniqueEmail('invited'));
    const agent = await visitor('ar');
    const res = await agent.get(path).expect(200);
    expect(res.text).to.contain('<h1>الانضمام إلى <bdi>Ali &amp; Co</bdi></h1>');
    expect(res.text).to.contain('<title>الانضمام إلى Ali &amp; Co · تأكيد الطلبات</title>');
  });

  it('a notice after a form post, in each language: no call to start', async () => {
    const want = {
      en: ['No call is due right now.', 'Calling hours are closed: no call can be started now.'],
      fr: ['Aucun appel à passer pour le moment.', 'Les heures d’appel sont terminées : impossible de lancer un appel maintenant.'],
      ar: ['لا توجد مكالمة مستحقة الآن.', 'أوقات الاتصال مغلقة: لا يمكن بدء أي مكالمة الآن.'],
    };
    for (const [language, notices] of Object.entries(want)) {
      const owner = await signUp();
      await owner.agent.put('/api/account').send({ language }).expect(200);
      const page = await owner.agent.get('/calls').expect(200);
      await owner.agent
        .post('/calls/next')
        .type('form')
        .send({ _csrf: csrfFrom(page.text) })
        .expect(303);
      const notice = /<p class="notice" role="status">([^<]*)<\/p>/.exec((await owner.agent.get('/calls').expect(200)).text)?.[1];
      expect(notices, language).to.include(notice);
    }
  });

  it('a plural: the orders list counts "1 order" and "2 orders" in each language (Arabic: its own forms)', async () => {
    const want = {
      en: ['1 order, newest first', '2 orders, newest first', '3 orders, newest first'],
      fr: ['1 commande, la plus récente en premier', '2 commandes, les plus récentes en premier', '3 commandes, les plus récentes en premier'],
      ar: ['طلب واحد، الأحدث أولًا', 'طلبان، الأحدث أولًا', '3 طلبات، الأحدث أولًا'],
    };
    for (const [language, captions] of Object.entries(want)) {
      const owner = await signUp();
      await owner.agent.put('/api/account').send({ language }).expect(200);
      for (const caption of captions) {
        await testKnex()('orders').insert({
          workspace_id: owner.workspaceId,
          client_name: 'Ali & Co',
          phone: '+212600000000',
          store_name: 'Atlas',
          products_name: 'Item',
          status: 'confirmed',
        });
        const html = (await owner.agent.get('/orders').expect(200)).text;
        expect(/<caption>([^<]*)<\/caption>/.exec(html)?.[1], language).to.equal(caption);
      }
    }
  });

  it('the statistics: the chart, its table and a period error in each language', async () => {
    const want = {
      en: ['<title id="chart-title">Orders and confirmations per day</title>', 'from must be a date such as 2026-11-22'],
      fr: ['<title id="chart-title">Commandes et confirmations par jour</title>', 'La date de début doit être une date comme 2026-11-22'],
      ar: ['<title id="chart-title">الطلبات والتأكيدات حسب اليوم</title>', 'تاريخ البداية يجب أن يكون تاريخًا مثل 2026-11-22'],
    };
    for (const [language, [title, error]] of Object.entries(want)) {
      const owner = await signUp();
      await owner.agent.put('/api/account').send({ language }).expect(200);
      expect((await owner.agent.get('/stats').expect(200)).text, language).to.contain(title);
      expect(errorBeside((await owner.agent.get('/stats?from=yesterday').expect(400)).text, 'from'), language).to.equal(error);
    }
  });
});

/** A signed-in owner reading the pages in `language`, calling all day, with a form-posting helper. */
async function shopIn(language: 'en' | 'fr' | 'ar') {
  const shop = await signUp();
  await shop.agent
    .post('/account/language')
    .type('form')
    .send({ _csrf: await csrfOf(shop.agent), language })
    .expect(303);
  await openAllDay(shop);
  const csrf = await csrfOf(shop.agent);
  const post = (path: string, form: Record<string, string> = {}) =>
    shop.agent
      .post(path)
      .type('form')
      .send({ _csrf: csrf, ...form });
  return { ...shop, post };
}

/** Claims the next call through the page form; its id. */
async function startCall(shop: Awaited<ReturnType<typeof shopIn>>): Promise<string> {
  const res = await shop.post('/calls/next').expect(303);
  return /^\/calls\/([0-9a-f-]{36})$/.exec(res.headers.location)![1];
}

const noticeOf = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
/** What a reader sees: the text outside the tags (attributes such as `datetime` or a date input's value are not read). */
const visibleText = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<[^>]*>/g, ' ');

describe('French elision and agreement, dates alike, one word per meaning', () => {
  it('fr: "Commande d’Imane" on the order page and "La commande d’Imane … est confirmée" after the call; a consonant (and a "y" before a vowel: Youssef) keeps "de"', async () => {
    const shop = await shopIn('fr');
    const imane = await createOrder(shop, { ...ORDER, clientName: 'Imane Alaoui' });
    const youssef = await createOrder(shop, { ...ORDER, clientName: 'Youssef Tazi', phone: '0661234567' });
    // A "y" before a vowel is a consonant: "de Youssef"; before a consonant, a vowel: "d’Yves".
    expect((await shop.agent.get(`/orders/${youssef.id}`).expect(200)).text).to.contain('<h1>Commande de <bdi>Youssef Tazi</bdi>');
    expect(elide('La commande de <bdi>Yves</bdi>')).to.equal('La commande d’<bdi>Yves</bdi>');
    const page = (await shop.agent.get(`/orders/${imane.id}`).expect(200)).text;
    expect(page).to.contain('<h1>Commande d’<bdi>Imane Alaoui</bdi>').and.contain('<title>Commande d’\u2068Imane Alaoui\u2069');
    expect(page).not.to.match(/de (<bdi>|\u2068)?Imane/);

    const first = await startCall(shop);
    const next = await shop.post(`/calls/${first}/outcome`, { outcome: 'confirmed' }).expect(303);
    expect(noticeOf((await shop.agent.get(next.headers.location).expect(200)).text)).to.equal('La commande d’Imane Alaoui est confirmée.');
    const second = /^\/calls\/([0-9a-f-]{36})$/.exec(next.headers.location)![1];
    await shop.post(`/calls/${second}/outcome`, { outcome: 'confirmed' }).expect(303).expect('Location', '/calls');
    expect(noticeOf((await shop.agent.get('/calls').expect(200)).text)).to.match(/^La commande de Youssef Tazi /);
    expect((await testKnex()('orders').where({ id: imane.id }).first()).status).to.equal('confirmed');
  });

  it('fr: the date a thing was added agrees with none: "Date d’ajout" for agents, blocked numbers and webhook endpoints (masculine words); "Ajoutée le" stays for an order', async () => {
    const shop = await shopIn('fr');
    await createOrder(shop);
    await shop.agent.post('/api/settings/blocked-phones').send({ phone: '0661234567' }).expect(201);
    await shop.agent
      .post('/api/webhooks')
      .send({ url: 'http://127.0.0.1:9/hooks', events: ['order.created'] })
      .expect(201);
    const agent = (await shop.agent.get('/api/agents').expect(200)).body.agents[0];
    for (const page of ['/agents', '/settings', '/webhooks', `/agents/${agent.id}`]) {
      const html = (await shop.agent.get(page).expect(200)).text;
      expect(html, page).to.contain('Date d’ajout').and.not.contain('Ajoutée le');
    }
    expect((await shop.agent.get('/orders').expect(200)).text).to.contain('Ajoutée le');
  });

  it('a plural field agrees with its verb: "Les produits sont obligatoires", "Products are required", "المنتجات مطلوبة"; a singular one keeps its own', async () => {
    const expected = {
      en: ['Products are required', 'Client name is required'],
      fr: ['Les produits sont obligatoires', 'Le nom du client est obligatoire'],
      ar: ['المنتجات مطلوبة', 'اسم الزبون مطلوب'],
    };
    for (const language of ['en', 'fr', 'ar'] as const) {
      const shop = await shopIn(language);
      const res = await shop.post('/orders', { client_name: ' ', phone: '0612345678', store_name: 'Souk', products_name: ' ' }).expect(400);
      expect([errorBeside(res.text, 'products_name'), errorBeside(res.text, 'client_name')], language).to.deep.equal(expected[language]);
    }
    const api = await (await shopIn('en')).agent
      .post('/api/orders')
      .send({ clientName: 'Imane', phone: '0612345678', storeName: 'Souk', productsName: '' })
      .expect(400);
    expect(api.body.fields.productsName).to.equal('Products are required');
    expect(await testKnex()('orders').where({ client_name: 'Imane', store_name: 'Souk', products_name: '' })).to.deep.equal([]);
  });

  for (const language of ['en', 'fr', 'ar'] as const) {
    it(`${language}: one order's times read the same on /orders, the order page and /calls; no ISO date in the text of /orders, the order page or /stats`, async () => {
      const shop = await shopIn(language);
      const order = await createOrder(shop);
      const callId = await startCall(shop);
      const tomorrow = new Intl.DateTimeFormat('sv-SE', { timeZone: 'Africa/Casablanca', year: 'numeric', month: '2-digit', day: '2-digit' }).format(
        new Date(Date.now() + 86_400_000),
      );
      await shop.post(`/calls/${callId}/outcome`, { outcome: 'postponed', callback_at: `${tomorrow}T15:30` }).expect(303);
      const nextAt = (await testKnex()('operations').where({ order_id: order.id }).first()).next_attempt_at.toISOString();

      const pages = {
        '/orders': (await shop.agent.get('/orders').expect(200)).text,
        [`/orders/${order.id}`]: (await shop.agent.get(`/orders/${order.id}`).expect(200)).text,
        '/calls': (await shop.agent.get('/calls').expect(200)).text,
        '/stats': (await shop.agent.get('/stats').expect(200)).text,
      };
      const shown = new Map<string, Set<string>>();
      for (const [path, html] of Object.entries(pages)) {
        for (const [, at, text] of html.matchAll(/<time datetime="([^"]+)">([^<]+)<\/time>/g)) {
          shown.set(at, (shown.get(at) ?? new Set()).add(text));
          expect(text, `${path}: ${at}`).not.to.match(/\d{4}-\d{2}-\d{2}/);
        }
      }
      // The next call (the callback) on all three pages, the order's creation on two of them: one form each.
      for (const path of ['/orders', `/orders/${order.id}`, '/calls']) expect(pages[path], path).to.contain(`<time datetime="${nextAt}">`);
      expect(pages['/orders']).to.contain(`<time datetime="${order.created_at}">`);
      expect(pages[`/orders/${order.id}`]).to.contain(`<time datetime="${order.created_at}">`);
      for (const [at, texts] of shown) expect([...texts], at).to.have.length(1);
      for (const path of ['/orders', `/orders/${order.id}`, '/stats']) expect(visibleText(pages[path]), path).not.to.match(/\b\d{4}-\d{2}-\d{2}\b/);
    });
  }

  for (const [language, notImported, declined, refusal] of [
    ['en', 'not imported', 'unconfirmed', /\brefused\b/],
    ['fr', 'non importé', 'refusée', /refus/i],
    ['ar', 'لم يُستورد', 'مرفوض', /مرفوض|رُفض/],
  ] as const) {
    it(`${language}: a store message we could not use is "${notImported}" on the store's log; a declined order is "${declined}", a word used for nothing else there`, async () => {
      const shop = await shopIn(language);
      const store = (await shop.agent.post('/api/stores').send({ kind: 'custom', name: 'Feuille' }).expect(201)).body;
      const raw = JSON.stringify({ type: 'order.created', data: { external_id: 'row-18', client_name: 'Karim', phone: '555-0100', products_name: 'Thé' } });
      const hook = await request(appUrl())
        .post(`/hooks/stores/${store.id}`)
        .set(signedHeaders(store.secret, newMessageId(), raw, new Date()))
        .set('Content-Type', 'application/json')
        .send(raw)
        .expect(200);
      expect(hook.body.result).to.equal('rejected');
      expect(await testKnex()('store_events').where({ connection_id: store.id })).to.have.length(1);
      const log = (await shop.agent.get(`/stores/${store.id}`).expect(200)).text;
      const section = log.slice(log.indexOf('id="log-heading"'));
      expect(section).to.contain(notImported);
      expect(visibleText(section)).not.to.match(refusal);

      const order = await createOrder(shop, { ...ORDER, phone: '0671234567' });
      const callId = await startCall(shop);
      await shop.post(`/calls/${callId}/outcome`, { outcome: 'unconfirmed' }).expect(303);
      expect((await testKnex()('orders').where({ id: order.id }).first()).status).to.equal('unconfirmed');
      const badge = /<span class="badge[^"]*">([^<]*)<\/span>/.exec((await shop.agent.get(`/orders/${order.id}`).expect(200)).text)?.[1];
      expect(badge).to.equal(declined);
    });
  }
});

describe('right to left: values isolated, not rows', () => {
  const NOTE = 'اتصلوا بعد العصر من فضلكم';
  const SUMMARY = 'الزبونة تريد التوصيل يوم الجمعة';

  it('fr: an Arabic note and an Arabic call summary on the order page sit in dir="auto" values; their rows carry no dir', async () => {
    const shop = await shopIn('fr');
    const order = await createOrder(shop, { ...ORDER, note: NOTE });
    const callId = await startCall(shop);
    await shop.post(`/calls/${callId}/outcome`, { outcome: 'confirmed', notes: SUMMARY }).expect(303);
    expect(await testKnex()('calls').where({ id: callId }).first()).to.include({ summary: SUMMARY });
    const html = (await shop.agent.get(`/orders/${order.id}`).expect(200)).text;
    expect(html).to.contain('<html lang="fr">');
    for (const value of [NOTE, SUMMARY]) {
      // The element right around the value isolates it…
      const element = new RegExp(`<(\\w+)([^>]*)>${value}<`).exec(html);
      expect(element, value).to.not.equal(null);
      expect(element![1] === 'bdi' || / dir="auto"/.test(element![2]), `${element![0]}`).to.equal(true);
    }
    // …and the rows around them keep the page's direction: the note's row of the list, the call's row of the table.
    const noteRow = new RegExp(`<div([^>]*)><dt>[^<]*</dt><dd[^>]*>${NOTE}<`).exec(html);
    expect(noteRow, 'the note in its own row of the list').to.not.equal(null);
    expect(noteRow![1]).not.to.contain('dir=');
    const callRow = new RegExp(`<tr([^>]*)>(?:(?!</tr>)[\\s\\S])*${SUMMARY}`).exec(html);
    expect(callRow, 'the summary in a row of the calls table').to.not.equal(null);
    expect(callRow![1]).not.to.contain('dir=');
    expect(callRow![0]).to.match(new RegExp(`<td(?![^>]*dir=)[^>]*>(?:(?!</td>)[\\s\\S])*${SUMMARY}`));
    expect(html, 'no row of a table or list is given a direction').not.to.match(/<(?:tr|li|dl|table)[^>]* dir=/);
  });

  it('ar: the phone and amount hints show their digit groups in reading order, each example in a left-to-right isolate', async () => {
    const shop = await shopIn('ar');
    const html = (await shop.agent.get('/orders/new').expect(200)).text;
    const hint = /<p class="hint" id="f-phone-hint">([^<]*)<\/p>/.exec(html)?.[1];
    expect(hint).to.equal('رقم مغربي بأي كتابة معتادة: \u206606 12 34 56 78\u2069، \u2066+212 6 12 34 56 78\u2069…');
    expect(hint).not.to.contain('78 56 34 12 06');
    expect(html).to.match(/<html lang="ar" dir="rtl">/);
    // The amount's examples too, written as the page writes numbers: "1.250,00" would read "250,00.1" without its isolate.
    const amount = /<p class="hint" id="f-total_amount-hint">([^<]*)<\/p>/.exec(html)?.[1];
    expect(amount).to.equal('كما تكتبه: \u20661.250\u2069 أو \u20661.250,00\u2069');
  });

  it('ar: every text of the catalogue that shows a number in groups (an amount, a phone, a date and time) holds it in a left-to-right isolate', () => {
    const flat = (node: unknown, key = ''): Array<[string, string]> =>
      typeof node === 'string' ? [[key, node]] : Object.entries(node as object).flatMap(([k, v]) => flat(v, key ? `${key}.${k}` : k));
    const ar = JSON.parse(fs.readFileSync(path.join(ROOT, 'locales', 'ar.json'), 'utf8'));
    // Outside the isolates, no digit is followed by a space and another digit.
    const bare = flat(ar).filter(([, text]) => /\d[ \u00a0\u202f]+\d/.test(text.replace(/\u2066[^\u2069]*\u2069/g, '')));
    expect(bare).to.deep.equal([]);
  });
});
