import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';
import { prettyLogs } from '../../logger';
import { TEST_ENV } from '../helpers/app';
import { testDatabaseUrl } from '../helpers/db';
import { waitFor } from '../helpers/loop';

/** A command in its own process group (npm → sh → tsx → node), its output gathered; `stop` ends the group. */
function run(command: string, args: string[], env: Record<string, string>) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...TEST_ENV, ...env };
  // An empty value means "not set".
  for (const [k, v] of Object.entries(childEnv)) if (v === '') delete childEnv[k];
  const child: ChildProcess = spawn(command, args, { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    output: () => output,
    stop: async () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      await exited;
    },
  };
}

/**
 * The compiled server with its output on a terminal: `script` gives it a pseudo-terminal, as a
 * developer's shell would.
 */
function onTerminal(env: Record<string, string>) {
  const vars = Object.entries({ ...env, PORT: '0', LOG_LEVEL: 'info', WORKER: 'off', DATABASE_URL: testDatabaseUrl() })
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return run('script', ['-qefc', `env -u REDIS_URL ${vars} ${process.execPath} dist/server.js`, '/dev/null'], {});
}

describe('development comfort', function () {
  this.timeout(120_000);

  it('pretty, coloured logs only in development on a terminal; JSON lines otherwise', () => {
    expect(prettyLogs('development', { isTTY: true })).to.equal(true);
    expect(prettyLogs('development', { isTTY: false })).to.equal(false);
    expect(prettyLogs('development', {})).to.equal(false);
    expect(prettyLogs('production', { isTTY: true })).to.equal(false);
    expect(prettyLogs('test', { isTTY: true })).to.equal(false);
  });

  it('on a terminal, the development server logs readable coloured lines; production logs JSON lines there too', async () => {
    const dev = onTerminal({ NODE_ENV: 'development' });
    try {
      await waitFor('the development server to listen', async () => /listening on http:\/\/localhost:\d+/.test(dev.output()));
      const line = dev
        .output()
        .split('\n')
        .find((l) => l.includes('listening on'))!;
      // biome-ignore lint/suspicious/noControlCharactersInRegex: an ANSI colour code starts with ESC.
      expect(line).to.match(/\x1b\[\d+m/); // coloured
      expect(line).to.match(/INFO/);
      expect(line.trim().startsWith('{')).to.equal(false);
    } finally {
      await dev.stop();
    }
    const prod = onTerminal({ ...TEST_ENV, NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://ocs.example' });
    try {
      await waitFor('the production server to listen', async () => prod.output().includes('"msg":"listening on'));
      const line = prod
        .output()
        .split('\n')
        .find((l) => l.includes('listening on'))!;
      expect(JSON.parse(line.trim())).to.include({ level: 30 });
    } finally {
      await prod.stop();
    }
  });

  it('npm run dev restarts the server (and its worker) when a source file changes', async () => {
    const dev = run('npm', ['run', 'dev'], { NODE_ENV: 'development', PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: testDatabaseUrl(), REDIS_URL: '' });
    const pids = () => [...dev.output().matchAll(/"pid":(\d+)[^\n]*"msg":"listening on/g)].map((m) => m[1]);
    try {
      await waitFor('the first start', async () => pids().length >= 1 && dev.output().includes('"msg":"worker started"'));
      const file = path.join(ROOT, 'routes', 'health.ts');
      const now = new Date();
      fs.utimesSync(file, now, now);
      await waitFor('a restart', async () => new Set(pids()).size >= 2, 60_000);
      expect(dev.output()).to.contain('"msg":"worker stopped"');
      expect(dev.output().match(/"msg":"worker started"/g)!.length).to.be.at.least(2);
    } finally {
      await dev.stop();
    }
  });
});
