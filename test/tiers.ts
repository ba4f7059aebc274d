/**
 * `npm test`'s run, after lint and build: the browser tier (one Chromium at a time, serially)
 * beside the parallel run of every other tier, since neither alone keeps the two cores busy
 * (Chromium waits on the server, the parallel files on Postgres and on the processes they start).
 * The parallel run reports as it goes; the browser tier's report is kept and printed after it, so
 * the output reads as two whole reports. Without DATABASE_URL one embedded Postgres serves both.
 * Exits non-zero when either run fails.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../config';
import { startEmbeddedPostgres } from '../db/embedded';

const MOCHA = path.join(ROOT, 'node_modules', '.bin', 'mocha');

/** The slowest files first, so that no long file starts last and runs alone at the end. */
const PARALLEL = [
  '--parallel',
  'dist/test/{shared,processes,volume}/**/*.test.js',
  'dist/test/!(browser|shared|processes|volume|helpers|fixtures)/**/*.test.js',
];
const BROWSER = ['dist/test/browser/**/*.test.js'];

function run(args: string[], env: NodeJS.ProcessEnv, output: 'inherit' | 'pipe'): { child: ChildProcess; done: Promise<number>; text: () => string } {
  const child = spawn(MOCHA, args, { cwd: ROOT, env, stdio: ['ignore', output, output] });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const done = new Promise<number>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  return { child, done, text: () => text };
}

async function main(): Promise<number> {
  const env = { ...process.env };
  const embedded = env.DATABASE_URL ? undefined : await startEmbeddedPostgres(path.join(ROOT, '.data', 'test-postgres'), 'test');
  if (embedded) env.DATABASE_URL = embedded.url;
  try {
    console.log('The browser tier (test/browser/) runs beside the others; its report follows theirs.\n');
    const browser = run(BROWSER, env, 'pipe');
    const rest = run(PARALLEL, env, 'inherit');
    const stop = () => {
      browser.child.kill('SIGTERM');
      rest.child.kill('SIGTERM');
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const started = Date.now();
    const seconds = (done: Promise<number>) => done.then(() => Math.round((Date.now() - started) / 1000));
    const [restSeconds, browserSeconds] = [seconds(rest.done), seconds(browser.done)];
    const [restCode, browserCode] = [await rest.done, await browser.done];
    console.log('\nThe browser tier (test/browser/):');
    process.stdout.write(browser.text());
    // Which of the two ran longest: the one to shorten when the suite is slow.
    console.log(`\nThe parallel tiers took ${await restSeconds} s, the browser tier ${await browserSeconds} s.`);
    return restCode === 0 && browserCode === 0 ? 0 : 1;
  } finally {
    await embedded?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
