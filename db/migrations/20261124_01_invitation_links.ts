import type { Knex } from 'knex';

/**
 * Invitations become single-use links (`/join/{token}`): a row holds the SHA-256 of the token,
 * never the token. Invitations made the old way (an address alone, which anyone could sign up
 * with) are deleted: owners invite again. Accepted ones go too: the membership they led to is in
 * `workspace_members`, and a row without a token hash has no place in the new table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex('invitations').delete();
  await knex.raw('DROP INDEX invitations_workspace_email_key');
  await knex.raw('DROP INDEX invitations_open_email_idx');
  await knex.schema.alterTable('invitations', (t) => {
    t.renameColumn('invited_by', 'created_by');
    t.dropColumn('accepted_at');
    t.text('token_hash').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.uuid('used_by').references('users.id').onDelete('SET NULL');
    t.timestamp('revoked_at', { useTz: true });
  });
  await knex.raw('CREATE INDEX invitations_pending_idx ON invitations (workspace_id, created_at) WHERE used_at IS NULL AND revoked_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex('invitations').delete();
  await knex.raw('DROP INDEX invitations_pending_idx');
  await knex.schema.alterTable('invitations', (t) => {
    t.dropColumn('revoked_at');
    t.dropColumn('used_by');
    t.dropColumn('used_at');
    t.dropColumn('expires_at');
    t.dropColumn('token_hash');
    t.timestamp('accepted_at', { useTz: true });
    t.renameColumn('created_by', 'invited_by');
  });
  await knex.raw('CREATE UNIQUE INDEX invitations_workspace_email_key ON invitations (workspace_id, lower(email))');
  await knex.raw('CREATE INDEX invitations_open_email_idx ON invitations (lower(email)) WHERE accepted_at IS NULL');
}
