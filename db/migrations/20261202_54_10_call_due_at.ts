import type { Knex } from 'knex';

/**
 * call_due_at as services/calls/db/call_due_at.sql.ts generates it (a literal copy: a migration
 * means the same forever): the first instant the calling hours are open, also on the days
 * Casablanca moves its clock. Before, an opening the clock read twice was given its second
 * reading, and one the clock skipped was given a time outside the hours.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE OR REPLACE FUNCTION public.call_due_at(ws uuid, at timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  opens interval;
  closes interval;
  by_the_clock timestamptz;
  before bigint;
  after bigint;
  middle bigint;
  change timestamptz;
BEGIN
  SELECT hours_start::interval, hours_end::interval INTO opens, closes FROM call_settings WHERE workspace_id = ws;
  IF NOT FOUND THEN
    opens := '09:00'::interval;
    closes := '21:00'::interval;
  END IF;
  IF (at AT TIME ZONE 'Africa/Casablanca')::time::interval >= opens AND (at AT TIME ZONE 'Africa/Casablanca')::time::interval < closes THEN
    RETURN at;
  END IF;
  by_the_clock := at + CASE WHEN opens >= (at AT TIME ZONE 'Africa/Casablanca')::time::interval THEN opens - (at AT TIME ZONE 'Africa/Casablanca')::time::interval
           ELSE opens - (at AT TIME ZONE 'Africa/Casablanca')::time::interval + interval '24 hours' END;
  IF ((by_the_clock AT TIME ZONE 'Africa/Casablanca') - (by_the_clock AT TIME ZONE 'UTC')) = ((at AT TIME ZONE 'Africa/Casablanca') - (at AT TIME ZONE 'UTC')) THEN
    RETURN by_the_clock;
  END IF;
  -- The clock changes on a whole second: the first second with the new offset, halving the wait.
  before := floor(extract(epoch FROM at));
  after := ceil(extract(epoch FROM by_the_clock));
  WHILE after - before > 1 LOOP
    middle := (before + after) / 2;
    IF ((to_timestamp(middle) AT TIME ZONE 'Africa/Casablanca') - (to_timestamp(middle) AT TIME ZONE 'UTC')) = ((at AT TIME ZONE 'Africa/Casablanca') - (at AT TIME ZONE 'UTC')) THEN
      before := middle;
    ELSE
      after := middle;
    END IF;
  END LOOP;
  change := to_timestamp(after);
  IF (change AT TIME ZONE 'Africa/Casablanca')::time::interval >= opens AND (change AT TIME ZONE 'Africa/Casablanca')::time::interval < closes THEN
    RETURN change;
  END IF;
  RETURN change + CASE WHEN opens >= (change AT TIME ZONE 'Africa/Casablanca')::time::interval THEN opens - (change AT TIME ZONE 'Africa/Casablanca')::time::interval
           ELSE opens - (change AT TIME ZONE 'Africa/Casablanca')::time::interval + interval '24 hours' END;
END $function$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE OR REPLACE FUNCTION call_due_at(ws uuid, at timestamptz) RETURNS timestamptz
    LANGUAGE plpgsql STABLE AS $$
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
    END $$`);
}
