import type { Knex } from 'knex';
import { Secrets } from '../integrations/secrets';

/**
 * Every third-party secret the service must read back, sealed with SECRETS_KEY (DESIGN, "Privacy";
 * integrations/secrets.ts): each domain seals these on write and opens them on read, and
 * `npm run secrets -- rotate` seals them again with the current key. Secrets the service only
 * verifies (API keys, passwords, invitation tokens, OAuth state nonces) are hashed instead, and are
 * not here.
 *
 * - `store_connections.secret`: the key a store signs its messages with (verified on every message);
 *   `write_back` (jsonb): the store's API credentials, each field sealed on its own (Shopify's access
 *   and refresh tokens, WooCommerce's consumer key and secret), their expiries in clear.
 * - `agents.secret`: a voice agent's signing secret (call.requested is signed with it, its reports
 *   verified).
 * - `whatsapp_agents`: the Cloud API access token, the Meta app's secret (its webhook's signatures)
 *   and the webhook's verify token.
 * - `webhook_endpoints.secret`, `carrier_connections.secret`: Standard Webhooks signing secrets.
 * - `carrier_accounts.credentials`: a carrier account's credentials (a JSON object, sealed whole);
 *   `hook_token`: the random token of its push URL.
 */
export interface SecretTable {
  /** The column naming a row (its primary key). */
  key: string;
  /** Text columns each holding one sealed value (or null). */
  text: readonly string[];
  /** jsonb columns holding an object, and the fields of it that are sealed. */
  json?: Readonly<Record<string, readonly string[]>>;
}

/** The fields of `store_connections.write_back` that are sealed. */
export const WRITE_BACK_SECRETS = ['access_token', 'refresh_token', 'consumer_key', 'consumer_secret'] as const;

export const SECRET_COLUMNS: Readonly<Record<string, SecretTable>> = Object.freeze({
  store_connections: { key: 'id', text: ['secret'], json: { write_back: WRITE_BACK_SECRETS } },
  agents: { key: 'id', text: ['secret'] },
  whatsapp_agents: { key: 'agent_id', text: ['access_token', 'app_secret', 'verify_token'] },
  webhook_endpoints: { key: 'id', text: ['secret'] },
  carrier_connections: { key: 'id', text: ['secret'] },
  carrier_accounts: { key: 'id', text: ['credentials', 'hook_token'] },
});

/** What a rotation did to one table: rows sealed again (or sealed for the first time), rows already sealed with the current key, rows changed meanwhile (left for another run). */
export interface RotationCount {
  resealed: number;
  current: number;
  changedMeanwhile: number;
}

/** A stored value resealed with the current key; null when it needs nothing (null, or sealed with it already). */
function resealed(secrets: Secrets, value: unknown): string | null {
  return typeof value === 'string' ? secrets.reseal(value) : null;
}

/**
 * Every sealed value of every secret column sealed again with the current key (`secrets.keyId`),
 * read with whichever key sealed it (the current one or an older one, SECRETS_OLD_KEYS); a plain
 * value stored before encryption is sealed too. In batches of `batchSize` rows, each batch one short
 * transaction; a row is written only when one of its values changed, and only while it still holds
 * what was read (a connection whose tokens a worker refreshed meanwhile keeps its new ones: the next
 * run sees them). Idempotent: a second run reseals nothing.
 */
export async function rotateSecrets(knex: Knex, secrets: Secrets, options: { batchSize?: number } = {}): Promise<Record<string, RotationCount>> {
  const batchSize = options.batchSize ?? 500;
  const counts: Record<string, RotationCount> = {};
  for (const [table, spec] of Object.entries(SECRET_COLUMNS)) {
    const count: RotationCount = { resealed: 0, current: 0, changedMeanwhile: 0 };
    const jsonColumns = Object.entries(spec.json ?? {});
    const columns = [...spec.text, ...jsonColumns.map(([column]) => column)];
    let after: string | null = null;
    for (;;) {
      const query = knex(table)
        .select(spec.key, ...columns)
        .orderBy(spec.key)
        .limit(batchSize);
      if (after !== null) query.where(spec.key, '>', after);
      const rows: Array<Record<string, unknown>> = await query;
      if (rows.length === 0) break;
      after = String(rows[rows.length - 1][spec.key]);
      await knex.transaction(async (trx) => {
        for (const row of rows) {
          try {
            await resealRow(trx, table, spec, jsonColumns, row, secrets, count);
          } catch (err) {
            // A value no key given opens: SECRETS_OLD_KEYS lacks the key that sealed it.
            throw new Error(`${table} ${String(row[spec.key])}: ${(err as Error).message}`);
          }
        }
      });
      if (rows.length < batchSize) break;
    }
    counts[table] = count;
  }
  return counts;
}

/** One row's values sealed again, written only while the row still holds what was read. */
async function resealRow(
  trx: Knex.Transaction,
  table: string,
  spec: SecretTable,
  jsonColumns: Array<[string, readonly string[]]>,
  row: Record<string, unknown>,
  secrets: Secrets,
  count: RotationCount,
): Promise<void> {
  const patch: Record<string, unknown> = {};
  for (const column of spec.text) {
    const value = resealed(secrets, row[column]);
    if (value !== null) patch[column] = value;
  }
  for (const [column, fields] of jsonColumns) {
    const object = row[column];
    if (!object || typeof object !== 'object') continue;
    const changed: Record<string, unknown> = { ...(object as Record<string, unknown>) };
    let any = false;
    for (const field of fields) {
      const value = resealed(secrets, changed[field]);
      if (value !== null) {
        changed[field] = value;
        any = true;
      }
    }
    if (any) patch[column] = JSON.stringify(changed);
  }
  if (Object.keys(patch).length === 0) {
    count.current += 1;
    return;
  }
  const update = trx(table).where(spec.key, row[spec.key] as string);
  // Only while the row still holds what was read.
  for (const column of spec.text) update.whereRaw('?? IS NOT DISTINCT FROM ?', [column, (row[column] as string | null) ?? null]);
  for (const [column] of jsonColumns)
    update.whereRaw('?? IS NOT DISTINCT FROM ?::jsonb', [column, row[column] === null || row[column] === undefined ? null : JSON.stringify(row[column])]);
  const written = await update.update(patch);
  if (written === 1) count.resealed += 1;
  else count.changedMeanwhile += 1;
}

/** A Secrets from the configuration: SECRETS_KEY seals, SECRETS_OLD_KEYS are still read. */
export function secretsOf(config: { secretsKey: string; secretsOldKeys: readonly string[] }): Secrets {
  return new Secrets(config.secretsKey, config.secretsOldKeys);
}
