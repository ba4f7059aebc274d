import type { Knex } from 'knex';

/**
 * `webhook_deliveries.last_error_code`: why a delivery's last try failed, by its code
 * (services/shared/messages), beside the English `last_error` the API keeps — the service's own words
 * ("endpoint disabled", "timed out", "HTTP 500"…) reach a page in its language; what the endpoint
 * answered stays data inside it. Deliveries that failed before get theirs from the fixed words the
 * service wrote; any other keeps a null code and the page shows its English as data.
 */

/** The fixed reasons the service wrote before they had codes, and their codes. */
const FIXED_REASONS: Record<string, string> = {
  'endpoint disabled': 'hookDroppedByMember',
  'invalid URL': 'hookErrInvalidUrl',
  'timed out': 'hookErrTimedOut',
  'connection refused': 'hookErrConnectionRefused',
  'connection closed': 'hookErrConnectionClosed',
  'connection failed': 'hookErrConnectionFailed',
  'host unreachable': 'hookErrHostUnreachable',
  'address not allowed': 'hookErrAddressNotAllowed',
  'DNS lookup timed out': 'hookErrDnsTimedOut',
  'host not found': 'hookErrHostNotFound',
  'DNS lookup failed': 'hookErrDnsFailed',
};

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_deliveries ADD COLUMN last_error_code jsonb');
  for (const [reason, code] of Object.entries(FIXED_REASONS)) {
    await knex.raw(`UPDATE webhook_deliveries SET last_error_code = jsonb_build_object('code', ?::text, 'params', '{}'::jsonb) WHERE last_error = ?`, [
      code,
      reason,
    ]);
  }
  await knex.raw(`
    UPDATE webhook_deliveries
       SET last_error_code = '{"code": "hookDroppedAuto", "params": {"days": 5}}'::jsonb
     WHERE last_error = 'endpoint disabled after 5 days of failures'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_deliveries DROP COLUMN last_error_code');
}
