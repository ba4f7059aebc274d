import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from '../../config';
import { TEST_ENV } from './app';

export interface RunningServer {
  child: ChildProcess;
  url: string;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

export interface StartOptions {
  timeoutMs?: number;
  /** The checkout to run (default: this one). */
  root?: string;
  /** Run as this user (only when we are root). */
  user?: { uid: number; gid: number };
}

/** Starts the compiled server as its own process (PORT=0) and resolves once it logs its URL. */
export function startServer(env: Record<string, string | undefined>, options: StartOptions = {}): Promise<RunningServer> {
  const { timeoutMs = 60_000, root = ROOT, user } = options;
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: '0', ...env, LOG_LEVEL: 'info' };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, [path.join(root, 'dist', 'server.js')], { env: childEnv, cwd: root, stdio: ['ignore', 'pipe', 'pipe'], ...user });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/localhost:(\d+))"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1], port: Number(match[2]), output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
}

/** Runs a compiled script to completion and returns its exit code and output. */
export function runScript(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', script), ...args], {
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** True when nothing accepts a TCP connection on the loopback port. */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(port, '127.0.0.1');
    probe.once('error', () => resolve(true));
    probe.once('connect', () => {
      probe.destroy();
      resolve(false);
    });
  });
}

export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `node dist/worker.js` as the Procfile runs it; resolves once it says it started. */
export function startWorkerProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'worker.js')], {
    env: { ...process.env, ...TEST_ENV, LOG_LEVEL: 'info', DATABASE_URL: databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('"msg":"worker started"')) resolve({ child, output: () => output, exited });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`worker exited with ${code}:\n${output}`)));
  });
}
