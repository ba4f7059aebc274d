import type { Knex } from 'knex';

/**
 * Issue 52, WhatsApp: what Meta tells us out of order, and what did not go out.
 * - `whatsapp_early_statuses`: a status (sent, delivered, read, failed) for a message id no call
 *   carries yet (Meta's notification came before its send's answer was stored), kept until the
 *   send is recorded, then applied and deleted; housekeeping deletes those older than three days
 *   (the longest reply window).
 * - `calls.send_error`, `send_error_at`, `send_next_at`: why the message of an open WhatsApp call
 *   has not gone out yet, and when it is tried again (the order page says so).
 * - `whatsapp_agents.last_error`, `last_error_at`: the agent's last send error or failed status
 *   (its page shows it; the agents list marks an agent with one in the last hour);
 *   `throttled_until`: Meta throttled the number, which is tried at most once a minute until then.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('whatsapp_early_statuses', (t) => {
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.text('message_id').notNullable();
    t.text('status').notNullable();
    t.timestamp('at', { useTz: true }).notNullable();
    t.text('error');
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['agent_id', 'message_id', 'status']);
    t.check("status IN ('sent', 'delivered', 'read', 'failed')", [], 'whatsapp_early_statuses_status_check');
    t.check('length(message_id) <= 256', [], 'whatsapp_early_statuses_id_length_check');
    t.index(['received_at'], 'whatsapp_early_statuses_received_idx');
  });
  await knex.schema.alterTable('calls', (t) => {
    t.text('send_error');
    t.timestamp('send_error_at', { useTz: true });
    t.timestamp('send_next_at', { useTz: true });
  });
  await knex.schema.alterTable('whatsapp_agents', (t) => {
    t.text('last_error');
    t.timestamp('last_error_at', { useTz: true });
    t.timestamp('throttled_until', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('whatsapp_agents', (t) => {
    t.dropColumns('last_error', 'last_error_at', 'throttled_until');
  });
  await knex.schema.alterTable('calls', (t) => {
    t.dropColumns('send_error', 'send_error_at', 'send_next_at');
  });
  await knex.schema.dropTable('whatsapp_early_statuses');
}
