import type { Knex } from 'knex';

/**
 * Issue 58, item 4: who saw what.
 * - `audit_events`: one row per export, erasure, member change, key, credential or connection
 *   change and sign-in from a new device: who (`actor_id`, null for the system), what (`action`, a
 *   code; `target_type`, `target_id`, `target_label`), `details` (never a secret), from which address
 *   (`ip`, `user_agent` cut short), when. Read newest first per workspace, by keyset
 *   (`audit_events_workspace_idx`); deleted after a year by the worker's housekeeping
 *   (`audit_events_created_idx`).
 * - `user_devices`: the devices a user signed in from, by the SHA-256 of the `ocs.device` cookie
 *   (never the cookie itself); forgotten a year after they were last seen.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_events', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('actor_id').references('users.id').onDelete('SET NULL');
    t.text('action').notNullable();
    t.text('target_type');
    t.text('target_id');
    t.text('target_label');
    t.jsonb('details').notNullable().defaultTo('{}');
    t.text('ip');
    t.text('user_agent');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("action ~ '^[a-z_]{1,64}$'", [], 'audit_events_action_check');
    t.check('length(target_type) <= 64 AND length(target_id) <= 200 AND length(target_label) <= 200', [], 'audit_events_target_length_check');
    t.check('length(ip) <= 64 AND length(user_agent) <= 200', [], 'audit_events_origin_length_check');
  });
  await knex.raw('CREATE INDEX audit_events_workspace_idx ON audit_events (workspace_id, created_at DESC, id DESC)');
  await knex.raw('CREATE INDEX audit_events_created_idx ON audit_events (created_at)');
  await knex.schema.createTable('user_devices', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('device_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'device_hash']);
    t.check("device_hash ~ '^[0-9a-f]{64}$'", [], 'user_devices_hash_check');
    t.index(['last_seen_at'], 'user_devices_last_seen_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('user_devices');
  await knex.schema.dropTable('audit_events');
}
