CREATE OR REPLACE FUNCTION public.search_selective_keys(keys integer[], common integer[])
 RETURNS integer[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
      SELECT CASE WHEN rare = '{}' THEN keys ELSE rare END
        FROM (SELECT array(SELECT k FROM unnest(keys) k WHERE k <> ALL (common)) AS rare) r
    $function$
