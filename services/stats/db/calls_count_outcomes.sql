CREATE OR REPLACE FUNCTION public.calls_count_outcomes()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      
  INSERT INTO call_counts (workspace_id, day, kind, member_id, agent_id, outcome, n, answered, seconds)
  SELECT workspace_id, day, kind, member_id, agent_id, outcome, sum(n), sum(answered), sum(seconds) FROM (
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, 1 AS n,
         1 * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         1 * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds,
         op.order_id
    FROM new_rows c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL AND op.purpose IS DISTINCT FROM 'follow_up') changes
  GROUP BY workspace_id, day, kind, member_id, agent_id, outcome
  HAVING sum(n) <> 0 OR sum(seconds) <> 0;
  UPDATE orders o SET ended_calls = o.ended_calls + d.delta
    FROM (SELECT order_id, sum(n) AS delta FROM (
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, 1 AS n,
         1 * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         1 * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds,
         op.order_id
    FROM new_rows c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL AND op.purpose IS DISTINCT FROM 'follow_up') changes WHERE order_id IS NOT NULL GROUP BY order_id HAVING sum(n) <> 0) d
   WHERE o.id = d.order_id;
    ELSE
      
  INSERT INTO call_counts (workspace_id, day, kind, member_id, agent_id, outcome, n, answered, seconds)
  SELECT workspace_id, day, kind, member_id, agent_id, outcome, sum(n), sum(answered), sum(seconds) FROM (
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, 1 AS n,
         1 * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         1 * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds,
         op.order_id
    FROM new_rows c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL AND op.purpose IS DISTINCT FROM 'follow_up' UNION ALL 
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, -1 AS n,
         -1 * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         -1 * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds,
         op.order_id
    FROM old_rows c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL AND op.purpose IS DISTINCT FROM 'follow_up') changes
  GROUP BY workspace_id, day, kind, member_id, agent_id, outcome
  HAVING sum(n) <> 0 OR sum(seconds) <> 0;
  UPDATE orders o SET ended_calls = o.ended_calls + d.delta
    FROM (SELECT order_id, sum(n) AS delta FROM (
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, 1 AS n,
         1 * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         1 * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds,
         op.order_id
    FROM new_rows c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL AND op.purpose IS DISTINCT FROM 'follow_up' UNION ALL 
  SELECT c.workspace_id, (c.started_at AT TIME ZONE 'Africa/Casablanca')::date AS day, c.kind,
         CASE WHEN c.kind = 'human' THEN c.made_by END AS member_id,
         CASE WHEN c.kind <> 'human' THEN op.agent_id END AS agent_id,
         c.outcome, -1 AS n,
         -1 * (CASE WHEN c.outcome NOT IN ('no-answer', 'failed') OR c.reply IS NOT NULL THEN 1 ELSE 0 END) AS answered,
         -1 * coalesce(CASE WHEN c.kind = 'voice' THEN c.duration_seconds ELSE extract(epoch FROM c.ended_at - c.started_at) END, 0) AS seconds,
         op.order_id
    FROM old_rows c LEFT JOIN operations op ON op.id = c.operation_id
   WHERE c.outcome IS NOT NULL AND c.dropped_at IS NULL AND op.purpose IS DISTINCT FROM 'follow_up') changes WHERE order_id IS NOT NULL GROUP BY order_id HAVING sum(n) <> 0) d
   WHERE o.id = d.order_id;
    END IF;
    RETURN NULL;
  END $function$
