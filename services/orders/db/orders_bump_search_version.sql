CREATE OR REPLACE FUNCTION public.orders_bump_search_version()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      
  INSERT INTO order_search_versions AS v (workspace_id, shard)
  SELECT DISTINCT s.workspace_id, (pg_backend_pid() % 8)::smallint FROM (SELECT workspace_id FROM new_rows) s
   ORDER BY 1
  ON CONFLICT (workspace_id, shard) DO UPDATE SET version = v.version + 1;
    ELSIF TG_OP = 'DELETE' THEN
      
  INSERT INTO order_search_versions AS v (workspace_id, shard)
  SELECT DISTINCT s.workspace_id, (pg_backend_pid() % 8)::smallint FROM (SELECT workspace_id FROM old_rows) s WHERE EXISTS (SELECT 1 FROM workspaces w WHERE w.id = s.workspace_id)
   ORDER BY 1
  ON CONFLICT (workspace_id, shard) DO UPDATE SET version = v.version + 1;
      DELETE FROM order_search_versions v
       WHERE v.workspace_id IN (SELECT workspace_id FROM old_rows)
         AND NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = v.workspace_id);
    ELSIF TG_OP = 'UPDATE' THEN
      
  INSERT INTO order_search_versions AS v (workspace_id, shard, version, status_version)
  SELECT s.workspace_id, (pg_backend_pid() % 8)::smallint, bool_or(s.text)::int, bool_or(s.status)::int
    FROM (SELECT n.workspace_id,
                 n.search_text IS DISTINCT FROM o.search_text OR n.workspace_id <> o.workspace_id AS text,
                 n.status IS DISTINCT FROM o.status AS status
            FROM new_rows n JOIN old_rows o ON o.id = n.id) s
   WHERE s.text OR s.status
   GROUP BY s.workspace_id
   ORDER BY 1
  ON CONFLICT (workspace_id, shard) DO UPDATE
    SET version = v.version + excluded.version, status_version = v.status_version + excluded.status_version;
    ELSE
      UPDATE order_search_versions SET version = version + 1;
    END IF;
    RETURN NULL;
  END $function$
