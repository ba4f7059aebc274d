import type { Knex } from 'knex';

/**
 * `call_due_at(workspace, at)`: `at` itself when the workspace's calling hours (Morocco time) are
 * open then, else their next opening — the same rule as `nextOpening` in services/calls/settings.ts,
 * with the same defaults for a workspace without settings (09:00–21:00). A new order's operation is
 * due at this time, so its "next call" is when the call can really be made.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION call_due_at(ws uuid, at timestamptz) RETURNS timestamptz
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

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION call_due_at(uuid, timestamptz)');
}
