import fs from 'node:fs';
import net from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { signUp, TEST_ENV } from '../helpers/app';
import { testDatabaseUrl } from '../helpers/db';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';
import { waitFor } from '../helpers/loop';

/**
 * Issue 37, item 3: a stranger cannot make the web process hold a megabyte per open connection.
 * A body at /hooks is read only for a known connection or call, within a time limit, and only a
 * bounded number at once from one client address.
 */

/** The web process's resident memory, in MB, as the kernel counts it. */
function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

interface Stalled {
  socket: net.Socket;
  closed: Promise<void>;
  isClosed: () => boolean;
  answer: () => string;
}

/** Declares a body of `declared` bytes, sends `sent` of them, and stalls. */
function stalledUpload(port: number, path: string, declared: number, sent: number): Promise<Stalled> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    let isClosed = false;
    const closed = new Promise<void>((done) =>
      socket.once('close', () => {
        isClosed = true;
        done();
      }),
    );
    socket.once('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
      socket.write(Buffer.alloc(sent, 0x20), () => resolve({ socket, closed, isClosed: () => isClosed, answer: () => answer }));
    });
    socket.once('error', reject);
  });
}

describe('/hooks bodies: read only for a known connection or call, bounded per address and in time (issue 37, item 3)', function () {
  this.timeout(180_000);
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      ...TEST_ENV,
      DATABASE_URL: testDatabaseUrl(),
      REDIS_URL: process.env.REDIS_URL,
      HOOKS_BODY_TIMEOUT_SECONDS: '5',
    });
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('200 stalled 1 MB uploads from one address to a real connection: the web process stays within +100 MB, answers /healthz, and closes the stalled sockets', async () => {
    const shop = await signUp({ target: server.url });
    const store = (await shop.agent.post('/api/stores').send({ kind: 'shopify', name: 'Atlas', shop: 'atlas.myshopify.com', secret: 'shpss_x' }).expect(201))
      .body;
    await request(server.url).get('/healthz').expect(200);
    const pid = server.child.pid!;
    const before = rssMb(pid);

    const uploads: Stalled[] = [];
    const started = Date.now();
    for (let i = 0; i < 200; i += 1) uploads.push(await stalledUpload(server.port, `/hooks/stores/${store.id}`, 1_000_000, 999_000));
    const settingUpMs = Date.now() - started;
    let peak = rssMb(pid);
    // The process is asked for its health while every upload stalls; its memory is read meanwhile.
    for (let i = 0; i < 5; i += 1) {
      const health = await request(server.url).get('/healthz').timeout(5000);
      expect(health.status).to.equal(200);
      peak = Math.max(peak, rssMb(pid));
    }
    expect(peak - before, `RSS ${before.toFixed(0)} → ${peak.toFixed(0)} MB`).to.be.below(100);

    // Those beyond the per-address bound were refused unread; the rest are closed at the time limit.
    await waitFor('every stalled upload closed by the server', async () => uploads.every((u) => u.isClosed()), 60_000);
    const statuses = uploads.map((u) => /^HTTP\/1\.1 (\d{3})/.exec(u.answer())?.[1]);
    // At most HOOKS_BODIES_PER_IP (32) bodies are read at once, and a slot is given back only at the time
    // limit (5 s), answered 408: while the 200 uploads were being opened, each slot served one upload per
    // 5 s begun. The others were refused unread: 429, or a reset before the client read the answer (it
    // was still writing its megabyte).
    const readAtMost = 32 * (Math.floor(settingUpMs / 5000) + 1);
    const read = statuses.filter((s) => s === '408').length;
    expect(read, `opened in ${settingUpMs} ms`).to.be.within(1, readAtMost);
    expect(statuses.filter((s) => s !== '408').every((s) => s === '429' || s === undefined)).to.equal(true);
    await request(server.url).get('/healthz').expect(200);
  });

  it('an unknown connection or call, or an id that is no UUID: 404 before the body is read, and the socket is closed', async () => {
    for (const path of [
      '/hooks/stores/not-a-connection-1',
      '/hooks/stores/00000000-0000-4000-8000-000000000000',
      '/hooks/calls/00000000-0000-4000-8000-000000000000',
      '/hooks/calls/x',
    ]) {
      const upload = await stalledUpload(server.port, path, 1_000_000, 10_000);
      await upload.closed;
      expect(upload.answer(), path).to.match(/^HTTP\/1\.1 404 /);
      expect(upload.answer(), path).to.contain('"error":"not_found"');
    }
  });

  it('a route under /hooks without a connection or call id reads at most 64 kB: a larger declared body is 413 unread, an unknown length 411', async () => {
    const big = await stalledUpload(server.port, '/hooks/shopify/customers-redact', 65 * 1024, 10);
    await big.closed;
    expect(big.answer()).to.match(/^HTTP\/1\.1 413 /);
    const chunked = await new Promise<string>((resolve) => {
      const socket = net.connect(server.port, '127.0.0.1', () => {
        socket.write('POST /hooks/woocommerce/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
      });
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('close', () => resolve(answer));
    });
    expect(chunked).to.match(/^HTTP\/1\.1 411 /);
    // Within the bound: the route answers as it would (here, no such route).
    await request(server.url).post('/hooks/shopify/customers-redact').send({ shop_domain: 'atlas.myshopify.com' }).expect(404);
  });
});
