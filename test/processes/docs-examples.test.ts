import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';
import { TEST_ENV } from '../helpers/app';
import { testDatabaseUrl } from '../helpers/db';
import { documentedFiles, sequences, unmarkedBlocks } from '../helpers/doc-examples';
import type { DocSequence } from '../helpers/doc-examples';
import type { RunningServer } from '../helpers/process';
import { startServer } from '../helpers/process';

const SEQUENCE_TIMEOUT_MS = 60_000;

/**
 * Every curl of a sequence fails the sequence on a status of 400 or more (`--fail-with-body`
 * keeps the error body in the output); `set -e` makes any failing command end it.
 */
const PRELUDE = `set -euo pipefail
curl() { command curl --fail-with-body --silent --show-error "$@"; }
`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The docs say localhost:3000 (the service) and localhost:4000 (an agent or a receiver). */
function localise(text: string, serviceUrl: string, sidePort: number): string {
  return text.replaceAll('http://localhost:3000', serviceUrl).replaceAll('localhost:4000', `127.0.0.1:${sidePort}`).replaceAll('PORT=4000', `PORT=${sidePort}`);
}

/** Runs a sequence in a scratch directory that sees the checkout's dist/, examples/ and node_modules/. */
async function run(sequence: DocSequence, serviceUrl: string): Promise<{ code: number | null; output: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ocs-docs-${sequence.name}-`));
  for (const entry of ['dist', 'examples', 'node_modules', 'package.json']) fs.symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  const sidePort = await freePort();
  for (const [name, content] of Object.entries(sequence.files)) fs.writeFileSync(path.join(dir, name), localise(content, serviceUrl, sidePort));
  fs.writeFileSync(path.join(dir, 'sequence.sh'), PRELUDE + localise(sequence.script, serviceUrl, sidePort));

  const child = spawn('bash', ['sequence.sh'], {
    cwd: dir,
    detached: true, // its own process group: whatever it leaves in the background is stopped with it
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DATABASE_URL: testDatabaseUrl(), SESSION_SECRET: TEST_ENV.SESSION_SECRET, JWT_SECRET: TEST_ENV.JWT_SECRET, NODE_ENV: 'development' },
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const timer = setTimeout(() => {
    output += `\n(stopped after ${SEQUENCE_TIMEOUT_MS / 1000} s)`;
    process.kill(-child.pid!, 'SIGKILL');
  }, SEQUENCE_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // the group has already gone
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { code, output };
}

describe('the documented examples run as written', function () {
  this.timeout(SEQUENCE_TIMEOUT_MS + 30_000);
  const all = documentedFiles().flatMap((file) => sequences(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));
  let server: RunningServer | undefined;

  before(async function () {
    this.timeout(90_000);
    for (const tool of ['curl', 'jq', 'openssl']) {
      expect(spawnSync('sh', ['-c', `command -v ${tool}`]).status, `${tool} is installed`).to.equal(0);
    }
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // As `npm start` runs in development: the worker inside the web process.
    server = await startServer({
      ...TEST_ENV,
      NODE_ENV: 'development',
      WORKER: 'on',
      PORT: String(port),
      PUBLIC_BASE_URL: url,
      DATABASE_URL: testDatabaseUrl(),
    });
    server.url = url;
  });

  after(async () => {
    if (!server) return;
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('every shell or code block is in a sequence or marked notest', () => {
    const unmarked = documentedFiles().flatMap((file) => unmarkedBlocks(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));
    expect(unmarked, 'mark each block test=<sequence> (with file=<name> for a file to save) or notest').to.deep.equal([]);
  });

  it('the docs hold the sequences a newcomer follows', () => {
    expect(all.map((s) => `${s.file}#${s.name}`)).to.include.members([
      'docs/api.md#api-tour',
      'docs/api.md#data-api',
      'docs/voice-agents.md#voice-agent',
      'docs/voice-agents.md#reference-agent',
      'docs/stores.md#stores',
      'docs/webhooks.md#webhooks',
    ]);
  });

  for (const sequence of all) {
    it(`${sequence.file}: ${sequence.name}`, async () => {
      const { code, output } = await run(sequence, server!.url);
      const log = server!.output().split('\n').slice(-15).join('\n');
      expect(code, `the sequence failed:\n${output}\n--- the service's last lines:\n${log}`).to.equal(0);
    });
  }
});
