import type { Knex } from 'knex';

/**
 * Each user's dashboard language (languages.md): `en`, `fr` or `ar`, or null when they never chose
 * one (then the `lang` cookie or `Accept-Language` decides). Saved on the user so that it follows
 * them to any device. Nullable with no default: adding it rewrites no row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("ALTER TABLE users ADD COLUMN language text CONSTRAINT users_language_check CHECK (language IN ('en', 'fr', 'ar'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE users DROP COLUMN language');
}
