import type { Knex } from 'knex';

/** "This workspace's open voice calls": counted before every dispatch to keep spending within the balance. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("CREATE INDEX calls_open_voice_idx ON calls (workspace_id) WHERE kind = 'voice' AND ended_at IS NULL AND dropped_at IS NULL");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX calls_open_voice_idx');
}
