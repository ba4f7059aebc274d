import type { Knex } from 'knex';

/**
 * The one-time tokens of the dashboard's creation forms, once used: a token's row is inserted in the
 * transaction that creates what the form asked for, so a reload or a second tap creates nothing.
 * Rows older than a day are pruned by the worker's housekeeping (a form is not kept open that long).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('form_tokens', (t) => {
    t.text('token').primary();
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('purpose').notNullable();
    t.timestamp('used_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE INDEX form_tokens_used_at_idx ON form_tokens (used_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('form_tokens');
}
