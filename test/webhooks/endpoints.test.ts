import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../config';
import { Jobs } from '../../db/jobs';
import { SignedSender } from '../../integrations/http';
import { createServices } from '../../services';
import { messageBody, RETRY_DELAYS_SECONDS } from '../../services/webhooks';
import type { SignedIn } from '../helpers/app';
import { appUrl, csrfOf, signUp, TEST_ENV } from '../helpers/app';
import { testDatabaseUrl, testKnex } from '../helpers/db';
import { opened } from '../helpers/secrets';
import { createKey, randomIp } from '../helpers/keys';
import { agentDouble, ORDER, openAllDay, voiceShop, waitFor } from '../helpers/loop';
import { startWorkerProcess } from '../helpers/process';

const ABSENT_ID = '00000000-0000-4000-8000-000000000000';
const NOT_FOUND = { error: 'Webhook endpoint not found' };
const services = () => createServices(testKnex(), loadConfig(TEST_ENV), new Jobs(testKnex()));
const sender = new SignedSender(true, 2000);
const send = (m: Parameters<SignedSender['send']>[0]) => sender.send(m);

interface Hit {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
}
type Answer = number | 'hang' | 'reset' | 'huge';

/** A webhook receiver on loopback: records each request and answers as told. */
async function receiver(answer: (hit: Hit, n: number) => Answer = () => 200) {
  const hits: Hit[] = [];
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const hit = { headers: req.headers, body, json: JSON.parse(body) };
      hits.push(hit);
      const action = answer(hit, hits.length);
      if (action === 'hang') return void hanging.push(res);
      if (action === 'reset') return void req.socket.destroy();
      if (action === 'huge') {
        res.writeHead(500, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = 160; // 10 MB
        const write = () => {
          while (left > 0) {
            left -= 1;
            if (!res.write(chunk)) return void res.once('drain', write);
          }
          res.end();
        };
        res.on('error', () => {});
        return write();
      }
      if (action >= 300 && action < 400) res.setHeader('Location', `http://127.0.0.1:${(server.address() as AddressInfo).port}/moved`);
      res.statusCode = action;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    hits,
    release: () => {
      for (const res of hanging.splice(0)) res.end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Shop = SignedIn & { workspaceId: string };

async function shop(): Promise<Shop> {
  const s = await signUp();
  await s.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
  return { ...s, workspaceId: s.workspaceId! };
}

async function endpoint(s: Shop, url: string, body: object = {}) {
  return (
    await s.agent
      .post('/api/webhooks')
      .send({ url, ...body })
      .expect(201)
  ).body as { id: string; secret: string; events: string[] };
}

const deliveriesOf = (endpointId: string) =>
  testKnex()('webhook_deliveries as d')
    .join('webhook_messages as m', 'm.id', 'd.message_id')
    .where('d.endpoint_id', endpointId)
    .orderBy('d.created_at')
    .select('d.*', 'm.event_type', 'm.message_id as webhook_id');
const makeDue = (endpointId: string) =>
  testKnex()('webhook_deliveries')
    .where({ endpoint_id: endpointId, status: 'pending' })
    .update({ next_attempt_at: testKnex().raw("now() - interval '1 second'") });

describe('webhook endpoints: /api/webhooks (webhooks.md)', () => {
  it('POST 201: the endpoint with its whsec_ secret (not cached), every event by default; the list never shows the secret', async () => {
    const s = await shop();
    const res = await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/hooks', description: 'Store' }).expect(201);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(Object.keys(res.body)).to.deep.equal(['id', 'url', 'events', 'description', 'enabled', 'created_at', 'disabled_reason', 'secret']);
    expect(res.body).to.include({ url: 'http://127.0.0.1:9/hooks', description: 'Store', enabled: true, disabled_reason: null });
    expect(res.body.events).to.deep.equal([
      'order.created',
      'order.updated',
      'order.deleted',
      'order.delivery_updated',
      'call.ended',
      'customer.erased',
      'webhook.test',
    ]);
    expect(res.body.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(res.body.secret.slice(6), 'base64')).to.have.length(32);
    const list = await s.agent.get('/api/webhooks').expect(200);
    expect(list.body.endpoints).to.have.length(1);
    expect(list.body.endpoints[0]).not.to.have.property('secret');
    expect(JSON.stringify(list.body)).not.to.contain(res.body.secret);
    const row = await testKnex()('webhook_endpoints').where({ id: res.body.id }).first();
    // Sealed at rest (SECURITY.md): the row opens to the secret, and holds none of it in clear.
    expect(opened(row)).to.include({ workspace_id: s.workspaceId, secret: res.body.secret });
    expect(row.secret).to.match(/^v1:/).and.not.contain(res.body.secret.slice(6));
  });

  it('400 VALIDATION_ERROR for URLs of every bad shape and for bad events lists; nothing is written', async () => {
    const s = await shop();
    const badUrls = [
      undefined,
      '',
      'not a url',
      'ftp://example.com/x',
      'http://user:pw@example.com/x',
      '/relative',
      `http://example.com/${'a'.repeat(2001)}`,
      42,
      'javascript:alert(1)',
    ];
    for (const url of badUrls) {
      const res = await s.agent.post('/api/webhooks').send({ url }).expect(400);
      expect(res.body.code, String(url)).to.equal('VALIDATION_ERROR');
      expect(res.body.fields, String(url)).to.have.property('url');
    }
    for (const events of [['order.shipped'], [], 'order.created', [42], ['order.created', 'nope']]) {
      const res = await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/x', events }).expect(400);
      expect(res.body.fields, JSON.stringify(events)).to.have.property('events');
    }
    expect(await testKnex()('webhook_endpoints').where({ workspace_id: s.workspaceId })).to.have.length(0);
  });

  it('private addresses are refused where the loop refuses them (production rules)', async () => {
    const prod = createServices(
      testKnex(),
      { ...loadConfig(TEST_ENV), calls: { ...loadConfig(TEST_ENV).calls, allowPrivateUrls: false }, isProduction: true },
      new Jobs(testKnex()),
    );
    const s = await shop();
    for (const url of ['https://127.0.0.1/x', 'https://10.0.0.5/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'http://example.com/x']) {
      const err = await prod.webhooks.create({ id: s.workspaceId, role: 'owner' }, { url }).then(
        () => null,
        (e) => e,
      );
      expect(err?.fields, url).to.have.property('url');
    }
  });

  it('409 beyond 10 endpoints per workspace', async () => {
    const s = await shop();
    await Promise.all(Array.from({ length: 12 }, (_, i) => s.agent.post('/api/webhooks').send({ url: `http://127.0.0.1:9/${i}` })));
    expect(await testKnex()('webhook_endpoints').where({ workspace_id: s.workspaceId })).to.have.length(10);
    const res = await s.agent.post('/api/webhooks').send({ url: 'http://127.0.0.1:9/eleven' }).expect(409);
    expect(res.body.code).to.equal('TOO_MANY_WEBHOOKS');
  });

  it('PUT edits url, events, description and enabled; DELETE 204 drops its pending deliveries', async () => {
    const s = await shop();
    const e = await endpoint(s, 'http://127.0.0.1:9/a');
    const res = await s.agent
      .put(`/api/webhooks/${e.id}`)
      .send({ url: 'http://127.0.0.1:9/b', events: ['order.updated'], description: '' })
      .expect(200);
    expect(res.body).to.include({ url: 'http://127.0.0.1:9/b', description: null, enabled: true });
    expect(res.body.events).to.deep.equal(['order.updated']);
    const off = await s.agent.put(`/api/webhooks/${e.id}`).send({ enabled: false }).expect(200);
    expect(off.body.enabled).to.equal(false);
    expect(off.body.disabled_reason).to.be.a('string');
    const on = await s.agent.put(`/api/webhooks/${e.id}`).send({ enabled: true }).expect(200);
    expect(on.body).to.include({ enabled: true, disabled_reason: null });
    await s.agent.put(`/api/webhooks/${e.id}`).send({ enabled: 'yes' }).expect(400);
    await s.agent.post('/api/orders').send(ORDER).expect(201);
    const order = (await s.agent.get('/api/orders').expect(200)).body.orders[0];
    await s.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed' }).expect(200);
    expect(await deliveriesOf(e.id)).to.have.length(1);
    await s.agent.delete(`/api/webhooks/${e.id}`).expect(204);
    expect(await testKnex()('webhook_deliveries').where({ endpoint_id: e.id })).to.have.length(0);
    await s.agent.get(`/api/webhooks/${e.id}`).expect(404);
  });

  it('another workspace’s endpoint is 404 on every route, as an absent id and a non-UUID; it is left as it was', async () => {
    const owner = await shop();
    const theirs = await endpoint(owner, 'http://127.0.0.1:9/theirs');
    const before = await testKnex()('webhook_endpoints').where({ id: theirs.id }).first();
    const s = await shop();
    for (const id of [theirs.id, ABSENT_ID, 'not-a-uuid']) {
      const calls = [
        s.agent.get(`/api/webhooks/${id}`),
        s.agent.put(`/api/webhooks/${id}`).send({ enabled: false }),
        s.agent.delete(`/api/webhooks/${id}`),
        s.agent.post(`/api/webhooks/${id}/rotate-secret`),
        s.agent.post(`/api/webhooks/${id}/test`),
        s.agent.get(`/api/webhooks/${id}/deliveries`),
        s.agent.post(`/api/webhooks/${id}/deliveries/${ABSENT_ID}/resend`),
      ];
      for (const [i, res] of (await Promise.all(calls)).entries()) {
        expect(res.status, `route ${i} with ${id}`).to.equal(404);
        expect(res.body).to.deep.equal(NOT_FOUND);
      }
    }
    expect(await testKnex()('webhook_endpoints').where({ id: theirs.id }).first()).to.deep.equal(before);
    await request(appUrl()).get('/api/webhooks').expect(401);
  });
});

describe('events are recorded with the change, from every path (webhooks.md: Events)', () => {
  it('order.created, order.updated and order.deleted from /api, the pages, the Data API and an import, with the documented data', async () => {
    const s = await shop();
    const e = await endpoint(s, 'http://127.0.0.1:9/all');
    const viaApi = (
      await s.agent
        .post('/api/orders')
        .send({ ...ORDER, externalRef: '#1001', totalAmount: 349 })
        .expect(201)
    ).body;
    expect(viaApi).to.include({ external_ref: '#1001', total_amount: '349.00', currency: 'MAD', source: 'api' });
    const csrf = await csrfOf(s.agent, '/orders/new');
    await s.agent.post('/orders').type('form').send({ _csrf: csrf, client_name: 'Page', phone: '0612345678', store_name: 'S', products_name: 'P' }).expect(303);
    const { key } = await createKey(s);
    const token = (await request(appUrl()).post('/api/v1/token').set('X-Forwarded-For', randomIp()).set('Authorization', `Bearer ${key}`).expect(200)).body
      .access_token;
    const viaData = (
      await request(appUrl())
        .post('/data/v1/orders')
        .set('apikey', loadConfig(TEST_ENV).publishableKey)
        .set('Authorization', `Bearer ${token}`)
        .send({ ...ORDER, clientName: 'Data' })
        .expect(201)
    ).body;
    const imported = (
      await s.agent.post('/api/orders/import').type('text/csv').send('name,phone,store,products\nI1,0612345678,S,P\nI2,0612345678,S,P\n').expect(200)
    ).body;
    await s.agent.put(`/api/orders/${viaApi.id}`).send({ clientName: 'Amina B.', status: 'confirmed' }).expect(200);
    await s.agent.delete(`/api/orders/${viaData.id}`).expect(204);

    const rows = await deliveriesOf(e.id);
    const messages = await testKnex()('webhook_messages')
      .whereIn(
        'id',
        rows.map((r) => r.message_id),
      )
      .orderBy('created_at');
    const created = messages.filter((m) => m.event_type === 'order.created');
    expect(created.map((m) => m.data.order.client_name).sort()).to.deep.equal(['Amina Benali', 'Data', 'I1', 'I2', 'Page']);
    expect(Object.fromEntries(created.map((m) => [m.data.order.client_name, m.data.order.source]))).to.deep.equal({
      'Amina Benali': 'api',
      Data: 'data_api',
      I1: 'import',
      I2: 'import',
      Page: 'form',
    });
    expect(imported.order_ids).to.have.length(2);
    const body = (m: (typeof messages)[number]) => JSON.parse(messageBody(m));
    const first = body(created.find((m) => m.data.order.id === viaApi.id)!);
    expect(first.type).to.equal('order.created');
    expect(first.data).to.deep.equal({ order: viaApi });
    const updated = body(messages.find((m) => m.event_type === 'order.updated')!);
    expect(updated.data).to.deep.equal({
      order: (await s.agent.get(`/api/orders/${viaApi.id}`).expect(200)).body,
      previous_status: 'pending',
      changed_fields: ['client_name', 'status'],
    });
    const deleted = body(messages.find((m) => m.event_type === 'order.deleted')!);
    expect(deleted.data).to.deep.equal({ order: viaData });
    expect(rows.every((r) => r.status === 'pending')).to.equal(true);
  });

  it('call.ended and the order’s changes from the confirmation loop', async () => {
    const s = await shop();
    await openAllDay(s);
    const e = await endpoint(s, 'http://127.0.0.1:9/loop', { events: ['call.ended', 'order.updated'] });
    const order = (await s.agent.post('/api/orders').send(ORDER).expect(201)).body;
    const claimed = (await s.agent.post('/api/calls/next').expect(200)).body;
    await s.agent.post(`/api/calls/${claimed.call.id}/outcome`).send({ outcome: 'confirmed', notes: 'ok' }).expect(200);
    const messages = await testKnex()('webhook_messages')
      .whereIn(
        'id',
        (await deliveriesOf(e.id)).map((d) => d.message_id),
      )
      .orderBy('created_at');
    const payloads = messages.map((m) => JSON.parse(messageBody(m)));
    expect(payloads.map((p) => p.type)).to.include.members(['order.updated', 'call.ended']);
    const ended = payloads.find((p) => p.type === 'call.ended')!;
    const view = (await s.agent.get(`/api/orders/${order.id}/operations`).expect(200)).body.operations[0];
    expect(ended.data.call).to.deep.equal(view.calls[0]);
    expect(ended.data.order).to.deep.equal((await s.agent.get(`/api/orders/${order.id}`).expect(200)).body);
    const statuses = payloads.filter((p) => p.type === 'order.updated').map((p) => [p.data.previous_status, p.data.order.status]);
    expect(statuses).to.deep.equal([
      ['pending', 'calling'],
      ['calling', 'confirmed'],
    ]);
  });

  it('a change that rolls back records nothing; one that commits records its event; endpoints that did not ask get nothing', async () => {
    const s = await shop();
    const e = await endpoint(s, 'http://127.0.0.1:9/x', { events: ['order.updated'] });
    const other = await endpoint(s, 'http://127.0.0.1:9/y', { events: ['order.deleted'] });
    const order = (await s.agent.post('/api/orders').send(ORDER).expect(201)).body;
    const rollback = new Error('rollback');
    await testKnex()
      .transaction(async (trx) => {
        await trx('orders').where({ id: order.id }).update({ status: 'confirmed' });
        throw rollback;
      })
      .catch((err) => {
        if (err !== rollback) throw err;
      });
    expect(await deliveriesOf(e.id)).to.have.length(0);
    await testKnex()('orders').where({ id: order.id }).update({ status: 'confirmed' });
    expect((await deliveriesOf(e.id)).map((d) => d.event_type)).to.deep.equal(['order.updated']);
    expect(await deliveriesOf(other.id)).to.have.length(0);
  });
});

describe('delivery (webhooks.md: Delivery)', () => {
  it('a signed POST the receiver verifies with standardwebhooks; 2xx is a success in the log', async () => {
    const r = await receiver();
    try {
      const s = await shop();
      const e = await endpoint(s, r.url);
      const order = (await s.agent.post('/api/orders').send(ORDER).expect(201)).body;
      await services().webhooks.drain(e.id, send);
      expect(r.hits).to.have.length(1);
      const hit = r.hits[0];
      expect(hit.headers['content-type']).to.equal('application/json');
      const verified = new Webhook(e.secret).verify(hit.body, {
        'webhook-id': String(hit.headers['webhook-id']),
        'webhook-timestamp': String(hit.headers['webhook-timestamp']),
        'webhook-signature': String(hit.headers['webhook-signature']),
      });
      expect(verified).to.deep.equal({ type: 'order.created', timestamp: hit.json.timestamp, data: { order } });
      const [log] = (await s.agent.get(`/api/webhooks/${e.id}/deliveries`).expect(200)).body.deliveries;
      expect(Object.keys(log)).to.deep.equal([
        'id',
        'message_id',
        'event_type',
        'status',
        'attempts',
        'last_status_code',
        'last_error',
        'next_attempt_at',
        'created_at',
        'delivered_at',
      ]);
      expect(log).to.include({
        message_id: hit.headers['webhook-id'],
        event_type: 'order.created',
        status: 'succeeded',
        attempts: 1,
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
      });
      expect(log.delivered_at).to.be.a('string');
    } finally {
      await r.close();
    }
  });

  it('500, 301 (not followed), a closed connection, a time-out and a 10 MB body are failures, retried on the schedule with the same webhook-id, then failed', async () => {
    const answers: Answer[] = [500, 301, 'reset', 'hang', 'huge', 500, 500, 500];
    const r = await receiver((_hit, n) => answers[n - 1] ?? 500);
    try {
      const s = await shop();
      const e = await endpoint(s, r.url, { events: ['order.created'] });
      await s.agent.post('/api/orders').send(ORDER).expect(201);
      const errors: string[] = [];
      for (let attempt = 1; attempt <= 8; attempt += 1) {
        const before = Date.now();
        await services().webhooks.drain(e.id, send);
        r.release();
        const [row] = await deliveriesOf(e.id);
        expect(row.attempts).to.equal(attempt);
        errors.push(row.last_error);
        expect(row.last_error.length, 'a short text').to.be.at.most(300);
        if (attempt < 8) {
          expect(row.status).to.equal('pending');
          const wait = (new Date(row.next_attempt_at).getTime() - before) / 1000;
          expect(wait).to.be.within(RETRY_DELAYS_SECONDS[attempt - 1] - 1, RETRY_DELAYS_SECONDS[attempt - 1] + 60);
          await makeDue(e.id);
        } else {
          expect(row.status).to.equal('failed');
          expect(row.next_attempt_at).to.equal(null);
        }
      }
      expect(r.hits).to.have.length(8);
      expect(new Set(r.hits.map((h) => h.headers['webhook-id'])).size, 'one webhook-id on every try').to.equal(1);
      expect(
        r.hits.every((h) => h.body === r.hits[0].body),
        'the same body on every try',
      ).to.equal(true);
      expect(errors[0]).to.match(/^HTTP 500/);
      expect(errors[1]).to.match(/redirect 301 not followed/);
      expect(errors[3]).to.match(/timed out/);
      expect(errors[4]).to.match(/^HTTP 500: x{200}$/);
      expect(r.hits.filter((h) => h.json === undefined)).to.have.length(0);
    } finally {
      r.release();
      await r.close();
    }
  });

  it('test event, resend (same webhook-id) and rotate-secret (the old secret stops at once)', async () => {
    const r = await receiver();
    try {
      const s = await shop();
      const e = await endpoint(s, r.url);
      const test = await s.agent.post(`/api/webhooks/${e.id}/test`).expect(202);
      expect(test.body).to.include({ event_type: 'webhook.test', status: 'pending', attempts: 0 });
      await services().webhooks.drain(e.id, send);
      expect(r.hits[0].json).to.deep.include({ type: 'webhook.test', data: {} });
      const rotated = (await s.agent.post(`/api/webhooks/${e.id}/rotate-secret`).expect(200)).body;
      expect(rotated.secret)
        .to.match(/^whsec_/)
        .and.not.equal(e.secret);
      await s.agent.post(`/api/webhooks/${e.id}/deliveries/${test.body.id}/resend`).expect(202);
      await services().webhooks.drain(e.id, send);
      expect(r.hits).to.have.length(2);
      expect(r.hits[1].headers['webhook-id']).to.equal(r.hits[0].headers['webhook-id']);
      const headers = (h: Hit) => ({
        'webhook-id': String(h.headers['webhook-id']),
        'webhook-timestamp': String(h.headers['webhook-timestamp']),
        'webhook-signature': String(h.headers['webhook-signature']),
      });
      expect(() => new Webhook(e.secret).verify(r.hits[1].body, headers(r.hits[1]))).to.throw();
      expect(new Webhook(rotated.secret).verify(r.hits[1].body, headers(r.hits[1]))).to.deep.include({ type: 'webhook.test' });
      const log = (await s.agent.get(`/api/webhooks/${e.id}/deliveries`).expect(200)).body.deliveries;
      expect(log.map((d: { status: string }) => d.status)).to.deep.equal(['succeeded', 'succeeded']);
    } finally {
      await r.close();
    }
  });

  it('an endpoint whose every delivery failed for 5 days is disabled with its reason; enabled again, only new events are sent', async () => {
    const r = await receiver(() => 503);
    try {
      const s = await shop();
      const e = await endpoint(s, r.url, { events: ['order.created', 'order.updated'] });
      const order = (await s.agent.post('/api/orders').send(ORDER).expect(201)).body;
      await services().webhooks.drain(e.id, send);
      const row = await testKnex()('webhook_endpoints').where({ id: e.id }).first();
      expect(row.failing_since).to.be.an.instanceOf(Date);
      await testKnex()('webhook_endpoints')
        .where({ id: e.id })
        .update({ failing_since: testKnex().raw("now() - interval '5 days 1 minute'") });
      await makeDue(e.id);
      await services().webhooks.drain(e.id, send);
      const disabled = (await s.agent.get(`/api/webhooks/${e.id}`).expect(200)).body;
      expect(disabled.enabled).to.equal(false);
      expect(disabled.disabled_reason).to.match(/every delivery has failed since .* \(5 days\)/);
      expect((await deliveriesOf(e.id)).map((d) => d.status)).to.deep.equal(['failed']);
      await s.agent.put(`/api/orders/${order.id}`).send({ status: 'confirmed' }).expect(200);
      expect(await deliveriesOf(e.id), 'nothing recorded for a disabled endpoint').to.have.length(1);
      const page = await s.agent.get(`/webhooks/${e.id}`).expect(200);
      expect(page.text).to.contain('This endpoint is disabled').and.contain('every delivery has failed since');
      await s.agent.put(`/api/webhooks/${e.id}`).send({ enabled: true }).expect(200);
      await s.agent.put(`/api/orders/${order.id}`).send({ status: 'unconfirmed' }).expect(200);
      const after = await deliveriesOf(e.id);
      expect(after.map((d) => [d.event_type, d.status])).to.deep.equal([
        ['order.created', 'failed'],
        ['order.updated', 'pending'],
      ]);
    } finally {
      await r.close();
    }
  });
});

describe('the delivery log (webhooks.md: the last 100)', () => {
  it('shows the last 100 deliveries, newest first; housekeeping deletes older settled ones and keeps pending ones', async () => {
    const s = await shop();
    const e = await endpoint(s, 'http://127.0.0.1:9/log', { events: ['order.created'] });
    await s.agent
      .post('/api/orders/import')
      .type('text/csv')
      .send(['name,phone,store,products', ...Array.from({ length: 105 }, (_, i) => `C${i},0612345678,S,P`)].join('\n'))
      .expect(200);
    const rows = await deliveriesOf(e.id);
    expect(rows).to.have.length(105);
    // Spread in time, the first five settled long ago.
    for (const [i, row] of rows.entries()) {
      await testKnex()('webhook_deliveries')
        .where({ id: row.id })
        .update({ created_at: new Date(Date.UTC(2026, 0, 1, 0, i)), ...(i < 5 ? { status: 'failed', next_attempt_at: null } : {}) });
    }
    const log = (await s.agent.get(`/api/webhooks/${e.id}/deliveries`).expect(200)).body.deliveries;
    expect(log).to.have.length(100);
    expect(log.map((d: { id: string }) => d.id)).to.deep.equal(
      rows
        .slice(5)
        .map((r) => r.id)
        .reverse(),
    );
    await services().webhooks.prune();
    expect(await deliveriesOf(e.id)).to.have.length(100);
    // Pending deliveries are never pruned, however many.
    await testKnex()('webhook_deliveries').where({ endpoint_id: e.id }).update({ status: 'pending' });
    await s.agent.post('/api/orders/import').type('text/csv').send('name,phone,store,products\nX,0612345678,S,P\n').expect(200);
    await services().webhooks.prune();
    expect(await deliveriesOf(e.id)).to.have.length(101);
  });
});

describe('the worker delivers (webhooks.md: Delivery)', function () {
  this.timeout(120_000);

  it('a delivery recorded while no worker runs (the last one killed with -9) is sent once a worker is back', async () => {
    const r = await receiver();
    const first = await startWorkerProcess(testDatabaseUrl());
    first.child.kill('SIGKILL');
    await first.exited;
    let second: Awaited<ReturnType<typeof startWorkerProcess>> | undefined;
    try {
      const s = await shop();
      const e = await endpoint(s, r.url, { events: ['order.created'] });
      const order = (await s.agent.post('/api/orders').send(ORDER).expect(201)).body;
      expect((await deliveriesOf(e.id))[0].status).to.equal('pending');
      second = await startWorkerProcess(testDatabaseUrl());
      await waitFor('the delivery', async () => r.hits.find((h) => (h.json.data.order as { id: string }).id === order.id));
      await waitFor('the log to say so', async () => (await deliveriesOf(e.id))[0].status === 'succeeded');
    } finally {
      second?.child.kill('SIGKILL');
      await r.close();
    }
  });

  it('an endpoint that never answers does not hold up another endpoint’s deliveries, nor the confirmation loop', async () => {
    const dead = await receiver(() => 'hang');
    const alive = await receiver();
    const agent = await agentDouble(() => 202);
    const worker = await startWorkerProcess(testDatabaseUrl(), { DELIVERY_TIMEOUT_SECONDS: '120' });
    try {
      const slow = await shop();
      await endpoint(slow, dead.url, { events: ['order.created'] });
      const fast = await shop();
      await endpoint(fast, alive.url, { events: ['order.created'] });
      // The dead endpoint's first deliveries are in flight (and will stay so until released)...
      await slow.agent
        .post('/api/orders/import')
        .type('text/csv')
        .send(['name,phone,store,products', ...Array.from({ length: 30 }, (_, i) => `D${i},0612345678,S,P`)].join('\n'))
        .expect(200);
      await waitFor('the dead endpoint to be called', async () => dead.hits.length > 0);
      // ...while the live endpoint gets every one of its events.
      await fast.agent
        .post('/api/orders/import')
        .type('text/csv')
        .send(['name,phone,store,products', ...Array.from({ length: 30 }, (_, i) => `A${i},0612345678,S,P`)].join('\n'))
        .expect(200);
      await waitFor('all 30 deliveries to the live endpoint', async () => alive.hits.length >= 30);
      // ...and the confirmation loop goes on: a new order's call reaches its voice agent.
      const voice = await voiceShop(agent.url);
      const order = (await voice.agent.post('/api/orders').send(ORDER).expect(201)).body;
      await waitFor('the call.requested', async () => agent.received.some((r) => r.json?.data?.order?.id === order.id));
      expect(dead.hits.length, 'the dead endpoint is still holding its first batch').to.be.at.most(20);
    } finally {
      worker.child.kill('SIGKILL');
      dead.release();
      await dead.close();
      await alive.close();
      await agent.close();
    }
  });
});

describe('the /webhooks pages', () => {
  it('add (errors beside the fields), see the secret (not cached), send a test, disable, delete', async () => {
    const s = await shop();
    const csrf = await csrfOf(s.agent, '/webhooks');
    const bad = await s.agent.post('/webhooks').type('form').send({ _csrf: csrf, url: 'ftp://x', events: 'order.created' }).expect(400);
    expect(bad.text).to.match(/<p class="error" id="f-url-error">/);
    const none = await s.agent.post('/webhooks').type('form').send({ _csrf: csrf, url: 'http://127.0.0.1:9/p' }).expect(400);
    expect(none.text).to.contain('events must name at least one event type');
    const added = await s.agent
      .post('/webhooks')
      .type('form')
      .send({ _csrf: csrf, url: 'http://127.0.0.1:9/p', events: ['order.created', 'call.ended'] })
      .expect(303);
    const id = added.headers.location.split('/').pop()!;
    const page = await s.agent.get(`/webhooks/${id}`).expect(200);
    const row = opened(await testKnex()('webhook_endpoints').where({ id }).first());
    expect(row.events).to.deep.equal(['order.created', 'call.ended']);
    expect(page.headers['cache-control']).to.equal('no-store');
    expect(page.text).to.contain(row.secret);
    await s.agent.post(`/webhooks/${id}/test`).type('form').send({ _csrf: csrf }).expect(303);
    expect((await deliveriesOf(id)).map((d) => d.event_type)).to.deep.equal(['webhook.test']);
    expect((await s.agent.get(`/webhooks/${id}`).expect(200)).text).to.contain('webhook.test');
    await s.agent.post(`/webhooks/${id}/enabled`).type('form').send({ _csrf: csrf, enabled: 'false' }).expect(303);
    expect((await s.agent.get(`/webhooks/${id}`).expect(200)).text).to.contain('This endpoint is disabled');
    expect((await s.agent.get('/webhooks').expect(200)).text).to.contain('disabled');
    await s.agent.post(`/webhooks/${id}/delete`).type('form').send({ _csrf: csrf }).expect(303);
    expect(await testKnex()('webhook_endpoints').where({ id })).to.have.length(0);
    await s.agent.get(`/webhooks/${id}`).expect(404);
  });
});
