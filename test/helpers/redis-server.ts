import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { freePort } from '../../db/embedded';

export interface ThrowawayRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function waitForPort(port: number, open: boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const isOpen = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (isOpen === open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis port ${port} did not become ${open ? 'open' : 'closed'}`);
}

/**
 * A redis-server process of the test's own on a free port, so the test can stop and restart it.
 * Skips the test (fails it under CI=true) when redis-server is not installed.
 */
export async function startThrowawayRedis(ctx: Mocha.Context): Promise<ThrowawayRedis> {
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    if (process.env.CI === 'true') throw new Error('redis-server must be installed when CI=true');
    console.log('      (skipped: redis-server is not installed)');
    ctx.skip();
  }
  const port = await freePort();
  let child: ChildProcess | undefined;
  const instance: ThrowawayRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitForPort(port, true);
    },
    async stop() {
      child?.kill('SIGKILL');
      child = undefined;
      await waitForPort(port, false);
    },
  };
  await instance.start();
  return instance;
}
