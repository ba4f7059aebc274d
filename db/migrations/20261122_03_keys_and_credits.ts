import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('key_hash').notNullable().unique();
    t.text('prefix').notNullable();
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });

  // Every grant and spend is a row; balances are sums, so no update is ever lost.
  await knex.schema.createTable('credit_ledger', (t) => {
    t.bigIncrements('id');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.decimal('amount', 14, 2).notNullable();
    t.text('note');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id']);
    t.check("kind IN ('grant', 'spend')", [], 'credit_ledger_kind_check');
    t.check('amount > 0', [], 'credit_ledger_amount_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('credit_ledger');
  await knex.schema.dropTable('api_keys');
}
