import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ROOT } from '../../config';
import type { SignedIn } from './app';
import { appUrl, signUp } from './app';
import { testKnex } from './db';
import { openAllDay, waitFor } from './loop';

export const APP_SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
export const ACCESS_TOKEN = `EAAG${'x'.repeat(40)}`;
export const PHONE_NUMBER_ID = '106540352242922';

export interface GraphRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: the JSON the service sent, read field by field by the tests
  json: any;
}

export type GraphAnswer = { status: number; body: object } | 'hang';

/**
 * An HTTP double of Meta's Graph API on 127.0.0.1: records each request, answers as told (by default
 * a wamid). An answer may be awaited: the double can post to our webhook before it answers the send.
 */
export async function graphDouble(answer: (req: GraphRequest, n: number) => GraphAnswer | Promise<GraphAnswer> = () => sentAnswer()) {
  const received: GraphRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      let json: unknown = {};
      try {
        json = JSON.parse(body);
      } catch {}
      const entry = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, json };
      received.push(entry);
      const action = await answer(entry, received.length);
      if (action === 'hang') return;
      res.writeHead(action.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(action.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A body of Meta's documentation kept in test/fixtures/whatsapp (its README names the page of each), as a fresh copy. */
// biome-ignore lint/suspicious/noExplicitAny: Meta's JSON, changed field by field by the tests
export function fixture(name: string): any {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'whatsapp', `${name}.json`), 'utf8'));
}

/** Meta's answer to a refused or throttled send: HTTP 400 (or as given) with the documented error body of `test/fixtures/whatsapp/send-error-{code}.json`. */
export function errorAnswer(code: number, status = 400) {
  return { status, body: fixture(`send-error-${code}`) };
}

export const newWamid = () => `wamid.${crypto.randomBytes(12).toString('hex')}`;

export function sentAnswer(id = newWamid()) {
  return { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: '212612345678', wa_id: '212612345678' }], messages: [{ id }] } };
}

/** The body that creates the order handler, a WhatsApp agent handing over to `fallbackAgentId`. */
export function whatsappAgent(fallbackAgentId: string) {
  return {
    name: 'WhatsApp Atlas',
    kind: 'whatsapp',
    orderHandler: true,
    phoneNumberId: PHONE_NUMBER_ID,
    accessToken: ACCESS_TOKEN,
    appSecret: APP_SECRET,
    templateName: 'order_confirmation',
    templateLanguage: 'fr',
    fallbackAgentId,
  };
}

/** A workspace whose order handler is a WhatsApp agent falling back to a human agent. */
export async function whatsappShop(extra: object = {}) {
  const shop = await signUp();
  const human = await shop.agent.post('/api/agents').send({ name: 'Salma' }).expect(201);
  const created = await shop.agent
    .post('/api/agents')
    .send({ ...whatsappAgent(human.body.id), ...extra })
    .expect(201);
  await openAllDay(shop);
  return {
    ...shop,
    whatsappId: created.body.id as string,
    humanId: human.body.id as string,
    verifyToken: created.body.verify_token as string,
    created: created.body,
  };
}

export const callOf = (orderId: string) =>
  testKnex()('calls as c').join('operations as op', 'op.id', 'c.operation_id').where({ 'op.order_id': orderId, 'op.ladder_step': 1 }).first('c.*');

/** An order whose message Meta took: its call and the wamid. */
export async function sentOrder(shop: SignedIn, body: object) {
  const res = await shop.agent.post('/api/orders').send(body).expect(201);
  const call = await waitFor('message sent', async () => {
    const row = await callOf(res.body.id);
    return row?.message_id ? row : undefined;
  });
  return { order: res.body, call };
}

