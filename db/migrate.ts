import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { ROOT } from '../config';

type Migration = { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> };

/** The one migrations directory: `db/migrations` (its compiled twin under `dist/` when run from there). */
const MIGRATIONS_DIRECTORY = path.join(__dirname, 'migrations');
const SOURCE_DIRECTORY = path.join(ROOT, 'db', 'migrations');

/**
 * The order migrations run in. Ours are named `YYYYMMDD_NN_what`, `knex migrate:make` names them
 * `YYYYMMDDHHMMSS_what`: compared as date, then number (NN) or time of day, they interleave correctly.
 */
function runOrder(name: string): string {
  const ours = /^(\d{8})_(\d{2})_/.exec(name);
  if (ours) return `${ours[1]}${ours[2].padStart(6, '0')}_${name}`;
  const made = /^(\d{8})(\d{6})_/.exec(name);
  return made ? `${made[1]}${made[2]}_${name}` : name;
}

/**
 * Migrations read from the directory, named without their extension, so the same history is
 * recorded whether they run from TypeScript sources (`npx knex` with knexfile.ts) or compiled
 * JavaScript (`npm run migrate`, the server); knex would otherwise record `.ts` in one place and
 * `.js` in the other, and call the directory corrupt.
 */
export const migrationSource: Knex.MigrationSource<{ file: string }> = {
  async getMigrations() {
    const files = fs.readdirSync(MIGRATIONS_DIRECTORY).filter((file) => /\.(js|ts)$/.test(file) && !file.endsWith('.d.ts'));
    const names = [...new Set(files.map((file) => file.replace(/\.(js|ts)$/, '')))];
    // `{ file }`: the shape knex's own commands (migrate:list) print.
    return names.sort((a, b) => (runOrder(a) < runOrder(b) ? -1 : 1)).map((file) => ({ file }));
  },
  getMigrationName: ({ file }) => file,
  getMigration: async ({ file }) => require(path.join(MIGRATIONS_DIRECTORY, file)) as Migration,
};

/** Where `knex migrate:make` writes a new migration: beside the others, in TypeScript. */
export const MIGRATIONS_SOURCE_DIRECTORY = fs.existsSync(SOURCE_DIRECTORY) ? SOURCE_DIRECTORY : MIGRATIONS_DIRECTORY;

/** What a migration may need of the configuration, given to it as its knex instance's `userParams`. */
export interface MigrationParams {
  /** SECRETS_KEY: the key plain secrets are sealed with (20261130_58_01_secrets_at_rest). */
  secretsKey?: string;
}

/** Applies every pending migration; returns the names it applied. */
export async function migrateLatest(knex: Knex, params: MigrationParams = {}): Promise<string[]> {
  const migrating = knex.withUserParams({ ...knex.userParams, ...params });
  const [, applied] = (await migrating.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}
