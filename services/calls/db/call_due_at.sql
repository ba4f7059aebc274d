CREATE OR REPLACE FUNCTION public.call_due_at(ws uuid, at timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
    DECLARE
      opens time;
      closes interval;
      local timestamp := at AT TIME ZONE 'Africa/Casablanca';
    BEGIN
      SELECT hours_start::time, hours_end::interval INTO opens, closes FROM call_settings WHERE workspace_id = ws;
      IF NOT FOUND THEN
        opens := '09:00'::time;
        closes := '21:00'::interval;
      END IF;
      IF local::time >= opens AND local::time::interval < closes THEN
        RETURN at;
      END IF;
      IF local::time < opens THEN
        RETURN (local::date + opens) AT TIME ZONE 'Africa/Casablanca';
      END IF;
      RETURN (local::date + 1 + opens) AT TIME ZONE 'Africa/Casablanca';
    END $function$
