import { ConfigError, loadConfig } from '../config';
import { createKnex } from '../db/knex';
import { rotateSecrets, SECRET_COLUMNS, secretsOf } from '../db/secrets-at-rest';
import { Secrets } from '../integrations/secrets';

const USAGE = 'Usage: npm run secrets -- rotate | new-key';

class UsageError extends Error {}

/**
 * Operator CLI for the third-party secrets encrypted at rest (docs/deploy.md, "Rotating SECRETS_KEY"):
 * - `new-key` prints a fresh key for SECRETS_KEY;
 * - `rotate` seals every secret again with SECRETS_KEY, reading those sealed with a key of
 *   SECRETS_OLD_KEYS, and prints what it did per table. Run it again until nothing changed meanwhile.
 */
async function main(argv: string[]): Promise<void> {
  const [command, ...extra] = argv;
  if (extra.length > 0) throw new UsageError(USAGE);
  if (command === 'new-key') {
    console.log(Secrets.newKey());
    return;
  }
  if (command !== 'rotate') throw new UsageError(USAGE);
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError(['DATABASE_URL: required to rotate the secrets']);
  const secrets = secretsOf(config);
  const knex = createKnex(config.databaseUrl, 1);
  try {
    console.log(`Sealing every secret with key ${secrets.keyId} (${config.secretsOldKeys.length} older key(s) read)`);
    const counts = await rotateSecrets(knex, secrets);
    let meanwhile = 0;
    for (const table of Object.keys(SECRET_COLUMNS)) {
      const { resealed, current, changedMeanwhile } = counts[table];
      meanwhile += changedMeanwhile;
      console.log(`${table}: ${resealed} sealed again, ${current} unchanged (sealed with it already, or none), ${changedMeanwhile} changed meanwhile`);
    }
    console.log(meanwhile > 0 ? 'Some rows changed while they were read: run it again.' : 'Done: SECRETS_OLD_KEYS can be removed.');
  } finally {
    await knex.destroy();
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError || err instanceof ConfigError) console.error(err.message);
  else console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
