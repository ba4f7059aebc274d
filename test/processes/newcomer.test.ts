import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../config';
import { ROOT_RUNTIME_DIR } from '../../db/embedded';
import type { RunningServer } from '../helpers/process';
import { runScript, startServer } from '../helpers/process';

/**
 * The README's `npm start` as newcomers run it, with nothing configured: a normal user in their home
 * directory, and root with the checkout in a private (0700) directory. Real processes, real Postgres.
 */

const isRoot = process.getuid?.() === 0;
const NOTHING_SET = {
  DATABASE_URL: undefined,
  REDIS_URL: undefined,
  DATA_DIR: undefined,
  SESSION_SECRET: undefined,
  JWT_SECRET: undefined,
  NODE_ENV: 'development',
  PUBLIC_BASE_URL: undefined,
};

function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

/** A checkout of the built app at `dir`: node_modules hard-linked (same files, new path), the rest copied. */
function checkoutAt(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules')]);
  for (const entry of ['dist', 'views', 'public', 'locales', 'package.json']) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
}

/** The pids of running Postgres servers whose data directory is `dataDir`. */
function postgresPids(dataDir: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return args[0].endsWith('/bin/postgres') && args.includes(dataDir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The data directory the server logged for its embedded Postgres. */
function loggedDataDir(server: RunningServer): string {
  const line = server
    .output()
    .split('\n')
    .find((l) => l.includes('using the embedded Postgres'));
  expect(line, 'the log says where the embedded data lives').to.be.a('string');
  return JSON.parse(line!).dataDir as string;
}

async function serveThenStop(server: RunningServer, dataDir: string): Promise<void> {
  expect(await status(`${server.url}/healthz`)).to.equal(200);
  expect(await status(`${server.url}/login`)).to.equal(200);
  // A freshly forked backend shows the postmaster's command line until it renames itself: count ≥ 1.
  expect(postgresPids(dataDir), 'the embedded Postgres runs').to.have.length.at.least(1);
  server.child.kill('SIGTERM');
  expect(await server.exited).to.equal(0);
  expect(postgresPids(dataDir), 'the embedded Postgres stopped with the server').to.deep.equal([]);
}

describe('npm start for a newcomer, with nothing configured', function () {
  this.timeout(180_000);

  it('as a normal user, with the checkout in their home directory', async function () {
    if (!isRoot) {
      if (process.env.CI === 'true') throw new Error('CI must run as root to create the test user');
      // The test creates a fresh user with useradd, which only root may do.
      this.skip();
    }
    const user = `ocs${crypto.randomBytes(4).toString('hex')}`;
    execFileSync('useradd', ['--create-home', '--shell', '/bin/sh', user]);
    try {
      const home = execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).split(':')[5];
      fs.chmodSync(home, 0o700);
      const app = path.join(home, 'app');
      checkoutAt(app);
      const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }));
      const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }));
      // Everything but the shared hard links belongs to the user, as after their own clone.
      execFileSync('chown', ['-R', `${uid}:${gid}`, path.join(app, 'dist'), path.join(app, 'views'), path.join(app, 'public'), path.join(app, 'package.json')]);
      fs.chownSync(app, uid, gid);

      const server = await startServer({ ...NOTHING_SET, HOME: home, USER: user }, { root: app, user: { uid, gid }, timeoutMs: 120_000 });
      const dataDir = loggedDataDir(server);
      expect(dataDir).to.equal(path.join(app, '.data', 'postgres'));
      expect(fs.statSync(path.join(dataDir, 'PG_VERSION')).uid, 'the cluster belongs to the user').to.equal(uid);
      await serveThenStop(server, dataDir);
    } finally {
      spawnSync('pkill', ['-KILL', '-u', user]);
      spawnSync('userdel', ['--remove', user]);
    }
  });

  it('as root, with the checkout in a private (0700) directory', async function () {
    if (!isRoot) {
      if (process.env.CI === 'true') throw new Error('CI runs as root; this test needs root');
      // Only root runs the embedded Postgres as another user (postgres), which is what this proves.
      this.skip();
    }
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ocs-private-'));
    expect(fs.statSync(base).mode & 0o777).to.equal(0o700);
    const app = path.join(base, 'app');
    let dataDir: string | undefined;
    try {
      checkoutAt(app);
      // Start from a machine that has never copied the binaries, so the copy is part of what is proven.
      for (const entry of fs.existsSync(ROOT_RUNTIME_DIR) ? fs.readdirSync(ROOT_RUNTIME_DIR) : []) {
        if (entry.startsWith('postgres-')) fs.rmSync(path.join(ROOT_RUNTIME_DIR, entry), { recursive: true, force: true });
      }
      const server = await startServer(NOTHING_SET, { root: app, timeoutMs: 120_000 });
      dataDir = loggedDataDir(server);
      expect(dataDir.startsWith(`${ROOT_RUNTIME_DIR}/clusters/`), 'kept where the postgres user can reach it').to.equal(true);
      expect(server.output()).not.to.match(/EACCES|Error:/);
      const copies = fs.readdirSync(ROOT_RUNTIME_DIR).filter((e) => e.startsWith('postgres-'));
      expect(copies, 'the binaries were copied where the postgres user can run them').to.have.length(1);
      await serveThenStop(server, dataDir);

      // The data outlives the process: a second start finds the same cluster and the applied migrations.
      const again = await startServer(NOTHING_SET, { root: app, timeoutMs: 120_000 });
      expect(loggedDataDir(again)).to.equal(dataDir);
      expect(again.output()).not.to.contain('migrations applied');
      await serveThenStop(again, dataDir);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a port that is taken ends with one clear paragraph and exit code 1, and stops the embedded Postgres', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, resolve));
    const { port } = blocker.address() as net.AddressInfo;
    const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ocs-port-'));
    fs.chmodSync(dataRoot, 0o755);
    try {
      const result = await runScript('server.js', [], { ...NOTHING_SET, DATA_DIR: dataRoot, PORT: String(port) });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain(`port ${port} is already in use`);
      expect(result.stderr).to.contain('PORT=3001 npm start');
      expect(result.stderr).not.to.match(/\n\s+at /);
      expect(postgresPids(path.join(dataRoot, 'postgres'))).to.deep.equal([]);
    } finally {
      blocker.close();
      fs.rmSync(dataRoot, { recursive: true, force: true });
    }
  });

  it('a data directory that cannot be created ends with one clear paragraph and exit code 1', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ocs-notdir-')), 'a-file');
    fs.writeFileSync(file, 'not a directory');
    try {
      // DATA_DIR is a file: neither the secrets nor the cluster can be written under it (the secrets are given).
      const result = await runScript('server.js', [], {
        ...NOTHING_SET,
        DATA_DIR: path.join(file, 'data'),
        SESSION_SECRET: 'x'.repeat(32),
        JWT_SECRET: 'y'.repeat(32),
        SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain('The embedded Postgres could not start');
      expect(result.stderr).to.contain('set DATABASE_URL=');
      expect(result.stderr).not.to.match(/\n\s+at /);
      expect(result.stderr).not.to.contain("Unhandled 'error' event");
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });
});
