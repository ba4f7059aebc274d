import { expect } from 'chai';
import { decodeHTML } from 'entities';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import type { DeliveryResult } from '../../integrations/http';
import { createServices } from '../../services';
import { readSendAnswer } from '../../services/whatsapp';
import type { RunningWorker } from '../../worker';
import type { SignedIn } from '../helpers/app';
import { signUp, TEST_ENV } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { ORDER, orderRow, testWorker, waitFor } from '../helpers/loop';
import type { GraphAnswer, GraphRequest } from '../helpers/whatsapp';
import {
  APP_SECRET,
  buttonMessage,
  callOf,
  deliver,
  envelope,
  errorAnswer,
  fixture,
  graphDouble,
  newWamid,
  PHONE_NUMBER_ID,
  sentAnswer,
  sentOrder,
  sign,
  status,
  textMessage,
  whatsappAgent,
  whatsappShop,
} from '../helpers/whatsapp';

/** A page's words: tags dropped (each ends a line), entities decoded, Unicode isolates removed. */
const pageText = (html: string) =>
  decodeHTML(html.replace(/<(script|style)[\s\S]*?<\/\1>/g, '').replace(/<[^>]+>/g, '\n'))
    .replace(/[\u2066-\u2069]/g, '')
    .replace(/[ \t]*\n[\n\s]*/g, '\n');
const oneLine = (html: string) => pageText(html).replace(/\s+/g, ' ');
const operationsOf = (orderId: string) => testKnex()('operations').where({ order_id: orderId }).orderBy('ladder_step');
const sendJobs = (callId: string) => testKnex()('pgboss.job').where({ name: 'whatsapp-send' }).whereRaw("data->>'callId' = ?", [callId]);
/** An agent's JSON, as GET /api/agents lists it. */
const agentJson = async (shop: SignedIn, id: string) => (await shop.agent.get('/api/agents').expect(200)).body.agents.find((a: { id: string }) => a.id === id);
const kept = (messageId: string) => testKnex()('whatsapp_early_statuses').where({ message_id: messageId }).orderBy('status');
/** Another number of the same Meta app as PHONE_NUMBER_ID. */
const SECOND_NUMBER_ID = '106540352242933';
const OTHER_SECRET = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';

/** A status body of Meta's (test/fixtures/whatsapp) for our message `messageId`. */
function statusBody(messageId: string, value: 'sent' | 'delivered' | 'read' | 'failed') {
  return envelope({ statuses: [status(messageId, value)] });
}

