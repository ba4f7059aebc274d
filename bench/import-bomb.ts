import type { Knex } from 'knex';
import { IMPORT_MAX_BYTES } from '../services/orders';
import type { Cleanup } from './infra';
import { stopProcess } from './infra';
import { MemorySampler } from './meters';
import { signUp } from './seed';
import type { ServiceProcess } from './sides';
import { startService } from './sides';

const BEHIND_ROUTER = { 'x-forwarded-proto': 'https' };
const HEADER = 'client_name,phone,store_name,products_name\n';
/** What the server may take over its RSS before the file. */
const IMPORT_BOMB_RSS_TARGET_MB = 100;

export interface ImportBombFigures {
  bytes: number;
  /** The answer's status and code; status 0 when the server answered nothing (it died). */
  status: number;
  answer: string;
  seconds: number;
  rssBeforeMb: number;
  /** The server's RSS high-water mark (VmHWM) once answered: it started afresh, so this is the file's. */
  peakRssMb: number;
  /** GET /healthz answered, one after another, while the import ran. */
  health: number;
}

/**
 * Issue 28's file: a header and 10 MB of one-character lines (five million rows), posted to
 * POST /api/orders/import of a service started afresh for it (production settings, the Procfile's
 * flags): the time to its answer, and the server's peak RSS against its RSS just before.
 */
export async function importBombBench(options: {
  knex: Knex;
  where: { databaseUrl: string; redisUrl: string; cleanup: Cleanup };
  secrets: ServiceProcess['secrets'];
  logFile: string;
  env: NodeJS.ProcessEnv;
  log: (message: string) => void;
}): Promise<ImportBombFigures> {
  const service = await startService({ ...options.where, logFile: options.logFile, secrets: options.secrets }, options.env);
  try {
    const account = await signUp(service.url, options.knex, `import-bomb-${Date.now()}@bench.invalid`, 'Import bomb');
    const file = Buffer.from(HEADER + 'a\n'.repeat(Math.floor((IMPORT_MAX_BYTES - HEADER.length) / 2)));
    const memory = new MemorySampler(service.child.pid!);
    const rssBeforeMb = memory.now();
    options.log(`import bomb: ${(file.length / 2 ** 20).toFixed(1)} MB of one-character lines to a fresh service (RSS ${rssBeforeMb.toFixed(0)} MB)`);
    let done = false;
    let health = 0;
    const probing = (async () => {
      while (!done) {
        const res = await fetch(`${service.url}/healthz`).catch(() => undefined);
        if (!done && res?.status === 200) health += 1;
        await res?.arrayBuffer();
      }
    })();
    const t0 = performance.now();
    const { status, answer } = await fetch(`${service.url}/api/orders/import`, {
      method: 'POST',
      headers: { ...BEHIND_ROUTER, cookie: account.cookie, 'content-type': 'text/csv' },
      body: file,
    })
      .then(async (res) => ({ status: res.status, answer: ((await res.json()) as { code?: string }).code ?? '' }))
      .catch((err: Error) => ({ status: 0, answer: `no answer: ${err.message}` }))
      .finally(() => (done = true));
    const seconds = (performance.now() - t0) / 1000;
    await probing;
    const peakRssMb = memory.stop();
    options.log(
      `import bomb: ${status} ${answer} in ${seconds.toFixed(2)} s, peak RSS ${peakRssMb.toFixed(0)} MB, /healthz answered ${health} times meanwhile`,
    );
    return { bytes: file.length, status, answer, seconds, rssBeforeMb, peakRssMb, health };
  } finally {
    await stopProcess(service.child);
  }
}

export function importBombSection(b: ImportBombFigures): string[] {
  const ok = b.status === 413 && b.peakRssMb - b.rssBeforeMb <= IMPORT_BOMB_RSS_TARGET_MB;
  return [
    '## Import of a 10 MB file of one-character lines',
    '',
    `\`POST /api/orders/import\` with a header and ${Math.floor((b.bytes - HEADER.length) / 2).toLocaleString('en-US')} one-character lines (${(b.bytes / 2 ** 20).toFixed(1)} MB), to a service started afresh for it (production settings, the Procfile's flags).`,
    '',
    '| Answer | Time | Server RSS before | Server peak RSS (VmHWM) | GET /healthz answered meanwhile | Target: 413, peak ≤ before + 100 MB |',
    '|---|---:|---:|---:|---:|---|',
    `| ${b.status === 0 ? b.answer : `${b.status} ${b.answer}`} | ${b.seconds.toFixed(2)} s | ${b.rssBeforeMb.toFixed(0)} MB | ${b.peakRssMb.toFixed(0)} MB | ${b.health} | ${ok ? 'met' : '**missed**'} |`,
    '',
  ];
}
