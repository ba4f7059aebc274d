import { startTestDatabase, stopTestDatabase } from './helpers/db';
import { closeTestRedis } from './helpers/redis';

process.env.TZ = 'UTC';

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
