CREATE OR REPLACE FUNCTION public.team_assign_order(ws uuid, store text)
 RETURNS uuid
 LANGUAGE plpgsql
AS $function$
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
  END $function$
