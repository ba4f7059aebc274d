import { startTestDatabase, stopTestDatabase } from './helpers/db';
import { checkResponsesAgainstDocument } from './helpers/openapi';
import { closeTestRedis } from './helpers/redis';

process.env.TZ = 'UTC';
// Every response a test receives from a documented route is checked against /openapi.json.
checkResponsesAgainstDocument();

/** Mocha root hooks: one migrated database for the whole run. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await startTestDatabase();
  },
  async afterAll() {
    await closeTestRedis();
    await stopTestDatabase();
  },
};
