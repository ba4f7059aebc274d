import { expect } from 'chai';
import request from 'supertest';
import { app, csrfFrom, invitationPath, signUp, uniqueEmail } from './helpers/app';
import { testKnex } from './helpers/db';

/** A fresh visitor's agent whose browser asks for `language`. */
async function visitor(language: string) {
  const agent = request.agent(app());
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
