import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { createVoiceAgent } from '../../examples/voice-agent';
import { newMessageId, newSigningSecret, signedHeaders, verifySignature } from '../../integrations/signing';
import { CreditService } from '../../services/accounts';
import { signUp, testApp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { callsOf, openAllDay, ORDER, orderRow, testWorker, waitFor } from '../helpers/loop';

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

interface Report {
  callId: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { type: string; data?: Record<string, unknown> };
  receivedAt: number;
}

/** Stands in for our /hooks/calls/:callId: records each report and answers 200. */
async function callbackServer() {
  const reports: Report[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const callId = req.url!.split('/').pop()!;
      reports.push({ callId, headers: req.headers, body, json: JSON.parse(body), receivedAt: Date.now() });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  const url = await listen(server);
  return { url, reports, of: (callId: string) => reports.filter((r) => r.callId === callId), close: () => close(server) };
}

/** A call.requested as jobs/call-request.ts builds it. */
function callRequested(callbackBase: string, phone: string) {
  const callId = crypto.randomUUID();
  const body = JSON.stringify({
    type: 'call.requested',
    timestamp: new Date().toISOString(),
    data: {
      call_id: callId,
      operation_id: crypto.randomUUID(),
      attempt: 1,
      order: {
        id: crypto.randomUUID(),
        client_name: 'Amina Benali',
        phone,
        store_name: 'Atlas Shop',
        products_name: 'Argan oil x2',
        address: null,
        status: 'processing',
        created_at: new Date().toISOString(),
      },
      workspace: { id: crypto.randomUUID(), name: 'Atlas' },
      callback_url: `${callbackBase}/hooks/calls/${callId}`,
      respond_by: new Date(Date.now() + 30 * 60_000).toISOString(),
    },
  });
  return { callId, body };
}

describe('the reference voice agent (examples/voice-agent)', function () {
  this.timeout(30_000);
  const secret = newSigningSecret();
  let agentUrl: string;
  let agent: http.Server;
  let callback: Awaited<ReturnType<typeof callbackServer>>;

  before(async () => {
    agent = createVoiceAgent({ secret, delayMs: 20, retryDelaysMs: [50] });
    agentUrl = await listen(agent);
    callback = await callbackServer();
  });
  after(async () => {
    await close(agent);
    await callback.close();
  });

  function send(body: string, headers = signedHeaders(secret, newMessageId(), body)) {
    return request(agentUrl).post('/').set(headers).set('Content-Type', 'application/json').send(body);
  }

  /** The call.ended of a call, once it has arrived. */
  const endOf = (callId: string) => waitFor(`call.ended of ${callId}`, async () => callback.of(callId).find((r) => r.json.type === 'call.ended'), 10_000);

  it('202 to a signed call.requested, then a signed call.started and call.ended, each with its own webhook-id; the outcome follows the last digit', async () => {
    const expected: Record<string, string> = {
      0: 'confirmed',
      3: 'confirmed',
      4: 'unconfirmed',
      5: 'no-answer',
      6: 'postponed',
      7: 'order-changed',
      8: 'unrecognized',
      9: 'failed',
    };
    const sentAt = Date.now();
    const calls: { digit: string; callId: string; messageId: string }[] = [];
    for (const digit of Object.keys(expected)) {
      const { callId, body } = callRequested(callback.url, `+21261234567${digit}`);
      const messageId = newMessageId();
      await send(body, signedHeaders(secret, messageId, body)).expect(202);
      calls.push({ digit, callId, messageId });
    }
    for (const { digit, callId, messageId } of calls) {
      const ended = await endOf(callId);
      const reports = callback.of(callId);
      expect(reports.map((r) => r.json.type)).to.deep.equal(['call.started', 'call.ended']);
      for (const r of reports) {
        expect(verifySignature(secret, Buffer.from(r.body), r.headers), `signature of ${r.json.type}`).to.equal(true);
        expect(r.json.data?.call_id, `call_id of ${r.json.type}`).to.equal(callId);
        expect(r.headers['content-type']).to.equal('application/json');
      }
      const ids = new Set([messageId, ...reports.map((r) => r.headers['webhook-id'])]);
      expect(ids.size, 'one webhook-id per message').to.equal(3);
      const data = ended.json.data!;
      expect(data.outcome, `phone ending ${digit}`).to.equal(expected[digit]);
      expect(data.duration_seconds).to.be.a('number').and.to.be.at.least(0);
      expect(data.summary).to.be.a('string').and.not.equal('');
      if (digit === '6') {
        const callbackAt = new Date(data.callback_at as string).getTime();
        expect(callbackAt).to.be.within(sentAt + 10 * 60_000 - 1000, ended.receivedAt + 10 * 60_000 + 1000);
      } else {
        expect(data.callback_at).to.equal(null);
      }
      if (digit === '7') expect(data.changes).to.be.a('string').and.not.equal('');
      else expect(data.changes).to.equal(null);
    }
  });

  it('401 for a missing, wrong or stale signature or a tampered body; nothing is reported', async () => {
    const refused: string[] = [];
    const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const cases = [
      (): Record<string, string> => ({}),
      (body: string) => signedHeaders(other, newMessageId(), body),
      (body: string) => signedHeaders(secret, newMessageId(), body, new Date(Date.now() - 6 * 60_000)),
      (body: string) => signedHeaders(secret, newMessageId(), body.replace('"attempt":1', '"attempt":2')),
    ];
    for (const headersFor of cases) {
      const { callId, body } = callRequested(callback.url, '+212612345670');
      const res = await send(body, headersFor(body)).expect(401);
      expect(res.body).to.deep.equal({ error: 'invalid_signature' });
      refused.push(callId);
    }
    // A good request sent after them ends after any call they could have started.
    const { callId, body } = callRequested(callback.url, '+212612345670');
    await send(body).expect(202);
    await endOf(callId);
    for (const id of refused) expect(callback.of(id), `reports for refused call ${id}`).to.deep.equal([]);
  });

  it('a retried call.requested (same webhook-id) is accepted again but starts no second call', async () => {
    const { callId, body } = callRequested(callback.url, '+212612345671');
    const messageId = newMessageId();
    await send(body, signedHeaders(secret, messageId, body)).expect(202);
    await send(body, signedHeaders(secret, messageId, body)).expect(202);
    await endOf(callId);
    const sentinel = callRequested(callback.url, '+212612345671');
    await send(sentinel.body).expect(202);
    await endOf(sentinel.callId);
    expect(callback.of(callId).map((r) => r.json.type)).to.deep.equal(['call.started', 'call.ended']);
  });

  it('400 for a signed body that is not a call.requested', async () => {
    const body = JSON.stringify({ type: 'call.cancelled', data: {} });
    await send(body).expect(400);
  });
});

describe('the whole loop with the reference voice agent', function () {
  this.timeout(60_000);

  it('orders with phones ending 0 and 4 become confirmed and unconfirmed; one spend row each', async () => {
    const web = http.createServer();
    const baseUrl = await listen(web);
    web.on('request', testApp({ PUBLIC_BASE_URL: baseUrl }));
    const worker = await testWorker({ PUBLIC_BASE_URL: baseUrl });
    let voiceAgent: http.Server | undefined;
    try {
      const shop = await signUp({ target: baseUrl });
      await openAllDay(shop);
      // The agent's secret exists once the agent does; its endpoint is set once the example listens.
      const created = await shop.agent
        .post('/api/agents')
        .send({ name: 'Robot', kind: 'voice', endpointUrl: 'http://127.0.0.1:9/', orderHandler: true })
        .expect(201);
      voiceAgent = createVoiceAgent({ secret: created.body.secret, delayMs: 50 });
      const agentUrl = await listen(voiceAgent);
      await shop.agent
        .put(`/api/agents/${created.body.id}`)
        .send({ endpointUrl: `${agentUrl}/` })
        .expect(200);
      await new CreditService(testKnex()).grant(shop.email, 10);

      const confirmed = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345670' })
          .expect(201)
      ).body;
      const declined = (
        await shop.agent
          .post('/api/orders')
          .send({ ...ORDER, phone: '0612345674' })
          .expect(201)
      ).body;
      const final = ['confirmed', 'unconfirmed'];
      for (const [order, status] of [
        [confirmed, 'confirmed'],
        [declined, 'unconfirmed'],
      ] as const) {
        await waitFor(`order ending ${order.phone.slice(-1)} ${status}`, async () => final.includes((await orderRow(order.id)).status), 45_000);
        expect((await orderRow(order.id)).status).to.equal(status);
        const calls = await callsOf(order.operation_id);
        expect(calls).to.have.length(1);
        expect(calls[0]).to.include({ kind: 'voice', outcome: status, ended_by: 'agent' });
        const spends = await testKnex()('credit_ledger').where({ call_id: calls[0].id, kind: 'spend' });
        expect(spends).to.have.length(1);
        const operations = await shop.agent.get(`/api/orders/${order.id}/operations`).expect(200);
        expect(operations.body.operations[0]).to.include({ status: 'completed' });
      }
      const credits = await shop.agent.get('/api/credits').expect(200);
      expect(credits.body).to.deep.equal({ credits: 8, totalCredits: 10, totalSpent: 2 });
    } finally {
      if (voiceAgent) await close(voiceAgent);
      await worker.stop();
      await close(web);
    }
  });
});
