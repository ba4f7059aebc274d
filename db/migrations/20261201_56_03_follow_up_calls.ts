import type { Knex } from 'knex';

/**
 * Follow-up calls (docs/team.md) are counted apart: calls_count_outcomes, which keeps call_counts for
 * /stats/team's confirmation figures and each order's ended_calls for /stats, leaves out the calls
 * of `follow_up` operations (the saved parcels are read from the follow-ups themselves). The
 * function as 20261126_43_05 wrote it, with that one condition more.
 */
const CALLS_COUNTED = (table: string, sign: string, followUps: boolean) => `
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, ${sign} AS n,
         ${sign} * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         ${sign} * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds,
         op.order_id
    FROM ${table} c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL${followUps ? '' : " AND op.purpose IS DISTINCT FROM 'follow_up'"}`;

const COUNT_CALLS = (withOld: boolean, followUps: boolean) => {
  const changes = `${CALLS_COUNTED('new_rows', '1', followUps)}${withOld ? ` UNION ALL ${CALLS_COUNTED('old_rows', '-1', followUps)}` : ''}`;
  return `
  INSERT INTO call_counts (workspace_id, day, kind, member_id, agent_id, outcome, n, answered, seconds)
  SELECT workspace_id, day, kind, member_id, agent_id, outcome, sum(n), sum(answered), sum(seconds) FROM (${changes}) changes
  GROUP BY workspace_id, day, kind, member_id, agent_id, outcome
  HAVING sum(n) <> 0 OR sum(seconds) <> 0;
  UPDATE orders o SET ended_calls = o.ended_calls + d.delta
    FROM (SELECT order_id, sum(n) AS delta FROM (${changes}) changes WHERE order_id IS NOT NULL GROUP BY order_id HAVING sum(n) <> 0) d
   WHERE o.id = d.order_id;`;
};

const CALLS_FUNCTION = (followUps: boolean) => `
  CREATE OR REPLACE FUNCTION calls_count_outcomes() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${COUNT_CALLS(false, followUps)}
    ELSE
      ${COUNT_CALLS(true, followUps)}
    END IF;
    RETURN NULL;
  END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(CALLS_FUNCTION(false));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(CALLS_FUNCTION(true));
}
