import type { Knex } from 'knex';

/**
 * Counters of ended calls for /stats/team (docs/delivery.md): per workspace, Morocco day (of the call's
 * start), kind, the member who made it (human calls) or the agent whose operation it was (voice and
 * WhatsApp), and outcome: how many, how many reached the customer, and their handling seconds (from
 * claim to outcome; a voice agent's reported duration). Delta rows written once per statement by
 * calls_count_outcomes (transition tables, as order_status_counts), folded by the worker. A call is
 * counted once it has an outcome and was not dropped; deleting an order leaves its calls counted:
 * they were made.
 */
const COUNTED = (table: string, sign: string) => `
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, ${sign} AS n,
         ${sign} * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         ${sign} * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds
    FROM ${table} c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL`;

const COUNT_CALLS = (withOld: boolean) => `
  INSERT INTO call_counts (workspace_id, day, kind, member_id, agent_id, outcome, n, answered, seconds)
  SELECT workspace_id, day, kind, member_id, agent_id, outcome, sum(n), sum(answered), sum(seconds) FROM (
    ${COUNTED('new_rows', '1')}${withOld ? ` UNION ALL ${COUNTED('old_rows', '-1')}` : ''}) changes
  GROUP BY workspace_id, day, kind, member_id, agent_id, outcome
  HAVING sum(n) <> 0 OR sum(seconds) <> 0;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE call_counts (
      workspace_id uuid NOT NULL,
      day date NOT NULL,
      kind text NOT NULL,
      member_id uuid,
      agent_id uuid,
      outcome text NOT NULL,
      n bigint NOT NULL,
      answered bigint NOT NULL,
      seconds numeric NOT NULL
    )`);
  await knex.raw('CREATE INDEX call_counts_workspace_day_idx ON call_counts (workspace_id, day)');
  await knex.raw(`
    CREATE FUNCTION calls_count_outcomes() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        ${COUNT_CALLS(false)}
      ELSE
        ${COUNT_CALLS(true)}
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(
    'CREATE TRIGGER calls_count_insert AFTER INSERT ON calls REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION calls_count_outcomes()',
  );
  await knex.raw(
    'CREATE TRIGGER calls_count_update AFTER UPDATE ON calls REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION calls_count_outcomes()',
  );
  await knex.raw('LOCK TABLE calls IN SHARE MODE');
  await knex.raw(`
    INSERT INTO call_counts (workspace_id, day, kind, member_id, agent_id, outcome, n, answered, seconds)
    SELECT workspace_id, day, kind, member_id, agent_id, outcome, sum(n), sum(answered), sum(seconds) FROM (${COUNTED('calls', '1')}) c
     GROUP BY workspace_id, day, kind, member_id, agent_id, outcome`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER calls_count_update ON calls');
  await knex.raw('DROP TRIGGER calls_count_insert ON calls');
  await knex.raw('DROP FUNCTION calls_count_outcomes()');
  await knex.raw('DROP TABLE call_counts');
}
