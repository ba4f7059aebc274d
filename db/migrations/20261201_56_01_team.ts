import type { Knex } from 'knex';

/**
 * Issue 56, the team (docs/team.md): shifts, assignment, pay rules and follow-up calls.
 * - `workspace_members`: `on_shift` and `last_seen_at` (a member is on shift while `on_shift` holds
 *   and their last request is under two hours old: derived, no sweeper), `share` (percent, for the
 *   weighted assignment), and the pay rule (`pay_fixed` a month, `pay_per_confirmed`,
 *   `pay_per_delivered`, any of them).
 * - `team_settings`: per workspace, `assignment` (open, round_robin, weighted), `reserve_minutes`,
 *   `follow_ups` (on by default) and the pay `currency`. A workspace without a row has the defaults.
 * - `store_confirmers`: the members a store's orders go to, when the store names some.
 * - `assignment_counts`: per workspace, Morocco day and member, the orders assigned to them
 *   automatically: what the weighted and round-robin turns are computed from.
 * - `orders.assigned_to`, `assigned_at`, `rescheduled_for` (the day a follow-up's customer gave).
 * - `operations.purpose` (confirmation or follow_up) and `follow_up_key` (one follow-up per attempt).
 * - `calls`: the follow-up outcomes join the seven of the confirmation loop.
 * - `team_assign_order(workspace, store)`: the next assignee, under the lock of the workspace's
 *   `team_settings` row (each of its statements reads afresh, so parallel creations see each other's
 *   counts); `orders_team_assign`: the BEFORE INSERT trigger that assigns every new order, whatever
 *   path created it.
 */
const OUTCOMES_BEFORE = ['confirmed', 'unconfirmed', 'order-changed', 'unrecognized', 'postponed', 'no-answer', 'failed'];
const OUTCOMES = [...OUTCOMES_BEFORE, 'rescheduled', 'refused', 'wrong-number'];
const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

const ASSIGN = `
  CREATE FUNCTION team_assign_order(ws uuid, store text) RETURNS uuid LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    mode text;
    today date := (now() AT TIME ZONE 'Africa/Casablanca')::date;
    picked uuid;
  BEGIN
    SELECT assignment INTO mode FROM team_settings WHERE workspace_id = ws;
    IF mode IS NULL OR mode = 'open' THEN RETURN NULL; END IF;
    -- One assignment at a time per workspace, until the creating transaction ends; the statements
    -- below read afresh, so they see every assignment committed before the lock was ours.
    PERFORM 1 FROM team_settings WHERE workspace_id = ws FOR UPDATE;
    WITH candidates AS (
      SELECT m.user_id,
             CASE WHEN mode = 'weighted' THEN coalesce(m.share, 0) ELSE 1 END AS share,
             coalesce(c.n, 0) AS n
        FROM workspace_members m
        LEFT JOIN assignment_counts c ON c.workspace_id = ws AND c.day = today AND c.user_id = m.user_id
       WHERE m.workspace_id = ws AND m.on_shift AND m.last_seen_at > now() - interval '2 hours'
         AND (NOT EXISTS (SELECT 1 FROM store_confirmers s WHERE s.workspace_id = ws AND s.store_name = store)
              OR EXISTS (SELECT 1 FROM store_confirmers s WHERE s.workspace_id = ws AND s.store_name = store AND s.user_id = m.user_id))
    ), weighed AS (
      SELECT user_id, share, n, sum(share) OVER () AS total_share, sum(n) OVER () AS total_n FROM candidates WHERE share > 0
    )
    -- The largest deficit against the shares, counting this order: share × (assigned + 1) − n × Σshares.
    SELECT user_id INTO picked FROM weighed
     ORDER BY share * (total_n + 1) - n * total_share DESC, n, user_id LIMIT 1;
    IF picked IS NULL THEN RETURN NULL; END IF;
    INSERT INTO assignment_counts (workspace_id, day, user_id, n) VALUES (ws, today, picked, 1)
      ON CONFLICT (workspace_id, day, user_id) DO UPDATE SET n = assignment_counts.n + 1;
    RETURN picked;
  END $$`;

