import type { Knex } from 'knex';

// Frozen here: a later change to these lists needs a migration of its own.
const OUTCOMES = ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized', 'postponed', 'no-answer', 'failed'];
const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

/** Agents of two kinds, operations that retry, calls, per-workspace call settings, charges per call. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.text('kind').notNullable().defaultTo('human');
    t.text('endpoint_url');
    t.text('secret');
    t.check("kind IN ('human', 'voice')", [], 'agents_kind_check');
    t.check("(kind = 'voice') = (endpoint_url IS NOT NULL AND secret IS NOT NULL)", [], 'agents_voice_endpoint_check');
  });

  await knex.schema.alterTable('operations', (t) => {
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true });
  });
  await knex.raw("UPDATE operations SET next_attempt_at = created_at WHERE status = 'pending'");
  await knex.raw("ALTER TABLE operations ADD CONSTRAINT operations_status_check CHECK (status IN ('pending', 'in_progress', 'completed', 'cancelled'))");
  await knex.raw("ALTER TABLE operations ADD CONSTRAINT operations_due_check CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))");
  // The queue's question: "this workspace's pending operations, earliest due first".
  await knex.raw("CREATE INDEX operations_due_idx ON operations (workspace_id, next_attempt_at, id) WHERE status = 'pending'");
  await knex.raw("CREATE INDEX operations_due_all_idx ON operations (next_attempt_at) WHERE status = 'pending'");
  // An order has at most one open operation.
  await knex.raw("CREATE UNIQUE INDEX operations_one_open ON operations (order_id) WHERE status IN ('pending', 'in_progress')");

  await knex.schema.createTable('calls', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('operation_id').notNullable().references('operations.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.integer('attempt').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('ended_at', { useTz: true });
    t.text('outcome');
    t.integer('duration_seconds');
    t.text('summary');
    t.text('changes');
    t.timestamp('callback_at', { useTz: true });
    t.uuid('made_by').references('users.id').onDelete('SET NULL');
    t.decimal('cost', 14, 2).notNullable().defaultTo(0);
    // Human calls: the claim, and the order's status before it (restored if the claim expires).
    t.timestamp('claim_expires_at', { useTz: true });
    t.text('order_status_before');
    // An expired claim is dropped: kept for the 409, but it never counts as a call.
    t.timestamp('dropped_at', { useTz: true });
    // Voice calls: the call.requested message id (the same on every retry), acceptance, result deadline.
    t.text('request_id');
    t.timestamp('accepted_at', { useTz: true });
    t.timestamp('result_due_at', { useTz: true });
    t.text('ended_by');
    t.check("kind IN ('human', 'voice')", [], 'calls_kind_check');
    t.check(`outcome IS NULL OR outcome IN (${list(OUTCOMES)})`, [], 'calls_outcome_check');
    t.check('(ended_at IS NULL) = (outcome IS NULL)', [], 'calls_ended_check');
    t.index(['operation_id']);
  });
  await knex.raw('CREATE UNIQUE INDEX calls_attempt_unique ON calls (operation_id, attempt) WHERE dropped_at IS NULL');
  // At most one open call per operation.
  await knex.raw('CREATE UNIQUE INDEX calls_one_open ON calls (operation_id) WHERE ended_at IS NULL AND dropped_at IS NULL');
  await knex.raw('CREATE INDEX calls_open_claims_idx ON calls (claim_expires_at) WHERE ended_at IS NULL AND dropped_at IS NULL');
  await knex.raw('CREATE INDEX calls_result_due_idx ON calls (result_due_at) WHERE ended_at IS NULL AND dropped_at IS NULL');

  // Reports a voice agent sent, by webhook-id: a retried report is answered 200 and changes nothing.
  await knex.schema.createTable('call_reports', (t) => {
    t.uuid('call_id').notNullable().references('calls.id').onDelete('CASCADE');
    t.text('webhook_id').notNullable();
    t.text('type').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['call_id', 'webhook_id']);
  });

  await knex.schema.createTable('call_settings', (t) => {
    t.uuid('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    t.integer('max_attempts').notNullable();
    t.integer('retry_interval_minutes').notNullable();
    t.text('hours_start').notNullable();
    t.text('hours_end').notNullable();
    t.check('max_attempts BETWEEN 1 AND 10', [], 'call_settings_attempts_check');
    t.check('retry_interval_minutes BETWEEN 1 AND 1440', [], 'call_settings_interval_check');
    t.check('hours_start < hours_end', [], 'call_settings_hours_check');
  });

  // A charge names its call, and a call is charged at most once.
  await knex.schema.alterTable('credit_ledger', (t) => {
    t.uuid('call_id').references('calls.id').onDelete('SET NULL');
    t.unique(['call_id'], { indexName: 'credit_ledger_one_charge_per_call' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('credit_ledger', (t) => {
    t.dropUnique(['call_id'], 'credit_ledger_one_charge_per_call');
    t.dropColumn('call_id');
  });
  await knex.schema.dropTable('call_settings');
  await knex.schema.dropTable('call_reports');
  await knex.schema.dropTable('calls');
  await knex.raw('DROP INDEX operations_one_open');
  await knex.raw('DROP INDEX operations_due_all_idx');
  await knex.raw('DROP INDEX operations_due_idx');
  await knex.raw('ALTER TABLE operations DROP CONSTRAINT operations_due_check');
  await knex.raw('ALTER TABLE operations DROP CONSTRAINT operations_status_check');
  await knex.schema.alterTable('operations', (t) => {
    t.dropColumn('next_attempt_at');
    t.dropColumn('attempts');
  });
  await knex.schema.alterTable('agents', (t) => {
    t.dropChecks(['agents_voice_endpoint_check', 'agents_kind_check']);
    t.dropColumn('secret');
    t.dropColumn('endpoint_url');
    t.dropColumn('kind');
  });
}
