import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TEST_ENV } from '../helpers/app';
import { testDatabaseUrl } from '../helpers/db';
import { waitFor } from '../helpers/loop';
import { connectionRefused, startServer } from '../helpers/process';

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('the server process', function () {
  this.timeout(90_000);

  it('SIGTERM lets an in-flight request finish, refuses new connections, and exits 0', async () => {
    const server = await startServer({ ...TEST_ENV, NODE_ENV: 'development', DATABASE_URL: testDatabaseUrl() });
    // A slow client: the request is in flight until the last byte of its body arrives.
    const body = 'email=slow%40example.test&password=wrong-password';
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (c) => (response += c));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      `POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));

    const refused = await connectionRefused(server.port);
    expect(refused, 'new connections are refused while draining').to.equal(true);
    expect(server.child.exitCode, 'still running while a request is in flight').to.equal(null);

    socket.write(body.slice(10));
    await closed;
    // No CSRF token, so the form is refused — but it is answered, completely.
    expect(response).to.match(/^HTTP\/1\.1 403 /);
    expect(await server.exited).to.equal(0);
    expect(server.output()).to.contain('"msg":"stopped"');
  });

  it('boots on the embedded Postgres when DATABASE_URL is unset, applies migrations, and serves', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocs-embedded-'));
    // Postgres runs as its own user and must be able to reach its data directory.
    fs.chmodSync(dataDir, 0o755);
    try {
      const server = await startServer({
        DATA_DIR: dataDir,
        DATABASE_URL: undefined,
        REDIS_URL: undefined,
        NODE_ENV: 'development',
        SESSION_SECRET: undefined,
        JWT_SECRET: undefined,
      });
      try {
        expect(server.output()).to.contain('using the embedded Postgres');
        expect(server.output()).to.contain('20261122_01_accounts');
        expect(await get(`${server.url}/healthz`)).to.deep.equal({ status: 200, body: '{"status":"ok"}' });
        expect((await get(`${server.url}/signup`)).status).to.equal(200);
        expect(fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).to.equal(true);
        // Development secrets were generated once into the data directory.
        const secrets = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
        expect(secrets.SESSION_SECRET).to.have.length.greaterThan(31);
        expect(server.output().match(/REDIS_URL is not set/g), 'said once').to.have.length(1);

        // Structured request logs carry the request id, and never the credentials.
        const id = await new Promise<string>((resolve, reject) => {
          http
            .get(
              `${server.url}/login`,
              { agent: false, headers: { 'X-Request-Id': 'trace-42', Cookie: 'ocs.sid=secret-cookie', Authorization: 'Bearer sk_live_secret' } },
              (res) => {
                res.resume();
                res.on('end', () => resolve(String(res.headers['x-request-id'])));
              },
            )
            .on('error', reject);
        });
        expect(id).to.equal('trace-42');
        const line = await waitFor("the request's log line", async () =>
          server
            .output()
            .split('\n')
            .find((l) => l.includes('"trace-42"')),
        );
        const entry = JSON.parse(line);
        expect(entry).to.deep.include({ msg: 'request completed', req: { id: 'trace-42', method: 'GET', url: '/login' }, res: { statusCode: 200 } });
        expect(server.output()).not.to.contain('secret-cookie').and.not.to.contain('sk_live_secret');
      } finally {
        server.child.kill('SIGTERM');
        expect(await server.exited).to.equal(0);
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start in production without its required variables, naming them', async () => {
    const err = await startServer({ NODE_ENV: 'production', DATABASE_URL: undefined, SESSION_SECRET: undefined, JWT_SECRET: undefined }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.contain('exited with 1');
    expect(err?.message).to.contain('DATABASE_URL: required when NODE_ENV=production');
    expect(err?.message).to.contain('SESSION_SECRET: required when NODE_ENV=production');
    expect(err?.message).to.contain('JWT_SECRET: required when NODE_ENV=production');
  });
});
