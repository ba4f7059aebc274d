import crypto from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Issue 58, item 1: every third-party secret the service reads back is encrypted at rest (DESIGN,
 * "Privacy"; db/secrets-at-rest.ts lists them): the plain values of before are sealed here, with the
 * key the app uses (SECRETS_KEY), in the format of integrations/secrets.ts
 * (`v1:<keyId>:<iv>:<tag>:<ciphertext>`, AES-256-GCM). Values sealed already (Shopify's one-click
 * tokens, issue 52) are left as they are.
 *
 * The key comes from the migration runner (db/migrate.ts passes it as the knex instance's
 * `userParams.secretsKey`; the knexfile passes the configuration's), else from SECRETS_KEY. A
 * database holding a plain secret cannot be migrated without one.
 *
 * A sealed value is longer than the plain one: the 500-character caps of `store_connections.secret`
 * and `carrier_connections.secret` are raised (the API still takes at most 500).
 *
 * Frozen here on purpose, the columns and the sealing included: a later change to the app's list or
 * format needs a migration of its own.
 */
const TEXT_COLUMNS: Record<string, { key: string; columns: string[] }> = {
  store_connections: { key: 'id', columns: ['secret'] },
  agents: { key: 'id', columns: ['secret'] },
  whatsapp_agents: { key: 'agent_id', columns: ['access_token', 'app_secret', 'verify_token'] },
  webhook_endpoints: { key: 'id', columns: ['secret'] },
  carrier_connections: { key: 'id', columns: ['secret'] },
};
// Shopify's tokens (sealed since issue 52, but those stored before it) and WooCommerce's keys.
const WRITE_BACK_FIELDS = ['access_token', 'refresh_token', 'consumer_key', 'consumer_secret'];
const CAPPED = ['store_connections', 'carrier_connections'];
const BATCH = 500;

const SEALED = /^v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/;

interface Key {
  id: string;
  bytes: Buffer;
}

function keyOf(text: string): Key {
  const bytes = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(text) || bytes.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes in base64');
  return { id: crypto.createHash('sha256').update(bytes).digest('base64url').slice(0, 8), bytes };
}

function seal(key: Key, plain: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key.bytes, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', key.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join(':');
}

function open(key: Key, stored: string): string {
  const [, keyId, iv, tag, ciphertext] = stored.split(':');
  if (keyId !== key.id) throw new Error(`a secret is sealed with key ${keyId}, not SECRETS_KEY (${key.id}): rotate to SECRETS_KEY first`);
  const decipher = crypto.createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/** The key to seal with, when one is needed: the runner's, else the environment's. */
function secretsKey(knex: Knex): Key {
  const text = (knex.userParams?.secretsKey as string | undefined) ?? process.env.SECRETS_KEY;
  if (!text) throw new Error('SECRETS_KEY is needed to encrypt the secrets this database holds in clear');
  return keyOf(text.trim());
}

/**
 * Each row's values that `needs` a change changed by `change`, in batches by key: the text columns,
 * and the `fields` of `store_connections.write_back`.
 */
async function rewrite(knex: Knex, fields: string[], needs: (value: string) => boolean, change: (value: string) => string): Promise<void> {
  const changed = (value: unknown): string | undefined => (typeof value === 'string' && needs(value) ? change(value) : undefined);
  for (const [table, { key: id, columns }] of Object.entries(TEXT_COLUMNS)) {
    const json = table === 'store_connections' ? ['write_back'] : [];
    let after: string | null = null;
    for (;;) {
      const query = knex(table)
        .select(id, ...columns, ...json)
        .orderBy(id)
        .limit(BATCH);
      if (after !== null) query.where(id, '>', after);
      const rows: Array<Record<string, unknown>> = await query;
      if (rows.length === 0) break;
      after = String(rows[rows.length - 1][id]);
      for (const row of rows) {
        const patch: Record<string, unknown> = {};
        for (const column of columns) {
          const value = changed(row[column]);
          if (value !== undefined) patch[column] = value;
        }
        const writeBack = row.write_back as Record<string, unknown> | null | undefined;
        if (writeBack && typeof writeBack === 'object') {
          const object = { ...writeBack };
          let any = false;
          for (const field of fields) {
            const value = changed(object[field]);
            if (value !== undefined) {
              object[field] = value;
              any = true;
            }
          }
          if (any) patch.write_back = JSON.stringify(object);
        }
        if (Object.keys(patch).length > 0)
          await knex(table)
            .where(id, row[id] as string)
            .update(patch);
      }
      if (rows.length < BATCH) break;
    }
  }
}

export async function up(knex: Knex): Promise<void> {
  for (const table of CAPPED) {
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_secret_check`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_secret_check CHECK (char_length(secret) BETWEEN 1 AND 4000)`);
  }
  let key: Key | undefined;
  await rewrite(
    knex,
    WRITE_BACK_FIELDS,
    (value) => !SEALED.test(value),
    (value) => {
      key ??= secretsKey(knex);
      return seal(key, value);
    },
  );
}

/** Back to the values in clear, but Shopify's tokens, sealed before (issue 52). */
export async function down(knex: Knex): Promise<void> {
  let key: Key | undefined;
  await rewrite(
    knex,
    ['consumer_key', 'consumer_secret'],
    (value) => SEALED.test(value),
    (value) => {
      key ??= secretsKey(knex);
      return open(key, value);
    },
  );
  for (const table of CAPPED) {
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_secret_check`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_secret_check CHECK (char_length(secret) BETWEEN 1 AND 500)`);
  }
}
