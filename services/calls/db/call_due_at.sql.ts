import { CALLING_HOURS } from '../settings';

/**
 * `call_due_at(workspace, at)`: `nextOpening` (../settings.ts) for the statements that set a call's
 * due time for many orders at once. Its constants come from CALLING_HOURS; its steps are
 * nextOpening's, and test/calls/calling-hours-agree.test.ts holds the two to the same answers. The
 * text is what `pg_get_functiondef` shows; a migration applies a literal copy of it.
 */
const zone = `'${CALLING_HOURS.timeZone}'`;
const clock = (instant: string) => `(${instant} AT TIME ZONE ${zone})`;
const offset = (instant: string) => `(${clock(instant)} - (${instant} AT TIME ZONE 'UTC'))`;
const open = (instant: string) => `${clock(instant)}::time::interval >= opens AND ${clock(instant)}::time::interval < closes`;
const untilStart = (instant: string) =>
  `CASE WHEN opens >= ${clock(instant)}::time::interval THEN opens - ${clock(instant)}::time::interval
           ELSE opens - ${clock(instant)}::time::interval + interval '24 hours' END`;

export const definition = `CREATE OR REPLACE FUNCTION public.call_due_at(ws uuid, at timestamp with time zone)
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
    opens := '${CALLING_HOURS.defaults.start}'::interval;
    closes := '${CALLING_HOURS.defaults.end}'::interval;
  END IF;
  IF ${open('at')} THEN
    RETURN at;
  END IF;
  by_the_clock := at + ${untilStart('at')};
  IF ${offset('by_the_clock')} = ${offset('at')} THEN
    RETURN by_the_clock;
  END IF;
  -- The clock changes on a whole second: the first second with the new offset, halving the wait.
  before := floor(extract(epoch FROM at));
  after := ceil(extract(epoch FROM by_the_clock));
  WHILE after - before > 1 LOOP
    middle := (before + after) / 2;
    IF ${offset('to_timestamp(middle)')} = ${offset('at')} THEN
      before := middle;
    ELSE
      after := middle;
    END IF;
  END LOOP;
  change := to_timestamp(after);
  IF ${open('change')} THEN
    RETURN change;
  END IF;
  RETURN change + ${untilStart('change')};
END $function$`;
