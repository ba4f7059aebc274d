import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EmbeddedDatabase } from '../../db/embedded';
import { startEmbeddedPostgres } from '../../db/embedded';

export interface ThrowawayPostgres {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and deletes its data. */
  destroy(): Promise<void>;
}

/** A second, embedded Postgres of the test's own, on a fixed port, so it can be stopped and restarted. */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocs-fault-pg-'));
  // Postgres runs as its own OS user and must be able to reach its data directory.
  fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'data');
  let db: EmbeddedDatabase | undefined = await startEmbeddedPostgres(dataDir, 'app');
  const port = Number(new URL(db.url).port);
  return {
    url: db.url,
    async stop() {
      await db?.stop();
      db = undefined;
    },
    async start() {
      db = await startEmbeddedPostgres(dataDir, 'app', port);
    },
    async destroy() {
      await db?.stop();
      db = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