const ASSIGN_TRIGGER = `
  CREATE FUNCTION orders_team_assign() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.assigned_to IS NULL AND coalesce(NEW.status, 'pending') = 'pending' THEN
      NEW.assigned_to := team_assign_order(NEW.workspace_id, NEW.store_name);
      IF NEW.assigned_to IS NOT NULL THEN NEW.assigned_at := now(); END IF;
    END IF;
    RETURN NEW;
  END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspace_members', (t) => {
    t.boolean('on_shift').notNullable().defaultTo(false);
    t.timestamp('last_seen_at', { useTz: true });
    t.integer('share');
    t.decimal('pay_fixed', 14, 3);
    t.decimal('pay_per_confirmed', 14, 3);
    t.decimal('pay_per_delivered', 14, 3);
    t.check('share IS NULL OR share BETWEEN 0 AND 100', [], 'workspace_members_share_check');
    t.check(
      '(pay_fixed IS NULL OR pay_fixed >= 0) AND (pay_per_confirmed IS NULL OR pay_per_confirmed >= 0) AND (pay_per_delivered IS NULL OR pay_per_delivered >= 0)',
      [],
      'workspace_members_pay_check',
    );
  });
  await knex.raw(`
    CREATE TABLE team_settings (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
      assignment text NOT NULL DEFAULT 'open' CHECK (assignment IN ('open', 'round_robin', 'weighted')),
      reserve_minutes integer NOT NULL DEFAULT 30 CHECK (reserve_minutes BETWEEN 1 AND 1440),
      follow_ups boolean NOT NULL DEFAULT true,
      currency text NOT NULL DEFAULT 'MAD' CHECK (currency ~ '^[A-Z]{3}$')
    )`);
  await knex.raw(`
    CREATE TABLE store_confirmers (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      store_name text NOT NULL CHECK (char_length(store_name) <= 200),
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      PRIMARY KEY (workspace_id, store_name, user_id)
    )`);
  await knex.raw(`
    CREATE TABLE assignment_counts (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      day date NOT NULL,
      user_id uuid NOT NULL,
      n integer NOT NULL,
      PRIMARY KEY (workspace_id, day, user_id)
    )`);
  await knex.schema.alterTable('orders', (t) => {
    t.uuid('assigned_to').references('users.id').onDelete('SET NULL');
    t.timestamp('assigned_at', { useTz: true });
    // A day as the customer gave it (YYYY-MM-DD), kept as text: it is a day, not an instant.
    t.text('rescheduled_for');
    t.check("rescheduled_for IS NULL OR rescheduled_for ~ '^\\d{4}-\\d{2}-\\d{2}$'", [], 'orders_rescheduled_for_check');
  });
  await knex.raw('CREATE INDEX orders_assigned_idx ON orders (workspace_id, assigned_to, created_at DESC, id DESC) WHERE assigned_to IS NOT NULL');
  await knex.schema.alterTable('operations', (t) => {
    t.text('purpose').notNullable().defaultTo('confirmation');
    t.text('follow_up_key');
    t.check("purpose IN ('confirmation', 'follow_up')", [], 'operations_purpose_check');
  });
  await knex.raw('CREATE UNIQUE INDEX operations_follow_up_once ON operations (order_id, follow_up_key) WHERE follow_up_key IS NOT NULL');
  await knex.raw('ALTER TABLE calls DROP CONSTRAINT calls_outcome_check');
  await knex.raw(`ALTER TABLE calls ADD CONSTRAINT calls_outcome_check CHECK (outcome IS NULL OR outcome IN (${list(OUTCOMES)}))`);
  await knex.raw(ASSIGN);
  await knex.raw(ASSIGN_TRIGGER);
  // Named to run after orders_flag_risky, which may decline a blocked number's order first.
  await knex.raw('CREATE TRIGGER orders_team_assign BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION orders_team_assign()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER orders_team_assign ON orders');
  await knex.raw('DROP FUNCTION orders_team_assign()');
  await knex.raw('DROP FUNCTION team_assign_order(uuid, text)');
  await knex.raw('ALTER TABLE calls DROP CONSTRAINT calls_outcome_check');
  await knex.raw(`ALTER TABLE calls ADD CONSTRAINT calls_outcome_check CHECK (outcome IS NULL OR outcome IN (${list(OUTCOMES_BEFORE)}))`);
  await knex.raw('DROP INDEX operations_follow_up_once');
  await knex.schema.alterTable('operations', (t) => {
    t.dropChecks(['operations_purpose_check']);
    t.dropColumns('purpose', 'follow_up_key');
  });
  await knex.schema.alterTable('orders', (t) => {
    t.dropChecks(['orders_rescheduled_for_check']);
    t.dropColumns('assigned_to', 'assigned_at', 'rescheduled_for');
  });
  await knex.raw('DROP TABLE assignment_counts, store_confirmers, team_settings');
  await knex.schema.alterTable('workspace_members', (t) => {
    t.dropChecks(['workspace_members_share_check', 'workspace_members_pay_check']);
    t.dropColumns('on_shift', 'last_seen_at', 'share', 'pay_fixed', 'pay_per_confirmed', 'pay_per_delivered');
  });
}
