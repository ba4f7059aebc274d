import { ConfigError, loadConfig } from '../config';
import knexFactory from 'knex';
import { migrateLatest } from '../db/migrate';
import { prepareJobs } from '../db/jobs';
import knexfile from '../knexfile';

/** `npm run migrate` (the Procfile's release step): applies pending migrations to DATABASE_URL. */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError(['DATABASE_URL: required to run migrations']);
  // The knexfile's configuration, as `npx knex migrate:latest` uses it.
  const knex = knexFactory({ ...knexfile, connection: { connectionString: config.databaseUrl, statement_timeout: 0 } });
  try {
    const applied = await migrateLatest(knex, { secretsKey: config.secretsKey });
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
