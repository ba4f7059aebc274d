import { ConfigError, loadConfig } from '../config';
import { createKnex } from '../db/knex';
import { migrateLatest } from '../db/migrate';
import { prepareJobs } from '../db/jobs';

/** `npm run migrate` (the Procfile's release step): applies pending migrations to DATABASE_URL. */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError(['DATABASE_URL: required to run migrations']);
  const knex = createKnex(config.databaseUrl, 1);
  try {
    const applied = await migrateLatest(knex);
    console.log(applied.length > 0 ? `Applied: ${applied.join(', ')}` : 'Already up to date');
    // The job engine's schema and our queues, so that web and worker dynos find them ready.
    await prepareJobs(config.databaseUrl);
    console.log('Job queues ready');
  } finally {
    await knex.destroy();
  }
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
