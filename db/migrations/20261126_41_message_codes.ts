import type { Knex } from 'knex';

/**
 * What a page shows of a stored reason, by its code (services/messages), beside the English the API
 * keeps:
 * - `store_events.reason_codes`: the codes of an event's reasons (a list of `{code, params}`); null
 *   for an event without reasons, and for events logged before (the log keeps a few days).
 * - `webhook_endpoints.disabled_reason_code`: the code of why an endpoint is disabled. Endpoints
 *   disabled before get theirs from their English reason, the two sentences the service wrote.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE store_events ADD COLUMN reason_codes jsonb');
  await knex.raw('ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason_code jsonb');
  await knex.raw(`
    UPDATE webhook_endpoints
       SET disabled_reason_code = '{"code": "hookDisabledByMember", "params": {}}'::jsonb
     WHERE disabled_reason = 'Disabled by a member of the workspace'`);
  await knex.raw(`
    UPDATE webhook_endpoints e
       SET disabled_reason_code = jsonb_build_object('code', 'hookDisabledAuto', 'params', jsonb_build_object('since', m[1], 'days', m[2]::int))
      FROM (SELECT id, regexp_match(disabled_reason, '^Disabled automatically: every delivery has failed since (\\d{4}-\\d{2}-\\d{2}) \\((\\d+) days\\)') AS m
              FROM webhook_endpoints) r
     WHERE r.id = e.id AND r.m IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_endpoints DROP COLUMN disabled_reason_code');
  await knex.raw('ALTER TABLE store_events DROP COLUMN reason_codes');
}
