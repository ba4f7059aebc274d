import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config';
import type { EmbeddedDatabase } from '../db/embedded';
import { EmbeddedPostgresError, startEmbeddedPostgres } from '../db/embedded';
import { createKnex } from '../db/knex';
import { migrateLatest } from '../db/migrate';
import { AppError, ValidationError, msg } from '../services/shared';
import { CreditService } from '../services/accounts';

const USAGE = 'Usage: npm run credits -- grant <owner-email> <amount> [--note TEXT]';

class UsageError extends Error {}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: { note: { type: 'string' } } });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
}

/** Operator CLI: grants credits to a workspace owner's ledger. */
async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseCommandLine(argv);
  const [command, email, amountText, ...extra] = positionals;
  if (command !== 'grant' || !email || !amountText || extra.length > 0) throw new UsageError(USAGE);
  if (!/^\d+(\.\d{1,2})?$/.test(amountText)) {
    throw new ValidationError({ amount: msg('creditAmountGot', { given: amountText }) });
  }

  const config = loadConfig();
  let embedded: EmbeddedDatabase | undefined;
  if (!config.databaseUrl) embedded = await startEmbeddedPostgres(path.join(config.dataDir, 'postgres'));
  const knex = createKnex(config.databaseUrl ?? embedded!.url, 1);
  try {
    if (embedded) await migrateLatest(knex, { secretsKey: config.secretsKey });
    const balance = await new CreditService(knex).grant(email, Number(amountText), values.note);
    console.log(`Granted ${amountText} credits to ${email}. Balance: ${balance.credits} (total ${balance.totalCredits}, spent ${balance.totalSpent})`);
  } finally {
    await knex.destroy();
    await embedded?.stop();
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ValidationError) console.error(Object.values(err.fields).join('\n'));
  else if (err instanceof AppError || err instanceof UsageError || err instanceof ConfigError || err instanceof EmbeddedPostgresError)
    console.error(err.message);
  else console.error(err);
  process.exit(1);
});
