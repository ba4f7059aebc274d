import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { decodeHTML } from 'entities';
import request from 'supertest';
import { loadConfig, ROOT } from '../../config';
import { Jobs } from '../../db/jobs';
import { Secrets } from '../../integrations/secrets';
import { createServices } from '../../services';
import { TEMPLATE_TEXTS } from '../../services/whatsapp';
import { CallService, CallSettingsService } from '../../services/calls';
import type { RunningWorker } from '../../worker';
import { appUrl, csrfFrom, signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { agentDouble, grant, ORDER, openAllDay, orderRow, testWorker, waitFor } from '../helpers/loop';
import { newMessageId, signedHeaders } from '../../integrations/signing';
import {
  ACCESS_TOKEN,
  APP_SECRET,
  buttonMessage,
  callOf,
  deliver,
  envelope,
  graphDouble,
  imageMessage,
  interactiveReply,
  PHONE_NUMBER_ID,
  sentAnswer,
  sentOrder,
  status,
  textMessage,
  whatsappAgent,
  whatsappShop,
} from '../helpers/whatsapp';
import { opened } from '../helpers/secrets';

/** A page's words: tags dropped (each ends a line), entities decoded. */
const pageText = (html: string) => decodeHTML(html.replace(/<(script|style)[\s\S]*?<\/\1>/g, '').replace(/<[^>]+>/g, '\n')).replace(/[ \t]*\n[\n\s]*/g, '\n');
const operationsOf = (orderId: string) => testKnex()('operations').where({ order_id: orderId }).orderBy('ladder_step');
const AMINA = { ...ORDER, productsName: '2 × Babouches', storeName: 'Atlas', totalAmount: '349.00', externalRef: '#1001' };

describe('WhatsApp agents', function () {
  this.timeout(120_000);

  describe('POST/PUT /api/agents with kind whatsapp', () => {
    it('the owner creates one: 201 with callback_url and verify_token, never the token or the app secret', async () => {
      const shop = await whatsappShop();
      const agent = shop.created;
      expect(agent).to.include({
        kind: 'whatsapp',
        phone_number_id: PHONE_NUMBER_ID,
        template_name: 'order_confirmation',
        template_language: 'fr',
        reply_window_hours: 4,
        callback_url: `${TEST_ENV.PUBLIC_BASE_URL}/hooks/whatsapp/${agent.id}`,
        fallback_agent_id: shop.humanId,
        is_order_handler: true,
      });
      expect(agent.verify_token).to.match(/^[\w-]{32}$/);
      const listed = await shop.agent.get('/api/agents').expect(200);
      const edited = await shop.agent.put(`/api/agents/${agent.id}`).send({ templateName: 'confirm_v2', replyWindowHours: 12, accessToken: '' }).expect(200);
      expect(edited.body).to.include({ template_name: 'confirm_v2', reply_window_hours: 12 });
      for (const text of [JSON.stringify(agent), listed.text, edited.text, (await shop.agent.get(`/agents/${agent.id}`).expect(200)).text]) {
        expect(text).not.to.contain(ACCESS_TOKEN);
        expect(text).not.to.contain(APP_SECRET);
        expect(text).not.to.match(/access_token|app_secret/);
      }
      // A blank token in an edit keeps the one stored.
      expect(
        opened(await testKnex()('whatsapp_agents').where({ agent_id: agent.id }).first(), ['access_token', 'app_secret', 'verify_token']).access_token,
      ).to.equal(ACCESS_TOKEN);
    });

    it('the owner adds one from the agents page: the fallback is required, the secrets never shown again, then its page with the steps', async () => {
      const shop = await signUp();
      const human = await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201);
      const form = async () => {
        const page = await shop.agent.get('/agents').set('Accept-Language', 'fr').expect(200);
        expect(page.text).to.contain('<option value="whatsapp"').and.contain('Réglages WhatsApp');
        return {
          _csrf: csrfFrom(page.text),
          _once: /name="_once" value="([^"]+)"/.exec(page.text)![1],
          name: 'WhatsApp Atlas',
          kind: 'whatsapp',
          phone_number_id: PHONE_NUMBER_ID,
          access_token: ACCESS_TOKEN,
          app_secret: APP_SECRET,
          template_name: 'order_confirmation',
          template_language: 'ar',
          reply_window_hours: '6',
        };
      };
      const agentsNow = () => testKnex()('agents').where({ workspace_id: shop.workspaceId, kind: 'whatsapp' });
      // No fallback: the form again, in French, the message beside the field, the secrets not echoed; nothing made.
      const refused = await shop.agent
        .post('/agents')
        .type('form')
        .set('Accept-Language', 'fr')
        .send({ ...(await form()), fallback_agent_id: '' })
        .expect(400);
      expect(refused.text).to.match(/id="f-fallback_agent_id-error">[^<]+</);
      expect(refused.text).not.to.contain(ACCESS_TOKEN);
      expect(refused.text).not.to.contain(APP_SECRET);
      expect(refused.text).to.contain(`value="${PHONE_NUMBER_ID}"`);
      expect(await agentsNow()).to.deep.equal([]);

      const added = await shop.agent
        .post('/agents')
        .type('form')
        .send({ ...(await form()), fallback_agent_id: human.body.id })
        .expect(303);
      const [agent] = await agentsNow();
      expect(agent).to.include({ name: 'WhatsApp Atlas', fallback_agent_id: human.body.id });
      expect(added.headers.location).to.equal(`/agents/${agent.id}`);
      const connection = opened(await testKnex()('whatsapp_agents').where({ agent_id: agent.id }).first(), ['access_token', 'app_secret', 'verify_token']);
      expect(connection).to.include({
        phone_number_id: PHONE_NUMBER_ID,
        access_token: ACCESS_TOKEN,
        app_secret: APP_SECRET,
        template_name: 'order_confirmation',
        template_language: 'ar',
        reply_window_hours: 6,
      });
      const page = await shop.agent.get(added.headers.location).expect(200);
      expect(page.text).to.contain(connection.verify_token).and.contain(`/hooks/whatsapp/${agent.id}`);
      expect(page.text).not.to.contain(ACCESS_TOKEN);
      // The WhatsApp inputs count only for a WhatsApp agent: a human agent with them filled in is a plain human agent.
      await shop.agent
        .post('/agents')
        .type('form')
        .send({ ...(await form()), name: 'Youssef', kind: 'human', fallback_agent_id: '' })
        .expect(303)
        .expect('Location', '/agents');
      const youssef = await testKnex()('agents').where({ workspace_id: shop.workspaceId, name: 'Youssef' }).first();
      expect(youssef).to.include({ kind: 'human' });
      expect(await testKnex()('whatsapp_agents').where({ agent_id: youssef.id })).to.deep.equal([]);
    });

    it('its page guides the owner in the staff’s language: callback URL, verify token, where in Meta’s dashboard, the template in French and Arabic with two quick-reply buttons and its parameters in order', async () => {
      const shop = await whatsappShop();
      const callbackUrl = `${TEST_ENV.PUBLIC_BASE_URL}/hooks/whatsapp/${shop.whatsappId}`;
      const words = {
        en: {
          heading: 'Connect it in Meta’s dashboard',
          subscribe: 'subscribe to',
          params: ['client name', 'products', 'amount to collect', 'store name', 'order reference'],
        },
        fr: {
          heading: 'Le relier dans le tableau de bord de Meta',
          subscribe: 'abonnez-vous à',
          params: ['nom du client', 'produits', 'montant à encaisser', 'nom de la boutique', 'référence de la commande'],
        },
        ar: {
          heading: 'ربطو من لوحة التحكم ديال Meta',
          subscribe: 'اشترك ف',
          params: ['سمية الكليان', 'المنتوجات', 'المبلغ اللي غادي يتخلص', 'سمية المتجر', 'مرجع الطلبية'],
        },
      };
      for (const lng of ['en', 'fr', 'ar'] as const) {
        await shop.agent.put('/api/account').send({ language: lng }).expect(200);
        const html = (await shop.agent.get(`/agents/${shop.whatsappId}`).expect(200)).text;
        expect(html).to.contain(`<html lang="${lng}"`);
        const text = pageText(html);
        expect(text, lng).to.contain(words[lng].heading.replace('’', "'")).and.contain(callbackUrl).and.contain(shop.verifyToken);
        // Where to paste them, and the field to subscribe to.
        expect(text, lng)
          .to.contain('WhatsApp → Configuration')
          .and.contain('Verify and save')
          .and.match(new RegExp(`${words[lng].subscribe}\\s+messages\\b`));
        expect(text, lng).to.contain('WhatsApp → API Setup').and.contain('whatsapp_business_messaging');
        // The template, in French and in Arabic, each with its two quick-reply buttons, Confirm first.
        const rows = [...html.matchAll(/<tr>\s*<td data-label="[^"]*"><code>(\w+)<\/code><\/td>([\s\S]*?)<\/tr>/g)].map((m) => [
          m[1],
          [...m[2].matchAll(/ lang="(\w+)" dir="(\w+)"/g)].map((d) => `${d[1]} ${d[2]}`).join(', '),
          pageText(m[2]),
        ]);
        // Each template's text in its own language and direction, the row's labels in the page's.
        expect(
          rows.map(([language, dirs]) => [language, dirs]),
          lng,
        ).to.deep.equal([
          ['fr', 'fr ltr, fr ltr'],
          ['ar', 'ar rtl, ar rtl'],
        ]);
        expect(rows[0][2]).to.contain('Bonjour {{1}}').and.contain('{{5}}').and.contain('Confirmer · Annuler');
        expect(rows[1][2]).to.contain('السلام {{1}}').and.contain('{{5}}').and.contain('تأكيد · إلغاء');
        // The body's five variables, in the order they are sent.
        const params = [...text.matchAll(/\{\{(\d)\}\}\n([^\n]+)/g)].map((m) => `${m[1]} ${m[2].trim()}`);
        expect(params, lng).to.deep.equal(words[lng].params.map((p, i) => `${i + 1} ${p}`));
      }
      // A member sees the connection, never the verify token or the guide.
      const member = await signUp({ invitedBy: shop });
      const theirs = await member.agent.get(`/agents/${shop.whatsappId}`).expect(200);
      expect(theirs.text).not.to.contain(shop.verifyToken);
      expect(pageText(theirs.text)).to.contain(callbackUrl).and.not.to.contain('WhatsApp → Configuration');
    });

    it('outside the calling hours nothing is sent: a due operation waits for their opening (no call, no message); inside them, a whatsapp call and its send queued', async () => {
      const shop = await whatsappShop();
      const order = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345691' })
          .expect(201)
      ).body;
      const now = new Date();
      const minutes = now.getUTCHours() * 60 + now.getUTCMinutes();
      // A one-hour window twelve hours away from now (Morocco is UTC+0/+1): the operation moves to its opening.
      const start = (minutes + 12 * 60) % (23 * 60);
      const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
      await shop.agent
        .put('/api/settings/calls')
        .send({ callingHours: { start: hhmm(start), end: hhmm(start + 60) } })
        .expect(200);
      const opening: Date = (await testKnex()('operations').where({ id: order.operation_id }).first()).next_attempt_at;
      expect(opening.getTime()).to.be.greaterThan(now.getTime());
      // A worker's clock two hours after the opening: the operation is due, the hours are closed.
      const at = (time: Date) =>
        new CallService(
          testKnex(),
          new Jobs(testKnex()),
          new CallSettingsService(testKnex()),
          loadConfig(TEST_ENV).calls,
          new Secrets(TEST_ENV.SECRETS_KEY),
          () => time,
        );
      const sends = () =>
        testKnex()('pgboss.job')
          .where({ name: 'whatsapp-send' })
          .whereRaw("data->>'callId' IN (SELECT id::text FROM calls WHERE operation_id = ?)", [order.operation_id]);
      expect(await at(new Date(opening.getTime() + 2 * 3_600_000)).dispatch(order.operation_id)).to.equal('waiting');
      expect(await testKnex()('calls').where({ operation_id: order.operation_id })).to.deep.equal([]);
      expect(await sends()).to.have.length(0);
      expect((await testKnex()('operations').where({ id: order.operation_id }).first()).status).to.equal('pending');
      // A minute after the opening: sent.
      expect(await at(new Date(opening.getTime() + 60_000)).dispatch(order.operation_id)).to.equal('dispatched');
      const [call] = await testKnex()('calls').where({ operation_id: order.operation_id });
      expect(call).to.include({ kind: 'whatsapp', attempt: 1, message_id: null, ended_at: null });
      expect((await sends()).map((job) => job.data)).to.deep.equal([{ callId: call.id, try: 1 }]);
    });

    it('a member → 403, nothing created', async () => {
      const owner = await signUp();
      const member = await signUp({ invitedBy: owner });
      const before = await testKnex()('agents').where({ workspace_id: owner.workspaceId }).count({ n: '*' });
      await member.agent
        .post('/api/agents')
        .send({
          name: 'W',
          kind: 'whatsapp',
          phoneNumberId: PHONE_NUMBER_ID,
          accessToken: ACCESS_TOKEN,
          appSecret: APP_SECRET,
          templateName: 'x',
          templateLanguage: 'fr',
        })
        .expect(403);
      expect(await testKnex()('agents').where({ workspace_id: owner.workspaceId }).count({ n: '*' })).to.deep.equal(before);
    });

    it('missing or bad fields, and no fallback → 400 naming each; the kind never changes', async () => {
      const shop = await signUp();
      const res = await shop.agent
        .post('/api/agents')
        .send({ name: 'W', kind: 'whatsapp', phoneNumberId: 'abc', templateName: 'Bad Name', templateLanguage: 'french', replyWindowHours: 73 })
        .expect(400);
      expect(res.body.fields).to.have.all.keys(
        'phoneNumberId',
        'accessToken',
        'appSecret',
        'templateName',
        'templateLanguage',
        'replyWindowHours',
        'fallbackAgentId',
      );
      const human = await shop.agent.post('/api/agents').send({ name: 'H', templateName: 'x' }).expect(400);
      expect(human.body.fields).to.have.keys('templateName');
      const wa = await whatsappShop();
      const kind = await wa.agent.put(`/api/agents/${wa.whatsappId}`).send({ kind: 'voice' }).expect(400);
      expect(kind.body.fields).to.have.keys('kind');
      const cleared = await wa.agent.put(`/api/agents/${wa.whatsappId}`).send({ fallbackAgentId: null }).expect(400);
      expect(cleared.body.fields).to.have.keys('fallbackAgentId');
    });
  });

  describe('sending and receiving (a Graph API double, a worker)', () => {
    let worker: RunningWorker;
    let graph: Awaited<ReturnType<typeof graphDouble>>;
    /** What the double answers for a phone number's next message (by default a wamid). */
    const answers = new Map<string, Array<{ status: number; body: object } | 'hang'>>();

    before(async () => {
      graph = await graphDouble((req) => answers.get(req.json?.to)?.shift() ?? sentAnswer());
      worker = await testWorker({ WHATSAPP_API_ORIGIN: graph.origin, DELIVERY_TIMEOUT_SECONDS: '2' });
    });
    after(async () => {
      await worker.stop();
      await graph.close();
    });

    it('sends the approved template: path, bearer, to, name and language, parameters in order, button payloads', async () => {
      const shop = await whatsappShop();
      const { order, call } = await sentOrder(shop, { ...AMINA, phone: '0612345671' });
      const sent = graph.received.find((r) => r.json.to === '212612345671')!;
      expect(sent.method).to.equal('POST');
      expect(sent.path).to.equal(`/v24.0/${PHONE_NUMBER_ID}/messages`);
      expect(sent.headers.authorization).to.equal(`Bearer ${ACCESS_TOKEN}`);
      expect(sent.headers['content-type']).to.equal('application/json');
      expect(sent.json).to.deep.equal({
        messaging_product: 'whatsapp',
        to: '212612345671',
        type: 'template',
        template: {
          name: 'order_confirmation',
          language: { code: 'fr' },
          components: [
            {
              type: 'body',
              parameters: ['Amina Benali', '2 × Babouches', '349,00 MAD', 'Atlas', '#1001'].map((text) => ({ type: 'text', text })),
            },
            { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: `confirm:${call.id}` }] },
            { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: `cancel:${call.id}` }] },
          ],
        },
      });
      expect(call).to.include({ kind: 'whatsapp', attempt: 1, ended_at: null });
      expect(call.message_id).to.match(/^wamid\./);
      expect(call.result_due_at.getTime() - call.sent_at.getTime()).to.equal(4 * 3_600_000);
      expect((await orderRow(order.id)).status).to.equal('calling');
    });

    it('a parameter we do not have is sent as -', async () => {
      const shop = await whatsappShop();
      await sentOrder(shop, { ...ORDER, phone: '0612345672' });
      const sent = graph.received.find((r) => r.json.to === '212612345672')!;
      expect(sent.json.template.components[0].parameters.map((p: { text: string }) => p.text)).to.deep.equal([
        'Amina Benali',
        'Argan oil x2',
        '-',
        'Atlas Shop',
        '-',
      ]);
    });

    it('Meta’s 4xx → the call failed with its error message, then the fallback takes the order at once', async () => {
      const shop = await whatsappShop();
      answers.set('212612345673', [
        { status: 400, body: { error: { message: '(#132001) Template name does not exist in the translation', type: 'OAuthException', code: 132001 } } },
      ]);
      const res = await shop.agent
        .post('/api/orders')
        .send({ ...ORDER, phone: '0612345673' })
        .expect(201);
      const ops = await waitFor('fallback created', async () => {
        const rows = await operationsOf(res.body.id);
        return rows.length === 2 ? rows : undefined;
      });
      expect(ops.map((op) => [op.status, op.agent_id])).to.deep.equal([
        ['completed', shop.whatsappId],
        ['pending', shop.humanId],
      ]);
      const call = await callOf(res.body.id);
      expect(call).to.include({ outcome: 'failed', summary: '(#132001) Template name does not exist in the translation', message_id: null });
      expect((await orderRow(res.body.id)).status).to.equal('pending');
      expect(graph.received.filter((r) => r.json.to === '212612345673')).to.have.length(1);
      // The fallback's operation is due at once (the calling hours are open all day here), on the ladder's second step.
      expect(ops[1].ladder_step).to.equal(2);
      expect(ops[1].next_attempt_at.getTime()).to.be.at.most(Date.now());
    });

    it('Meta’s error message is kept to 200 characters, without NUL; a 4xx without one keeps its status', async () => {
      const shop = await whatsappShop();
      const long = `(#131009) Parameter value is not valid\u0000 ${'x'.repeat(300)}`;
      answers.set('212612345693', [{ status: 400, body: { error: { message: long, code: 131009 } } }]);
      answers.set('212612345694', [{ status: 401, body: { nothing: true } }]);
      const first = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345693' })
          .expect(201)
      ).body;
      const second = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345694' })
          .expect(201)
      ).body;
      const ended = (id: string) => waitFor('call failed', async () => ((await callOf(id))?.outcome === 'failed' ? callOf(id) : undefined));
      const summary = (await ended(first.id)).summary;
      expect(summary).to.have.length(200);
      expect(summary).to.equal(long.replace('\u0000', '').slice(0, 200));
      expect(await ended(second.id)).to.include({ outcome: 'failed', summary: 'HTTP 401' });
    });

    it('a 5xx and a time-out are tried again, about 10 s later (the same call, one message in the end)', async () => {
      const shop = await whatsappShop();
      answers.set('212612345674', [{ status: 503, body: { error: { message: 'Service temporarily unavailable' } } }]);
      answers.set('212612345684', ['hang']);
      const [failing, hanging] = await Promise.all([sentOrder(shop, { ...ORDER, phone: '0612345674' }), sentOrder(shop, { ...ORDER, phone: '0612345684' })]);
      for (const [{ call }, to] of [
        [failing, '212612345674'],
        [hanging, '212612345684'],
      ] as const) {
        const tries = graph.received.filter((r) => r.json.to === to);
        expect(tries).to.have.length(2);
        expect(tries[1].json).to.deep.equal(tries[0].json);
        expect(call.ended_at).to.equal(null);
        expect(await testKnex()('calls').where({ operation_id: call.operation_id })).to.have.length(1);
      }
    });

    it('an edited access token and app secret take over: the next message carries the new bearer, the old secret no longer signs', async () => {
      const shop = await whatsappShop();
      const token = `EAAG${'y'.repeat(40)}`;
      const secret = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
      await shop.agent.put(`/api/agents/${shop.whatsappId}`).send({ accessToken: token, appSecret: secret }).expect(200);
      const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345695' });
      expect(graph.received.find((r) => r.json.to === '212612345695')!.headers.authorization).to.equal(`Bearer ${token}`);
      const body = JSON.stringify(envelope({ messages: [buttonMessage(`confirm:${call.id}`, 'Confirmer')] }));
      await deliver(shop.whatsappId, body).expect(401); // signed with the old secret
      expect(await callOf(order.id)).to.include({ ended_at: null });
      const signature = `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
      await deliver(shop.whatsappId, body, signature).expect(200);
      expect(await callOf(order.id)).to.include({ outcome: 'confirmed' });
    });

    it('a ladder of three, WhatsApp → voice → person: the reply hands the order to the voice agent, its no-answer to the human queue; the timeline shows the three steps', async () => {
      const voice = await agentDouble();
      try {
        const shop = await signUp();
        await openAllDay(shop);
        await grant(shop, 100);
        await shop.agent.put('/api/settings/calls').send({ maxAttempts: 1 }).expect(200);
        const human = (await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201)).body;
        const robot = (
          await shop.agent.post('/api/agents').send({ name: 'Robot', kind: 'voice', endpointUrl: voice.url, fallbackAgentId: human.id }).expect(201)
        ).body;
        const whatsapp = (await shop.agent.post('/api/agents').send(whatsappAgent(robot.id)).expect(201)).body;
        const { order } = await sentOrder(shop, { ...ORDER, phone: '0612345698' });
        await deliver(whatsapp.id, envelope({ messages: [textMessage('3ayet li men ba3d', undefined, '212612345698')] })).expect(200);
        const requested = await waitFor('call.requested', async () => voice.received.find((r) => r.json.data.order.id === order.id));
        const body = JSON.stringify({ type: 'call.ended', data: { call_id: requested.json.data.call_id, outcome: 'no-answer', duration_seconds: 0 } });
        await request(appUrl())
          .post(`/hooks/calls/${requested.json.data.call_id}`)
          .set(signedHeaders(robot.secret, newMessageId(), body))
          .set('Content-Type', 'application/json')
          .send(body)
          .expect(200);
        const ops = await operationsOf(order.id);
        expect(ops.map((op) => [op.ladder_step, op.agent_id, op.status])).to.deep.equal([
          [1, whatsapp.id, 'completed'],
          [2, robot.id, 'completed'],
          [3, human.id, 'pending'],
        ]);
        expect((await orderRow(order.id)).status).to.equal('pending');
        const api = await shop.agent.get(`/api/orders/${order.id}/operations`).expect(200);
        expect(api.body.operations.map((op: { calls: Array<{ kind: string; outcome: string }> }) => op.calls.map((c) => [c.kind, c.outcome]))).to.deep.equal([
          [['whatsapp', 'no-answer']],
          [['voice', 'no-answer']],
          [],
        ]);
        const page = pageText((await shop.agent.get(`/orders/${order.id}`).expect(200)).text);
        expect(page).to.contain('3ayet li men ba3d').and.contain('step 2').and.contain('step 3').and.contain('Robot').and.contain('WhatsApp Atlas');
        // The person at the top of the ladder reads what the customer wrote.
        const claimed = await shop.agent.post('/api/calls/next').expect(200);
        expect(claimed.body.operation.id).to.equal(ops[2].id);
        expect((await shop.agent.get(`/calls/${claimed.body.call.id}`).expect(200)).text).to.contain('3ayet li men ba3d');
      } finally {
        await voice.close();
      }
    });

    describe('the webhook', () => {
      it('GET: the challenge back as plain text for the agent’s verify token; 403 otherwise; 404 for an unknown agent', async () => {
        const shop = await whatsappShop();
        const ok = await request(appUrl())
          .get(`/hooks/whatsapp/${shop.whatsappId}`)
          .query({ 'hub.mode': 'subscribe', 'hub.verify_token': shop.verifyToken, 'hub.challenge': '1158201444' })
          .expect(200);
        expect(ok.text).to.equal('1158201444');
        expect(ok.headers['content-type']).to.match(/^text\/plain/);
        await request(appUrl())
          .get(`/hooks/whatsapp/${shop.whatsappId}`)
          .query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong', 'hub.challenge': '1' })
          .expect(403);
        await request(appUrl())
          .get(`/hooks/whatsapp/${shop.whatsappId}`)
          .query({ 'hub.mode': 'unsubscribe', 'hub.verify_token': shop.verifyToken, 'hub.challenge': '1' })
          .expect(403);
        await request(appUrl()).get(`/hooks/whatsapp/${shop.whatsappId}`).query({ 'hub.mode': 'subscribe', 'hub.challenge': '1' }).expect(403);
        await request(appUrl()).get(`/hooks/whatsapp/${shop.humanId}`).query({ 'hub.verify_token': shop.verifyToken }).expect(404);
      });

      it('a button press confirms; the same message again, or a cancel afterwards, changes nothing', async () => {
        const shop = await whatsappShop();
        const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345675' });
        const press = buttonMessage(`confirm:${call.id}`, 'Confirmer', call.message_id);
        expect((await deliver(shop.whatsappId, envelope({ messages: [press] })).expect(200)).body).to.deep.equal({ ok: true });
        await deliver(shop.whatsappId, envelope({ messages: [press] })).expect(200);
        await deliver(shop.whatsappId, envelope({ messages: [buttonMessage(`cancel:${call.id}`, 'Annuler')] })).expect(200);
        expect(await callOf(order.id)).to.include({ outcome: 'confirmed', summary: 'Confirmer', ended_by: 'agent' });
        expect((await orderRow(order.id)).status).to.equal('confirmed');
        expect((await operationsOf(order.id)).map((op) => op.status)).to.deep.equal(['completed']);
      });

      it('an interactive button_reply cancels', async () => {
        const shop = await whatsappShop();
        const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345676' });
        await deliver(shop.whatsappId, envelope({ messages: [interactiveReply(`cancel:${call.id}`, 'Annuler')] })).expect(200);
        expect(await callOf(order.id)).to.include({ outcome: 'unconfirmed', summary: 'Annuler' });
        expect((await orderRow(order.id)).status).to.equal('unconfirmed');
      });

      it('a text reply → no-answer with the text, and the fallback at once; the order page shows it', async () => {
        const shop = await whatsappShop();
        const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345677' });
        const text = 'Bghit nbeddel l’adresse, 3afak 3ayet li';
        await deliver(shop.whatsappId, envelope({ messages: [textMessage(text, undefined, '212612345677')] })).expect(200);
        expect(await callOf(order.id)).to.include({ outcome: 'no-answer', reply: text, summary: text });
        const ops = await operationsOf(order.id);
        expect(ops.map((op) => [op.status, op.agent_id, op.ladder_step])).to.deep.equal([
          ['completed', shop.whatsappId, 1],
          ['pending', shop.humanId, 2],
        ]);
        expect((await orderRow(order.id)).status).to.equal('pending');
        const api = await shop.agent.get(`/api/orders/${order.id}/operations`).expect(200);
        expect(api.body.operations[0].calls[0]).to.include({ id: call.id, kind: 'whatsapp', reply: text });
        const page = await shop.agent.get(`/orders/${order.id}`).expect(200);
        expect(page.text).to.contain('Bghit nbeddel l’adresse');
        // The person who takes it over reads it on the call page too.
        const claimed = await shop.agent.post('/api/calls/next').expect(200);
        expect(claimed.body.order.id).to.equal(order.id);
        const callPage = await shop.agent.get(`/calls/${claimed.body.call.id}`).expect(200);
        expect(callPage.text).to.contain('Bghit nbeddel l’adresse');
      });

      it('a reply quoting a message answers that message’s call; one quoting nothing answers the customer’s call sent last', async () => {
        const shop = await whatsappShop();
        const older = await sentOrder(shop, { ...ORDER, phone: '0612345696' });
        const newer = await sentOrder(shop, { ...ORDER, phone: '0612345696' });
        await deliver(shop.whatsappId, envelope({ messages: [textMessage('Hadi dyal l’bare7', older.call.message_id, '212612345696')] })).expect(200);
        expect(await callOf(older.order.id)).to.include({ outcome: 'no-answer', reply: 'Hadi dyal l’bare7' });
        expect(await callOf(newer.order.id)).to.include({ ended_at: null });
        await deliver(shop.whatsappId, envelope({ messages: [textMessage('w hadi?', undefined, '212612345696')] })).expect(200);
        expect(await callOf(newer.order.id)).to.include({ outcome: 'no-answer', reply: 'w hadi?' });
        // Another customer's words answer neither.
        const third = await sentOrder(shop, { ...ORDER, phone: '0612345697' });
        await deliver(shop.whatsappId, envelope({ messages: [textMessage('salam', undefined, '212699999999')] })).expect(200);
        expect(await callOf(third.order.id)).to.include({ ended_at: null });
      });

      it('a person’s status change while the message waits cancels the ladder: a late reply or silence hands nothing on', async () => {
        const shop = await whatsappShop();
        const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345689' });
        await shop.agent.put(`/api/orders/${order.id}`).send({ status: 'order-changed' }).expect(200);
        expect((await operationsOf(order.id)).map((op) => op.status)).to.deep.equal(['cancelled']);
        await deliver(shop.whatsappId, envelope({ messages: [textMessage('Bghit nzid wa7ed', call.message_id, '212612345689')] })).expect(200);
        const services = createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
        await services.whatsapp.sweep(new Date(call.result_due_at.getTime() + 1000));
        expect((await operationsOf(order.id)).map((op) => op.status)).to.deep.equal(['cancelled']);
        expect((await orderRow(order.id)).status).to.equal('order-changed');
        await shop.agent.post('/api/calls/next').expect(204);
      });

      it('an image → "[image]"', async () => {
        const shop = await whatsappShop();
        const { order } = await sentOrder(shop, { ...ORDER, phone: '0612345678' });
        await deliver(shop.whatsappId, envelope({ messages: [imageMessage()] })).expect(200);
        expect(await callOf(order.id)).to.include({ outcome: 'no-answer', reply: '[image]' });
      });

      it('statuses sent, delivered, read are recorded out of order and once; failed ends the call with the error title', async () => {
        const shop = await whatsappShop();
        const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345679' });
        await deliver(shop.whatsappId, envelope({ statuses: [status(call.message_id, 'read')] })).expect(200);
        await deliver(shop.whatsappId, envelope({ statuses: [status(call.message_id, 'delivered'), status(call.message_id, 'sent')] })).expect(200);
        await deliver(shop.whatsappId, envelope({ statuses: [status(call.message_id, 'delivered', { timestamp: '1' })] })).expect(200);
        const row = await callOf(order.id);
        expect(row.read_at).to.be.instanceOf(Date);
        expect(row.delivered_at.getTime()).to.be.greaterThan(1000);
        expect(row.ended_at).to.equal(null);
        const page = await shop.agent.get(`/orders/${order.id}`).expect(200);
        expect(page.text).to.contain('Read');

        const other = await sentOrder(shop, { ...ORDER, phone: '0612345670' });
        const failure = status(other.call.message_id, 'failed', {
          errors: [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Not on WhatsApp' } }],
        });
        await deliver(shop.whatsappId, envelope({ statuses: [failure] })).expect(200);
        expect(await callOf(other.order.id)).to.include({ outcome: 'failed', summary: 'Message undeliverable' });
        expect((await operationsOf(other.order.id)).map((op) => op.status)).to.deep.equal(['completed', 'pending']);
      });

      it('a wrong signature → 401 and nothing changes; an unknown agent → 404', async () => {
        const shop = await whatsappShop();
        const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345680' });
        const body = JSON.stringify(envelope({ messages: [buttonMessage(`confirm:${call.id}`, 'Confirmer')] }));
        const wrong = await deliver(shop.whatsappId, body, `sha256=${'0'.repeat(64)}`).expect(401);
        expect(wrong.body).to.deep.equal({ error: 'invalid_signature' });
        await deliver(shop.whatsappId, body, 'nonsense').expect(401);
        // Signed with another app's secret.
        await deliver(
          shop.whatsappId,
          body,
          `sha256=${(await import('node:crypto')).createHmac('sha256', 'another0secret0value').update(body).digest('hex')}`,
        ).expect(401);
        expect(await callOf(order.id)).to.include({ ended_at: null });
        expect(await testKnex()('whatsapp_events').where({ agent_id: shop.whatsappId })).to.have.length(0);
        await deliver('00000000-0000-4000-8000-000000000000', body).expect(404);
        await deliver('not-an-id', body).expect(404);
        // A button naming a call of another agent changes nothing.
        const other = await whatsappShop();
        await deliver(other.whatsappId, body).expect(200);
        expect(await callOf(order.id)).to.include({ ended_at: null });
      });

      it('NUL characters, non-JSON and other objects: 200 when signed and ignored; deep nesting refused from its bytes; never a 5xx', async () => {
        const shop = await whatsappShop();
        const { order } = await sentOrder(shop, { ...ORDER, phone: '0612345681' });
        // Text Postgres refuses is refused by the one inbound reader: Meta gets its 200, the body is ignored whole.
        await deliver(shop.whatsappId, envelope({ messages: [textMessage('a\u0000b', undefined, '212612345681')] })).expect(200);
        expect(await callOf(order.id)).to.include({ reply: null, ended_at: null });
        const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
        expect((await deliver(shop.whatsappId, deep).expect(400)).body).to.deep.equal({ error: 'unreadable_body' });
        await deliver(shop.whatsappId, deep, 'sha256=00').expect(400);
        await deliver(shop.whatsappId, `{"object":"whatsapp_business_account","entry":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`).expect(400);
        await deliver(shop.whatsappId, 'not json {').expect(200);
        await deliver(shop.whatsappId, { object: 'page', entry: [{ changes: [{ value: { messages: [{ id: 1, type: ['text'] }] } }] }] }).expect(200);
        await deliver(
          shop.whatsappId,
          envelope({
            messages: [{ from: '212612345681', id: 'x'.repeat(5000), type: 'text', text: { body: 'hi' } }],
            statuses: [{ id: null, status: 'read' }],
          }),
        ).expect(200);
        await deliver(shop.whatsappId, `"\u0000"`).expect(200);
        const big = await request(appUrl())
          .post(`/hooks/whatsapp/${shop.whatsappId}`)
          .set('Content-Type', 'application/json')
          .send(`"${'x'.repeat(1_100_000)}"`);
        expect(big.status).to.equal(413);
      });
    });

    it('WHATSAPP_COST: a message that reached an outcome is charged once, in its outcome’s transaction; a failed one is free', async () => {
      const shop = await whatsappShop();
      const priced = createServices(testKnex(), loadConfig({ ...TEST_ENV, WHATSAPP_COST: '2' }), new Jobs(testKnex()));
      const charged = await sentOrder(shop, { ...ORDER, phone: '0612345686' });
      expect(await priced.calls.endCall(charged.call.id, { outcome: 'confirmed', summary: 'Confirmer' }, 'agent')).to.equal(true);
      expect(await priced.calls.endCall(charged.call.id, { outcome: 'confirmed', summary: 'Confirmer' }, 'agent')).to.equal(false);
      const spends = await testKnex()('credit_ledger').where({ call_id: charged.call.id, kind: 'spend' });
      expect(spends.map((row) => Number(row.amount))).to.deep.equal([2]);
      expect(Number((await callOf(charged.order.id)).cost)).to.equal(2);
      const free = await sentOrder(shop, { ...ORDER, phone: '0612345687' });
      await priced.calls.endCall(free.call.id, { outcome: 'failed', summary: 'Message undeliverable' }, 'agent');
      expect(await testKnex()('credit_ledger').where({ call_id: free.call.id })).to.have.length(0);
    });

    it('GET /api/stats and /api/stats/team count outcomes and deliveries per channel; a message the customer wrote back to counts as answered', async () => {
      const shop = await whatsappShop();
      const first = await sentOrder(shop, { ...ORDER, phone: '0612345683' });
      const second = await sentOrder(shop, { ...ORDER, phone: '0612345685' });
      await deliver(shop.whatsappId, envelope({ messages: [buttonMessage(`confirm:${first.call.id}`, 'Confirmer')] })).expect(200);
      await deliver(shop.whatsappId, envelope({ messages: [textMessage('Appelez-moi', second.call.message_id, '212612345685')] })).expect(200);
      const claimed = await shop.agent.post('/api/calls/next').expect(200);
      await shop.agent.post(`/api/calls/${claimed.body.call.id}/outcome`).send({ outcome: 'order-changed', changes: 'Size 40' }).expect(200);
      const stats = await shop.agent.get('/api/stats').expect(200);
      const zero = { confirmed: 0, unconfirmed: 0, 'order-changed': 0, unrecognized: 0, postponed: 0, 'no-answer': 0, failed: 0 };
      const door = (delivered: number, refused: number, rate: number | null) => ({ delivered, refused, returned: 0, lost: 0, delivered_rate: rate });
      expect(stats.body.by_channel).to.deep.equal({
        human: { calls: 1, answered: 1, answered_rate: 1, by_outcome: { ...zero, 'order-changed': 1 }, ...door(0, 0, null) },
        voice: { calls: 0, answered: 0, answered_rate: null, by_outcome: zero, ...door(0, 0, null) },
        whatsapp: { calls: 2, answered: 2, answered_rate: 1, by_outcome: { ...zero, confirmed: 1, 'no-answer': 1 }, ...door(0, 0, null) },
      });
      expect(stats.body).to.include({ calls: 3, answered_rate: 1 });
      const page = await shop.agent.get('/stats').expect(200);
      expect(page.text).to.contain('By channel').and.to.contain('WhatsApp');

      // At the door: the order WhatsApp confirmed is delivered, the one the member changed is refused.
      await shop.agent.put(`/api/orders/${first.order.id}/delivery`).send({ status: 'delivered' }).expect(200);
      await shop.agent.put(`/api/orders/${second.order.id}/delivery`).send({ status: 'refused' }).expect(200);
      const after = await shop.agent.get('/api/stats').expect(200);
      expect(after.body.by_channel).to.deep.equal({
        human: { calls: 1, answered: 1, answered_rate: 1, by_outcome: { ...zero, 'order-changed': 1 }, ...door(0, 1, 0) },
        voice: { calls: 0, answered: 0, answered_rate: null, by_outcome: zero, ...door(0, 0, null) },
        whatsapp: { calls: 2, answered: 2, answered_rate: 1, by_outcome: { ...zero, confirmed: 1, 'no-answer': 1 }, ...door(1, 0, 1) },
      });
      // /stats/team: the same per channel, with the confirmation rate of each.
      const team = await shop.agent.get('/api/stats/team').expect(200);
      expect(team.body.by_channel).to.deep.equal({
        human: { calls: 1, answered: 1, by_outcome: { ...zero, 'order-changed': 1 }, confirmation_rate: 1, ...door(0, 1, 0) },
        voice: { calls: 0, answered: 0, by_outcome: zero, confirmation_rate: null, ...door(0, 0, null) },
        whatsapp: { calls: 2, answered: 2, by_outcome: { ...zero, confirmed: 1, 'no-answer': 1 }, confirmation_rate: 1, ...door(1, 0, 1) },
      });
      const teamPage = await shop.agent.get('/stats/team').set('Accept-Language', 'fr').expect(200);
      expect(teamPage.text).to.contain('Par canal').and.contain('WhatsApp');
    });

    it('the reply window: no reply within it (a controlled clock) → no-answer "no reply", one attempt, then the fallback', async () => {
      const shop = await whatsappShop({ replyWindowHours: 2 });
      await shop.agent.put('/api/settings/calls').send({ maxAttempts: 3 }).expect(200);
      const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345682' });
      const services = createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
      const sentAt = call.sent_at.getTime();
      expect(await services.whatsapp.closeWindow(call.id, new Date(sentAt + 2 * 3_600_000 - 1000))).to.equal(false);
      expect((await services.whatsapp.sweep(new Date(sentAt + 2 * 3_600_000 - 1000))).noReply).to.equal(0);
      expect(await callOf(order.id)).to.include({ ended_at: null });
      expect((await services.whatsapp.sweep(new Date(sentAt + 2 * 3_600_000 + 1000))).noReply).to.equal(1);
      expect(await callOf(order.id)).to.include({ outcome: 'no-answer', summary: 'no reply', ended_by: 'system' });
      // One attempt, whatever max_attempts says: the operation is completed and the fallback has it.
      const ops = await operationsOf(order.id);
      expect(ops.map((op) => [op.status, op.attempts])).to.deep.equal([
        ['completed', 1],
        ['pending', 0],
      ]);
      // A button pressed after the window changes nothing.
      await deliver(shop.whatsappId, envelope({ messages: [buttonMessage(`confirm:${call.id}`, 'Confirmer')] })).expect(200);
      expect((await orderRow(order.id)).status).to.equal('pending');
    });
  });

  describe('when Meta cannot be reached (a worker of its own for each case)', () => {
    const sendJobs = (callId: string) => testKnex()('pgboss.job').where({ name: 'whatsapp-send' }).whereRaw("data->>'callId' = ?", [callId]);
    /** The order's call once its first try is over and its second is queued. */
    async function triedOnce(orderId: string) {
      return waitFor('a second try queued', async () => {
        const call = await callOf(orderId);
        if (!call) return undefined;
        const jobs = await sendJobs(call.id);
        return jobs.some((job) => job.data.try === 2) ? call : undefined;
      });
    }

    it('through the outbound guard: with private addresses refused, nothing reaches a double on 127.0.0.1; the send is tried again later', async () => {
      const graph = await graphDouble();
      const worker = await testWorker({ WHATSAPP_API_ORIGIN: graph.origin, ALLOW_PRIVATE_URLS: 'false' });
      try {
        const shop = await whatsappShop();
        const order = (
          await shop.agent
            .post('/api/orders')
            .send({ ...ORDER, phone: '0612345699' })
            .expect(201)
        ).body;
        const call = await triedOnce(order.id);
        expect(graph.received).to.deep.equal([]);
        expect(call).to.include({ kind: 'whatsapp', message_id: null, ended_at: null });
      } finally {
        await worker.stop();
        await graph.close();
      }
    });

    it('a refused connection is tried again like a call.requested; after the last try the call is failed ("WhatsApp unreachable") and the fallback has the order', async () => {
      const closed = await graphDouble();
      await closed.close(); // its port now refuses connections
      const worker = await testWorker({ WHATSAPP_API_ORIGIN: closed.origin });
      try {
        const shop = await whatsappShop();
        const order = (
          await shop.agent
            .post('/api/orders')
            .send({ ...ORDER, phone: '0612345690' })
            .expect(201)
        ).body;
        const call = await triedOnce(order.id);
        expect(call).to.include({ message_id: null, ended_at: null });
        // The fifth try is the last (after about 10 s, 1 min, 5 min and 15 min): brought forward to now.
        await testKnex()('pgboss.job')
          .where({ name: 'whatsapp-send', state: 'created' })
          .whereRaw("data->>'callId' = ?", [call.id])
          .update({ data: testKnex().raw(`jsonb_set(data, '{try}', '5')`), start_after: testKnex().fn.now() });
        const ended = await waitFor('the call failed', async () => {
          const row = await callOf(order.id);
          return row?.ended_at ? row : undefined;
        });
        expect(ended).to.include({ outcome: 'failed', summary: 'WhatsApp unreachable', ended_by: 'system', message_id: null });
        expect((await operationsOf(order.id)).map((op) => [op.status, op.agent_id])).to.deep.equal([
          ['completed', shop.whatsappId],
          ['pending', shop.humanId],
        ]);
        expect((await orderRow(order.id)).status).to.equal('pending');
        expect(await testKnex()('calls').where({ operation_id: call.operation_id })).to.have.length(1);
      } finally {
        await worker.stop();
      }
    });
  });

  it('docs/whatsapp.md: connecting a real number, the template the agent page shows (French and Arabic), what a message costs the shop, and the ladder', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'whatsapp.md'), 'utf8');
    const flat = doc.replace(/\n> ?/g, ' ').replace(/\s+/g, ' ');
    const section = (title: string) => {
      const start = doc.indexOf(`\n## ${title}\n`);
      expect(start, title).to.be.greaterThan(-1);
      const end = doc.indexOf('\n## ', start + 4);
      return doc.slice(start, end === -1 ? undefined : end).replace(/\s+/g, ' ');
    };
    expect(section('Connect a number'))
      .to.contain('Meta Business → your app → WhatsApp → API Setup')
      .and.contain('Phone number ID')
      .and.contain('Business settings → Users → System users')
      .and.contain('`whatsapp_business_messaging`')
      .and.contain('expiry **Never**')
      .and.contain('App secret')
      .and.contain('WhatsApp → Configuration → Webhook')
      .and.contain('Verify and save')
      .and.contain('`callback_url`')
      .and.contain('`verify_token`');
    const template = section('The message template');
    expect(template).to.contain('Utility').and.contain('Quick reply').and.contain('Confirm first, Cancel second').and.contain('sent as `-`');
    for (const [n, what] of ['client', 'products', 'amount to collect', 'store', 'reference'].entries())
      expect(template).to.match(new RegExp(`\\{\\{${n + 1}\\}\\}\` \\| [^|]*${what}`));
    // The same template as the agent's page asks the shop to submit, word for word.
    for (const tpl of TEMPLATE_TEXTS) {
      expect(flat, tpl.language).to.contain(tpl.body);
      expect(flat, tpl.language).to.contain(`**${tpl.confirm}** · **${tpl.cancel}**`);
    }
    expect(section('What a message costs'))
      .to.contain('Meta bills the shop')
      .and.contain('per delivered template message')
      .and.contain('utility')
      .and.contain("Morocco's rates change in October 2026")
      .and.contain('`WHATSAPP_COST`')
      .and.contain('delivered rate');
    expect(section('The ladder'))
      .to.contain('`fallbackAgentId`')
      .and.contain('in the same transaction')
      .and.contain('at most **three agents**')
      .and.contain('no loop')
      .and.contain('WhatsApp (4 hours for a reply) → a voice agent');
  });
});
