import type { Knex } from 'knex';

/**
 * WhatsApp as a third kind of agent, and the ladder: an agent names the agent that takes an order
 * over when its operation ends without an answer. Operations remember their step on the ladder;
 * calls gain the customer's reply, the message id Meta gave us and the message's delivery statuses.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE agents DROP CONSTRAINT agents_kind_check');
  await knex.raw("ALTER TABLE agents ADD CONSTRAINT agents_kind_check CHECK (kind IN ('human', 'voice', 'whatsapp'))");
  await knex.schema.alterTable('agents', (t) => {
    t.uuid('fallback_agent_id').references('agents.id').onDelete('SET NULL');
    t.check('fallback_agent_id IS DISTINCT FROM id', [], 'agents_fallback_not_self_check');
  });

  // A WhatsApp agent's connection to Meta: owned by services/whatsapp; the token and app secret never leave it.
  await knex.schema.createTable('whatsapp_agents', (t) => {
    t.uuid('agent_id').primary().references('agents.id').onDelete('CASCADE');
    t.text('phone_number_id').notNullable();
    t.text('access_token').notNullable();
    t.text('app_secret').notNullable();
    t.text('verify_token').notNullable();
    t.text('template_name').notNullable();
    t.text('template_language').notNullable();
    t.integer('reply_window_hours').notNullable().defaultTo(4);
    t.check('reply_window_hours BETWEEN 1 AND 72', [], 'whatsapp_agents_window_check');
  });

  // The ladder: 1 for the handler's operation, 2 and 3 for the fallbacks that took the order over.
  await knex.schema.alterTable('operations', (t) => {
    t.integer('ladder_step').notNullable().defaultTo(1);
    t.check('ladder_step BETWEEN 1 AND 3', [], 'operations_ladder_step_check');
  });

  await knex.raw('ALTER TABLE calls DROP CONSTRAINT calls_kind_check');
  await knex.raw("ALTER TABLE calls ADD CONSTRAINT calls_kind_check CHECK (kind IN ('human', 'voice', 'whatsapp'))");
  await knex.schema.alterTable('calls', (t) => {
    t.text('reply');
    t.text('message_id');
    t.timestamp('sent_at', { useTz: true });
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('read_at', { useTz: true });
  });
  await knex.raw('CREATE UNIQUE INDEX calls_message_id_unique ON calls (message_id) WHERE message_id IS NOT NULL');
  await knex.raw("CREATE INDEX calls_whatsapp_waiting_idx ON calls (result_due_at) WHERE kind = 'whatsapp' AND ended_at IS NULL");

  // Messages and statuses Meta sent, by their id: each is applied once however often it comes.
  await knex.schema.createTable('whatsapp_events', (t) => {
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.text('event_key').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['agent_id', 'event_key']);
    t.check('length(event_key) <= 300', [], 'whatsapp_events_key_length_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('whatsapp_events');
  await knex.raw('DROP INDEX calls_whatsapp_waiting_idx');
  await knex.raw('DROP INDEX calls_message_id_unique');
  await knex.schema.alterTable('calls', (t) => {
    t.dropColumns('reply', 'message_id', 'sent_at', 'delivered_at', 'read_at');
  });
  await knex.raw("DELETE FROM calls WHERE kind = 'whatsapp'");
  await knex.raw('ALTER TABLE calls DROP CONSTRAINT calls_kind_check');
  await knex.raw("ALTER TABLE calls ADD CONSTRAINT calls_kind_check CHECK (kind IN ('human', 'voice'))");
  await knex.schema.alterTable('operations', (t) => {
    t.dropChecks(['operations_ladder_step_check']);
    t.dropColumn('ladder_step');
  });
  await knex.schema.dropTable('whatsapp_agents');
  await knex.schema.alterTable('agents', (t) => {
    t.dropChecks(['agents_fallback_not_self_check']);
    t.dropColumn('fallback_agent_id');
  });
  await knex.raw("DELETE FROM agents WHERE kind = 'whatsapp'");
  await knex.raw('ALTER TABLE agents DROP CONSTRAINT agents_kind_check');
  await knex.raw("ALTER TABLE agents ADD CONSTRAINT agents_kind_check CHECK (kind IN ('human', 'voice'))");
}
