import type { Knex } from 'knex';

/**
 * The store write-back trigger writes its job with the one job INSERT of db/jobs.ts (insertJobsSql,
 * the row pg-boss's own `send` writes) and the queue's name from QUEUES, as they gave it then (copied
 * here: a migration means the same forever). Same rows as before: test/stores/write-back.test.ts compares them with pg-boss's, column by
 * column. Like every trigger function that looks rows up, it plans with `enable_seqscan = off`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION orders_store_write_back() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
    BEGIN
      IF NEW.store_connection_id IS NULL OR current_setting('ocs.store_cancellation', true) = 'on' THEN RETURN NULL; END IF;
      INSERT INTO pgboss.job (id, name, data, priority, start_after, singleton_key, singleton_on, dead_letter,
                                 expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy)
     SELECT gen_random_uuid(), q.name, jsonb_build_object('orderId', s.order_id, 'status', s.status, 'attempt', 1), 0, now(), NULL, NULL, q.dead_letter,
            COALESCE(q.expire_seconds * interval '1s', interval '15 minutes'),
            now() + CAST(COALESCE((q.retention_minutes * 60)::text, '14 days') AS interval),
            COALESCE(q.retry_limit, 2),
            CASE WHEN COALESCE(q.retry_backoff, false) THEN GREATEST(q.retry_delay, 1) ELSE COALESCE(q.retry_delay, 0) END,
            COALESCE(q.retry_backoff, false),
            q.policy
       FROM (SELECT NEW.id AS order_id, NEW.status AS status
                         FROM store_connections c
                        WHERE c.id = NEW.store_connection_id AND c.enabled AND c.write_back IS NOT NULL
                          AND c.kind IN ('shopify', 'woocommerce')) AS s JOIN pgboss.queue q ON q.name = 'store-write-back'
     ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`);
}

/** The function before was the same rule written out by hand: kept as it is now. */
export async function down(): Promise<void> {}
