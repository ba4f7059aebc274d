import type { Knex } from 'knex';

/**
 * A voice agent's `webhook-id` belongs to one report of one of its calls: keyed by (agent, id), a
 * signed report captured for one call and posted to another call of the same agent is found and
 * refused. Ids are at most 256 characters (a btree entry holds about 2.7 kB). Reports the old key
 * let through twice under one id keep their first row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE call_reports ADD COLUMN agent_id uuid REFERENCES agents(id) ON DELETE CASCADE');
  await knex.raw(`
    UPDATE call_reports r SET agent_id = op.agent_id
      FROM calls c JOIN operations op ON op.id = c.operation_id
     WHERE c.id = r.call_id`);
  await knex.raw(`
    DELETE FROM call_reports r USING call_reports first
     WHERE first.agent_id = r.agent_id AND first.webhook_id = r.webhook_id
       AND (first.received_at, first.call_id) < (r.received_at, r.call_id)`);
  await knex.raw('ALTER TABLE call_reports ALTER COLUMN agent_id SET NOT NULL');
  await knex.raw('ALTER TABLE call_reports DROP CONSTRAINT call_reports_pkey');
  await knex.raw('ALTER TABLE call_reports ADD CONSTRAINT call_reports_pkey PRIMARY KEY (agent_id, webhook_id)');
  await knex.raw('CREATE INDEX call_reports_call_idx ON call_reports (call_id)');
  await knex.raw('ALTER TABLE call_reports ADD CONSTRAINT call_reports_webhook_id_length CHECK (char_length(webhook_id) <= 256) NOT VALID');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE call_reports DROP CONSTRAINT call_reports_webhook_id_length');
  await knex.raw('DROP INDEX call_reports_call_idx');
  await knex.raw('ALTER TABLE call_reports DROP CONSTRAINT call_reports_pkey');
  await knex.raw('ALTER TABLE call_reports ADD CONSTRAINT call_reports_pkey PRIMARY KEY (call_id, webhook_id)');
  await knex.raw('ALTER TABLE call_reports DROP COLUMN agent_id');
}