export function sign(body: string, secret = APP_SECRET): string {
  return `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Meta's webhook delivery, signed with the app secret (or `signature` as given). */
export function deliver(agentId: string, payload: object | string, signature?: string) {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return request(appUrl())
    .post(`/hooks/whatsapp/${agentId}`)
    .set('X-Hub-Signature-256', signature ?? sign(body))
    .set('Content-Type', 'application/json')
    .send(body);
}

/**
 * The envelope Meta wraps messages and statuses in (test/fixtures/whatsapp/message-text.json), for
 * the number `phoneNumberId` (ours by default), holding `value`'s messages and statuses.
 */
export function envelope(value: { messages?: object[]; statuses?: object[] }, phoneNumberId = PHONE_NUMBER_ID) {
  const body = fixture('message-text');
  const change = body.entry[0].changes[0];
  change.value.metadata.phone_number_id = phoneNumberId;
  change.value.contacts = [{ profile: { name: 'Amina' }, wa_id: '212612345678' }];
  delete change.value.messages;
  Object.assign(change.value, value);
  return body;
}

const unix = () => String(Math.floor(Date.now() / 1000));

export function buttonMessage(payload: string, text: string, quoted?: string) {
  return {
    context: quoted ? { from: '15550783881', id: quoted } : undefined,
    from: '212612345678',
    id: `wamid.in.${crypto.randomBytes(10).toString('hex')}`,
    timestamp: unix(),
    type: 'button',
    button: { payload, text },
  };
}

export function interactiveReply(id: string, title: string) {
  return {
    from: '212612345678',
    id: `wamid.in.${crypto.randomBytes(10).toString('hex')}`,
    timestamp: unix(),
    type: 'interactive',
    interactive: { type: 'button_reply', button_reply: { id, title } },
  };
}

export function textMessage(body: string, quoted?: string, from = '212612345678') {
  return {
    ...(quoted ? { context: { from: '15550783881', id: quoted } } : {}),
    from,
    id: `wamid.in.${crypto.randomBytes(10).toString('hex')}`,
    timestamp: unix(),
    type: 'text',
    text: { body },
  };
}

export function imageMessage() {
  return {
    from: '212612345678',
    id: `wamid.in.${crypto.randomBytes(10).toString('hex')}`,
    timestamp: unix(),
    type: 'image',
    image: { mime_type: 'image/jpeg', sha256: 'abc', id: '1234567890' },
  };
}

/**
 * A status of one of our messages as Meta reports it: `failed` as test/fixtures/whatsapp/status-failed.json
 * (error 131026, "Message undeliverable"), any other value as status-sent.json with that value.
 */
export function status(messageId: string, value: string, extra: object = {}) {
  const base = fixture(value === 'failed' ? 'status-failed' : 'status-sent').entry[0].changes[0].value.statuses[0];
  return { ...base, id: messageId, status: value, timestamp: unix(), recipient_id: '212612345678', ...extra };
}

/**
 * A workspace's order as it stands after its WhatsApp step: the message sent, delivered and read,
 * the customer wrote back, and the order went on to a person (step 2, waiting). Written to the
 * tables as the loop writes them, so that a page can be looked at without Meta or a worker.
 */
export async function seedWhatsAppStep(api: SignedIn['agent'], orderHandler = true): Promise<{ agentId: string; orderId: string }> {
  const human = await api.post('/api/agents').send({ name: 'Nadia' }).expect(201);
  const agent = await api
    .post('/api/agents')
    .send({
      name: 'WhatsApp Atlas',
      kind: 'whatsapp',
      phoneNumberId: PHONE_NUMBER_ID,
      accessToken: ACCESS_TOKEN,
      appSecret: APP_SECRET,
      templateName: 'order_confirmation',
      templateLanguage: 'fr',
      fallbackAgentId: human.body.id,
      orderHandler,
    })
    .expect(201);
  const order = (
    await api
      .post('/api/orders')
      .send({ clientName: 'Amina Benali', phone: '0612345678', storeName: 'Atlas', productsName: '2 × Babouches', totalAmount: 349 })
      .expect(201)
  ).body;
  const knex = testKnex();
  const sent = new Date(Date.now() - 3_600_000);
  await knex.transaction(async (trx) => {
    const op = await trx('operations').where({ id: order.operation_id }).first('workspace_id');
    await trx('operations').where({ id: order.operation_id }).update({ agent_id: agent.body.id, status: 'completed', next_attempt_at: null, attempts: 1 });
    await trx('calls').insert({
      workspace_id: op.workspace_id,
      operation_id: order.operation_id,
      kind: 'whatsapp',
      attempt: 1,
      started_at: sent,
      ended_at: new Date(sent.getTime() + 1_200_000),
      outcome: 'no-answer',
      summary: 'Bghit nbeddel l’adresse, 3ayet li 3afak',
      reply: 'Bghit nbeddel l’adresse, 3ayet li 3afak',
      message_id: `wamid.${crypto.randomBytes(12).toString('hex')}`,
      sent_at: sent,
      delivered_at: new Date(sent.getTime() + 5_000),
      read_at: new Date(sent.getTime() + 600_000),
      ended_by: 'agent',
    });
    await trx('operations').insert({
      workspace_id: op.workspace_id,
      order_id: order.id,
      agent_id: human.body.id,
      direction: 'outbound',
      status: 'pending',
      next_attempt_at: new Date(),
      ladder_step: 2,
    });
  });
  return { agentId: agent.body.id, orderId: order.id };
}
