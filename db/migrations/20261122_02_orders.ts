import type { Knex } from 'knex';

// Frozen here: a later change to the list needs a migration of its own.
const STATUSES = ['pending', 'processing', 'calling', 'confirmed', 'unconfirmed', 'failed', 'no-answer', 'postponed', 'order-changed', 'unrecognized'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.boolean('is_order_handler').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw('CREATE UNIQUE INDEX agents_one_order_handler ON agents (workspace_id) WHERE is_order_handler');

  await knex.schema.createTable('orders', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('client_name').notNullable();
    t.text('phone').notNullable();
    t.text('store_name').notNullable();
    t.text('products_name').notNullable();
    t.text('address');
    t.text('status').notNullable().defaultTo('pending');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`status IN (${STATUSES.map((s) => `'${s}'`).join(', ')})`, [], 'orders_status_check');
    t.check("phone ~ '^\\+212[0-9]{9}$'", [], 'orders_phone_check');
  });
  // "This workspace, newest first", with the id as a deterministic tie-breaker.
  await knex.raw('CREATE INDEX orders_workspace_newest_idx ON orders (workspace_id, created_at DESC, id DESC)');

  await knex.schema.createTable('operations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('order_id').notNullable().references('orders.id').onDelete('CASCADE');
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('RESTRICT');
    t.text('direction').notNullable().defaultTo('outbound');
    t.text('status').notNullable().defaultTo('pending');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['order_id']);
    t.index(['agent_id']);
    t.check("direction IN ('outbound', 'inbound')", [], 'operations_direction_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('operations');
  await knex.schema.dropTable('orders');
  await knex.schema.dropTable('agents');
}
