import { prepareTestDatabases, refreshTestDatabase, releaseTestDatabases, startTestDatabase, stopTestDatabase } from './helpers/db';
import { checkResponsesAgainstDocument } from './helpers/openapi';
import { closeTestRedis } from './helpers/redis';

process.env.TZ = 'UTC';
// Every response a test receives from a documented route is checked against /openapi.json.
checkResponsesAgainstDocument();

const inWorker = process.env.MOCHA_WORKER_ID !== undefined;

/** Mocha's global fixtures, in the main process: the database server, and the workers' template when run in parallel. */
export async function mochaGlobalSetup(): Promise<void> {
  await prepareTestDatabases(process.argv.includes('--parallel'));
}

export async function mochaGlobalTeardown(): Promise<void> {
  await releaseTestDatabases();
}

/**
 * Mocha root hooks. A serial run: one migrated database for the whole run. A parallel run calls
 * them once per file in each worker: the worker opens its own database at its first file and keeps it.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await startTestDatabase();
    if (inWorker) await refreshTestDatabase();
  },
  async afterAll() {
    if (inWorker) return;
    await closeTestRedis();
    await stopTestDatabase();
  },
};