describe('WhatsApp: statuses in any order, throttling, one URL for many numbers, saying what did not go out (issue 52)', function () {
  this.timeout(120_000);
  let worker: RunningWorker;
  let graph: Awaited<ReturnType<typeof graphDouble>>;
  /** What the double does for a phone number's next message: an answer, or a step run before answering. */
  const answers = new Map<string, Array<GraphAnswer | ((req: GraphRequest) => Promise<GraphAnswer>)>>();

  before(async () => {
    graph = await graphDouble(async (req) => {
      const next = answers.get(req.json?.to)?.shift() ?? sentAnswer();
      return typeof next === 'function' ? next(req) : next;
    });
    worker = await testWorker({ WHATSAPP_API_ORIGIN: graph.origin, DELIVERY_TIMEOUT_SECONDS: '10' });
  });
  after(async () => {
    await worker.stop();
    await graph.close();
  });

  describe('a status before the send’s answer', () => {
    it('failed (131026) posted by Meta before it answers the send: kept, then applied when the send is recorded — the call failed and the fallback has the order at once', async () => {
      const shop = await whatsappShop();
      const wamid = newWamid();
      let keptMeanwhile: unknown[] = [];
      answers.set('212612345701', [
        async () => {
          // Meta's notification comes first: no call carries this wamid yet.
          const res = await deliver(shop.whatsappId, statusBody(wamid, 'failed')).expect(200);
          expect(res.body).to.deep.equal({ ok: true });
          keptMeanwhile = await kept(wamid);
          return sentAnswer(wamid);
        },
      ]);
      const order = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345701' })
          .expect(201)
      ).body;
      const ops = await waitFor('the fallback has the order', async () => {
        const rows = await operationsOf(order.id);
        return rows.length === 2 ? rows : undefined;
      });
      expect(keptMeanwhile).to.have.length(1);
      expect(keptMeanwhile[0]).to.include({ agent_id: shop.whatsappId, status: 'failed', error: 'Message undeliverable' });
      expect(ops.map((op) => [op.status, op.agent_id, op.ladder_step])).to.deep.equal([
        ['completed', shop.whatsappId, 1],
        ['pending', shop.humanId, 2],
      ]);
      expect(ops[1].next_attempt_at.getTime()).to.be.at.most(Date.now());
      expect(await callOf(order.id)).to.include({ message_id: wamid, outcome: 'failed', summary: 'Message undeliverable' });
      expect((await orderRow(order.id)).status).to.equal('pending');
      expect(await kept(wamid)).to.deep.equal([]);
      // The same status again (Meta retries) changes nothing and is not kept again.
      await deliver(shop.whatsappId, statusBody(wamid, 'failed')).expect(200);
      expect(await operationsOf(order.id)).to.have.length(2);
      expect(await kept(wamid)).to.deep.equal([]);
      // The order page says so, with who has the order now; the agent's page shows the error and when.
      const page = oneLine((await shop.agent.get(`/orders/${order.id}`).expect(200)).text);
      expect(page).to.contain('WhatsApp: failed — Message undeliverable; handed to Salma');
      const agent = await agentJson(shop, shop.whatsappId);
      expect(agent.last_error).to.equal('Message undeliverable');
      expect(Date.parse(agent.last_error_at)).to.be.a('number').and.not.NaN;
    });

    it('sent, delivered and read posted before the answer are recorded once the send is; the call keeps waiting for a reply', async () => {
      const shop = await whatsappShop();
      const wamid = newWamid();
      answers.set('212612345702', [
        async () => {
          await deliver(shop.whatsappId, envelope({ statuses: [status(wamid, 'read'), status(wamid, 'sent')] })).expect(200);
          await deliver(shop.whatsappId, statusBody(wamid, 'delivered')).expect(200);
          return sentAnswer(wamid);
        },
      ]);
      const { order } = await sentOrder(shop, { ...ORDER, phone: '0612345702' });
      const call = await waitFor('the statuses applied', async () => {
        const row = await callOf(order.id);
        return row?.read_at && row.delivered_at ? row : undefined;
      });
      expect(call).to.include({ message_id: wamid, ended_at: null });
      expect(call.sent_at).to.be.instanceOf(Date);
      expect(await kept(wamid)).to.deep.equal([]);
      expect((await orderRow(order.id)).status).to.equal('calling');
      expect(await operationsOf(order.id)).to.have.length(1);
    });

    it('a status Meta sends that we do not use ("deleted"), or for a message id we never sent: 200, kept harmlessly, cleaned up after the longest reply window', async () => {
      const shop = await whatsappShop();
      const { order, call } = await sentOrder(shop, { ...ORDER, phone: '0612345703' });
      const deleted = await deliver(shop.whatsappId, envelope({ statuses: [status(call.message_id, 'deleted')] })).expect(200);
      expect(deleted.body).to.deep.equal({ ok: true });
      expect(await callOf(order.id)).to.include({ ended_at: null, delivered_at: null, read_at: null });
      expect(await kept(call.message_id)).to.deep.equal([]);
      // A wamid no call carries (a message the shop sent from another tool): kept, nothing else changes.
      const stranger = newWamid();
      await deliver(shop.whatsappId, envelope({ statuses: [status(stranger, 'sent'), status(stranger, 'failed')] })).expect(200);
      expect((await kept(stranger)).map((row) => row.status)).to.deep.equal(['failed', 'sent']);
      expect(await callOf(order.id)).to.include({ ended_at: null });
      expect(await operationsOf(order.id)).to.have.length(1);
      // Housekeeping deletes them once older than three days (the longest reply window), not before.
      const services = createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
      const receivedAt: Date = (await kept(stranger))[0].received_at;
      await services.whatsapp.pruneEarlyStatuses(new Date(receivedAt.getTime() + 71 * 3_600_000));
      expect(await kept(stranger)).to.have.length(2);
      await services.whatsapp.pruneEarlyStatuses(new Date(receivedAt.getTime() + 73 * 3_600_000));
      expect(await kept(stranger)).to.deep.equal([]);
    });
  });

  describe('throttling is "later", not "no"', () => {
    it('Meta’s 400 with 130429 (fixture), then 200: the same call is sent again a minute or more later and ends normally, never failed; the pages say why meanwhile', async () => {
      const shop = await whatsappShop();
      answers.set('212612345704', [errorAnswer(130429), sentAnswer()]);
      const order = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345704' })
          .expect(201)
      ).body;
      const throttled = await waitFor('the send throttled', async () => {
        const row = await callOf(order.id);
        return row?.send_error ? row : undefined;
      });
      expect(throttled).to.include({ ended_at: null, message_id: null, send_error: '(#130429) Rate limit hit' });
      expect(throttled.send_next_at.getTime() - throttled.send_error_at.getTime()).to.be.at.least(60_000);
      const [job] = (await sendJobs(throttled.id)).filter((row) => row.state === 'created');
      expect(job.data).to.deep.equal({ callId: throttled.id, try: 1, throttled: 1 });
      expect(job.start_after.getTime()).to.be.at.least(throttled.send_error_at.getTime() + 59_000);
      expect(await operationsOf(order.id)).to.have.length(1);

      // The order page: not sent, why, and that it is tried again — in English and in French.
      const page = oneLine((await shop.agent.get(`/orders/${order.id}`).expect(200)).text);
      expect(page).to.contain('WhatsApp: not sent — (#130429) Rate limit hit, retrying');
      // …instead of "a call is in progress", which it is not.
      expect(page).not.to.contain('A call is in progress');
      const fr = oneLine((await shop.agent.get(`/orders/${order.id}`).set('Accept-Language', 'fr').expect(200)).text);
      expect(fr).to.contain('WhatsApp : non envoyé — (#130429) Rate limit hit, nouvel essai prévu');
      // The agent: its last error and when, on its page and in its JSON; the agents list marks it (and only it).
      const agentPage = oneLine((await shop.agent.get(`/agents/${shop.whatsappId}`).expect(200)).text);
      expect(agentPage).to.contain('Last error (#130429) Rate limit hit');
      const agentHtml = (await shop.agent.get(`/agents/${shop.whatsappId}`).expect(200)).text;
      expect(agentHtml).to.contain(`<time datetime="${throttled.send_error_at.toISOString()}">`);
      const agent = await agentJson(shop, shop.whatsappId);
      expect(agent).to.include({ last_error: '(#130429) Rate limit hit', last_error_at: throttled.send_error_at.toISOString() });
      const list = (await shop.agent.get('/agents').expect(200)).text;
      const rows = [...list.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => pageText(m[1]));
      expect(rows.find((row) => row.includes('WhatsApp Atlas'))).to.contain('Messages not sent in the last hour');
      expect(rows.find((row) => row.includes('Salma'))).not.to.contain('Messages not sent in the last hour');

      // The number itself waits a minute.
      const paused = await testKnex()('whatsapp_agents').where({ agent_id: shop.whatsappId }).first('throttled_until');
      expect(paused.throttled_until.getTime() - throttled.send_error_at.getTime()).to.be.at.least(59_000);
      // The minute is up (brought forward): the same call, the same message, now taken.
      await testKnex()('whatsapp_agents').where({ agent_id: shop.whatsappId }).update({ throttled_until: testKnex().fn.now() });
      await testKnex()('pgboss.job').where({ id: job.id }).update({ start_after: testKnex().fn.now() });
      const sent = await waitFor('the message taken', async () => {
        const row = await callOf(order.id);
        return row?.message_id ? row : undefined;
      });
      expect(sent).to.include({ id: throttled.id, ended_at: null, send_next_at: null });
      expect(await testKnex()('whatsapp_agents').where({ agent_id: shop.whatsappId }).first('throttled_until')).to.deep.equal({ throttled_until: null });
      const tries = graph.received.filter((r) => r.json.to === '212612345704');
      expect(tries).to.have.length(2);
      expect(tries[1].json).to.deep.equal(tries[0].json);
      expect((await orderRow(order.id)).status).to.equal('calling');
      expect(oneLine((await shop.agent.get(`/orders/${order.id}`).expect(200)).text)).not.to.contain('not sent');
      // It ends as any message does: the customer confirms.
      await deliver(shop.whatsappId, envelope({ messages: [buttonMessage(`confirm:${sent.id}`, 'Confirmer', sent.message_id)] })).expect(200);
      expect(await callOf(order.id)).to.include({ outcome: 'confirmed' });
      expect((await operationsOf(order.id)).map((op) => op.status)).to.deep.equal(['completed']);
    });

    it('a number Meta throttles (130429) sends nothing else before its minute is up: another order’s message waits, untried, saying why, then goes out', async () => {
      const shop = await whatsappShop();
      answers.set('212612345710', [errorAnswer(130429)]);
      const first = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345710' })
          .expect(201)
      ).body;
      await waitFor('the first send throttled', async () => (await callOf(first.id))?.send_error);
      const second = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345711' })
          .expect(201)
      ).body;
      const waiting = await waitFor('the second message waiting for the number', async () => {
        const row = await callOf(second.id);
        return row?.send_next_at ? row : undefined;
      });
      expect(graph.received.filter((r) => r.json.to === '212612345711')).to.deep.equal([]);
      expect(waiting).to.include({ ended_at: null, message_id: null, send_error: '(#130429) Rate limit hit' });
      const paused = await testKnex()('whatsapp_agents').where({ agent_id: shop.whatsappId }).first('throttled_until');
      expect(waiting.send_next_at.getTime()).to.be.at.least(paused.throttled_until.getTime());
      const [job] = (await sendJobs(waiting.id)).filter((row) => row.state === 'created');
      expect(job.data).to.deep.equal({ callId: waiting.id, try: 1, throttled: 0 });
      expect(oneLine((await shop.agent.get(`/orders/${second.id}`).expect(200)).text)).to.contain('WhatsApp: not sent — (#130429) Rate limit hit, retrying');
      // The minute is up (brought forward, with every job of the number): both messages go out, each sent once.
      await testKnex()('whatsapp_agents').where({ agent_id: shop.whatsappId }).update({ throttled_until: testKnex().fn.now() });
      const bringForward = async () => {
        for (const orderId of [first.id, second.id]) {
          const call = await callOf(orderId);
          await testKnex()('pgboss.job')
            .where({ name: 'whatsapp-send', state: 'created' })
            .whereRaw("data->>'callId' = ?", [call.id])
            .update({ start_after: testKnex().fn.now() });
        }
      };
      await bringForward();
      await waitFor('both messages taken', async () => {
        const rows = await Promise.all([callOf(first.id), callOf(second.id)]);
        if (rows.every((row) => row.message_id)) return true;
        // The one that lost the minute's turn waits for the next: brought forward too.
        await testKnex()('whatsapp_agents')
          .where({ agent_id: shop.whatsappId })
          .whereNotNull('throttled_until')
          .update({ throttled_until: testKnex().fn.now() });
        await bringForward();
        return false;
      });
      expect(graph.received.filter((r) => r.json.to === '212612345711')).to.have.length(1);
      expect(graph.received.filter((r) => r.json.to === '212612345710')).to.have.length(2);
      expect((await callOf(second.id)).ended_at).to.equal(null);
    });

    it('throttled outside the calling hours: the next try waits for their opening, the backoff grows to 15 minutes at most, and the sweep never fails the call meanwhile', async () => {
      const shop = await whatsappShop();
      answers.set('212612345705', [errorAnswer(131056)]);
      const order = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345705' })
          .expect(201)
      ).body;
      const call = await waitFor('the send throttled', async () => {
        const row = await callOf(order.id);
        return row?.send_error ? row : undefined;
      });
      expect(call.send_error).to.equal('(#131056) (Business Account, Consumer Account) pair rate limit hit');
      // The calling hours now close for twelve hours: another "later" waits for their opening.
      const now = new Date();
      const minutes = now.getUTCHours() * 60 + now.getUTCMinutes();
      const start = (minutes + 12 * 60) % (23 * 60);
      const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
      await shop.agent
        .put('/api/settings/calls')
        .send({ callingHours: { start: hhmm(start), end: hhmm(start + 60) } })
        .expect(200);
      const services = createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
      const throttledAnswer: DeliveryResult = {
        delivered: false,
        status: 400,
        error: 'HTTP 400',
        failure: null,
        body: JSON.stringify(fixture('send-error-130429')),
        durationMs: 5,
      };
      expect((await services.whatsapp.answered(call.id, 1, throttledAnswer, 6)).result).to.equal('throttled');
      const waiting = await callOf(order.id);
      expect(waiting.send_next_at.getTime()).to.be.greaterThan(Date.now() + 60 * 60_000);
      const jobs = (await sendJobs(call.id)).filter((row) => row.state === 'created');
      expect(jobs.map((row) => row.data.throttled)).to.include(7);
      expect(jobs.find((row) => row.data.throttled === 7).start_after.getTime()).to.equal(waiting.send_next_at.getTime());
      // An hour later the sweep leaves it alone: it is tried again at the opening, never given up.
      await services.whatsapp.sweep(new Date(Date.now() + 3_600_000));
      expect(await callOf(order.id)).to.include({ ended_at: null, message_id: null });
      // Inside the hours the backoff is capped at 15 minutes.
      await shop.agent
        .put('/api/settings/calls')
        .send({ callingHours: { start: '00:00', end: '24:00' } })
        .expect(200);
      const before = Date.now();
      await services.whatsapp.answered(call.id, 1, throttledAnswer, 9);
      const capped = (await callOf(order.id)).send_next_at.getTime() - before;
      expect(capped)
        .to.be.at.least(15 * 60_000 - 1000)
        .and.at.most(15 * 60_000 + 5000);
    });

    it('which answers are "later": 130429, 131056, 131048, 80007 and any HTTP 429; other 4xx stay refusals (fixtures of Meta’s error bodies)', () => {
      const answer = (status: number, body: object) =>
        readSendAnswer({ delivered: false, status, error: `HTTP ${status}`, failure: null, body: JSON.stringify(body), durationMs: 1 });
      const error = (code: number, message: string) => ({ error: { message, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp' } } });
      expect(answer(400, fixture('send-error-130429'))).to.deep.equal({ result: 'throttled', message: '(#130429) Rate limit hit', scope: 'number' });
      // The pair rate limit holds back the messages to one customer, not the number.
      expect(answer(400, fixture('send-error-131056'))).to.include({ result: 'throttled', scope: 'pair' });
      expect(answer(400, error(131048, '(#131048) Spam rate limit hit'))).to.include({ result: 'throttled', scope: 'number' });
      expect(answer(400, error(80007, '(#80007) Rate limit issues'))).to.include({ result: 'throttled', scope: 'number' });
      expect(answer(429, { nothing: true })).to.deep.equal({ result: 'throttled', message: 'HTTP 429', scope: 'number' });
      expect(answer(400, fixture('send-error-131026'))).to.deep.equal({ result: 'refused', message: '(#131026) Message undeliverable' });
      expect(answer(400, error(132001, '(#132001) Template name does not exist in the translation')).result).to.equal('refused');
      expect(answer(401, { nothing: true }).result).to.equal('refused');
    });
  });

  describe('one callback URL for every number of an app: routed by metadata.phone_number_id', () => {
    it('a reply for number B posted to A’s URL reaches B’s call; with another app secret, or a number of another workspace, it is ignored', async () => {
      const shop = await whatsappShop();
      // B: a second number of the same app (same secret), now the order handler.
      const b = (
        await shop.agent
          .post('/api/agents')
          .send({ ...whatsappAgent(shop.humanId), name: 'WhatsApp Casa', phoneNumberId: SECOND_NUMBER_ID })
          .expect(201)
      ).body;
      const forB = await sentOrder(shop, { ...ORDER, phone: '0612345706' });
      const bCall = await callOf(forB.order.id);
      expect((await testKnex()('operations').where({ id: bCall.operation_id }).first()).agent_id).to.equal(b.id);
      const reply = 'Bghit nbeddel l’adresse';
      // Naming A's own number: A has no call waiting for this customer, B's call is untouched.
      await deliver(shop.whatsappId, envelope({ messages: [textMessage(reply, undefined, '212612345706')] }, PHONE_NUMBER_ID)).expect(200);
      expect(await callOf(forB.order.id)).to.include({ ended_at: null });
      // Naming B's number, on A's URL, signed with the app's secret: B's call has the reply, and the fallback the order.
      const body = fixture('message-text');
      const value = body.entry[0].changes[0].value;
      value.metadata.phone_number_id = SECOND_NUMBER_ID;
      value.contacts[0].wa_id = '212612345706';
      Object.assign(value.messages[0], textMessage(reply, undefined, '212612345706'));
      await deliver(shop.whatsappId, body).expect(200);
      expect(await callOf(forB.order.id)).to.include({ outcome: 'no-answer', reply });
      expect((await operationsOf(forB.order.id)).map((op) => op.agent_id)).to.deep.equal([b.id, shop.humanId]);
      // A button for B's call, on A's URL naming B's number: applied to B.
      const pressed = await sentOrder(shop, { ...ORDER, phone: '0612345707' });
      // A status of B's message, on A's URL naming B's number: recorded on B's call.
      await deliver(shop.whatsappId, envelope({ statuses: [status(pressed.call.message_id, 'delivered')] }, SECOND_NUMBER_ID)).expect(200);
      expect((await callOf(pressed.order.id)).delivered_at).to.be.instanceOf(Date);
      await deliver(shop.whatsappId, envelope({ messages: [buttonMessage(`confirm:${pressed.call.id}`, 'Confirmer')] }, SECOND_NUMBER_ID)).expect(200);
      expect(await callOf(pressed.order.id)).to.include({ outcome: 'confirmed' });

      // C: a number of another app (another secret). A change naming it, signed with A's secret on A's URL, is ignored.
      const c = (
        await shop.agent
          .post('/api/agents')
          .send({ ...whatsappAgent(shop.humanId), name: 'WhatsApp Fès', phoneNumberId: '106540352242944', appSecret: OTHER_SECRET })
          .expect(201)
      ).body;
      const forC = await sentOrder(shop, { ...ORDER, phone: '0612345708' });
      expect((await testKnex()('operations').where({ id: forC.call.operation_id }).first()).agent_id).to.equal(c.id);
      const toC = envelope({ messages: [textMessage('salam', undefined, '212612345708')] }, '106540352242944');
      await deliver(shop.whatsappId, toC).expect(200);
      expect(await callOf(forC.order.id)).to.include({ ended_at: null });
      // On C's own URL, signed with C's secret, the same change is C's.
      const raw = JSON.stringify(toC);
      await deliver(c.id, raw, sign(raw, OTHER_SECRET)).expect(200);
      expect(await callOf(forC.order.id)).to.include({ outcome: 'no-answer', reply: 'salam' });

      // Another workspace with B's number and the same secret: never reached through this workspace's URL.
      const other = await signUp();
      const otherHuman = (await other.agent.post('/api/agents').send({ name: 'Karim' }).expect(201)).body;
      await other.agent
        .post('/api/agents')
        .send({ ...whatsappAgent(otherHuman.id), phoneNumberId: SECOND_NUMBER_ID })
        .expect(201);
      await other.agent
        .put('/api/settings/calls')
        .send({ callingHours: { start: '00:00', end: '24:00' } })
        .expect(200);
      const theirs = await sentOrder(other, { ...ORDER, phone: '0612345709' });
      await deliver(shop.whatsappId, envelope({ messages: [textMessage('salam', undefined, '212612345709')] }, SECOND_NUMBER_ID)).expect(200);
      expect(await callOf(theirs.order.id)).to.include({ ended_at: null });
      expect(APP_SECRET).not.to.equal(OTHER_SECRET);
    });
  });

  it('the add form starts with a 4-hour reply window, as the API does', async () => {
    const shop = await signUp();
    const page = (await shop.agent.get('/agents').expect(200)).text;
    expect(page).to.match(/name="reply_window_hours"[^>]*value="4"|value="4"[^>]*name="reply_window_hours"/);
  });
});
