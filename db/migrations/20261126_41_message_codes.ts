import type { Knex } from 'knex';

/**
 * What a page shows of a stored reason, by its code (services/shared/messages), beside the English the API
 * keeps:
 * - `store_events.reason_codes`: the codes of an event's reasons (a list of `{code, params}`); null
 *   for an event without reasons, and for events logged before (the log keeps a few days).
 * - `webhook_endpoints.disabled_reason_code`: the code of why an endpoint is disabled. Endpoints
 *   disabled before get theirs from their English reason, the two sentences the service wrote.
 * - `store_connections.write_back_error_code`: the code of the last write-back failure (the page
 *   says only that it failed for one kept before).
 * - `calls.summary_code`: the code of a summary the service wrote itself (a call that failed or went
 *   unanswered without an agent's word: "agent unreachable"…); null for an agent's or a member's
 *   own words, which are data. Calls ended before get theirs from those four fixed summaries.
 *   (Only `ended_at` fires the calls' webhook trigger: filling this column sends nothing.)
 */

/** The summaries the service wrote before they had codes, and their codes. */
const SYSTEM_SUMMARIES: Record<string, string> = {
  'agent unreachable': 'callAgentUnreachable',
  'no result from agent': 'callNoResult',
  'WhatsApp unreachable': 'callWhatsAppUnreachable',
  'no reply': 'callNoReply',
};
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE store_events ADD COLUMN reason_codes jsonb');
  await knex.raw('ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason_code jsonb');
  await knex.raw('ALTER TABLE store_connections ADD COLUMN write_back_error_code jsonb');
  await knex.raw('ALTER TABLE calls ADD COLUMN summary_code jsonb');
  for (const [summary, code] of Object.entries(SYSTEM_SUMMARIES)) {
    await knex.raw(`UPDATE calls SET summary_code = jsonb_build_object('code', ?::text, 'params', '{}'::jsonb) WHERE ended_by = 'system' AND summary = ?`, [
      code,
      summary,
    ]);
  }
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
  await knex.raw('ALTER TABLE calls DROP COLUMN summary_code');
  await knex.raw('ALTER TABLE store_connections DROP COLUMN write_back_error_code');
  await knex.raw('ALTER TABLE webhook_endpoints DROP COLUMN disabled_reason_code');
  await knex.raw('ALTER TABLE store_events DROP COLUMN reason_codes');
}
