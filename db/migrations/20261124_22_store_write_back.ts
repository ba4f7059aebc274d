import type { Knex } from 'knex';

/**
 * Writing the outcome back to the store. When an order of a connection
 * with write-back credentials reaches `confirmed` or `unconfirmed`, a `store-write-back` job is
 * written by a trigger in the transaction of the change itself, whatever path made it (the
 * confirmation loop, a person on a page, /api or the Data API): a change that rolls back enqueues
 * nothing, one that commits is never forgotten. The worker reads the credentials when it sends, so
 * the job carries none.
 *
 * A cancellation the store sent us (services/stores/intake.ts sets `ocs.store_cancellation` for its
 * transaction) is not told back to the store that made it. Orders created final (a blocked number)
 * reached no outcome by a call or a person: the trigger watches updates only.
 *
 * The job row is the one pg-boss 10's `send` writes with the queue's settings (db/jobs.ts
 * insertJobsSql gave it, copied here); test/stores/write-back.test.ts compares the two column by column.
 */
export async function up(knex: Knex): Promise<void> {
  // Migration 20261126_38_01 replaces this function (its job INSERT is the same; the queue's
  // `standard` policy has no unique index for ON CONFLICT DO NOTHING to meet).
  await knex.raw(`
    CREATE FUNCTION orders_store_write_back() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.store_connection_id IS NULL OR current_setting('ocs.store_cancellation', true) = 'on' THEN RETURN NULL; END IF;
      INSERT INTO pgboss.job (id, name, data, priority, start_after, singleton_key, singleton_on, dead_letter,
                                 expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy)
     SELECT gen_random_uuid(), q.name, jsonb_build_object('orderId', NEW.id, 'status', NEW.status, 'attempt', 1), 0, now(), NULL, NULL, q.dead_letter,
            COALESCE(q.expire_seconds * interval '1s', interval '15 minutes'),
            now() + CAST(COALESCE((q.retention_minutes * 60)::text, '14 days') AS interval),
            COALESCE(q.retry_limit, 2),
            CASE WHEN COALESCE(q.retry_backoff, false) THEN GREATEST(q.retry_delay, 1) ELSE COALESCE(q.retry_delay, 0) END,
            COALESCE(q.retry_backoff, false),
            q.policy
       FROM store_connections c JOIN pgboss.queue q ON q.name = 'store-write-back'
      WHERE c.id = NEW.store_connection_id AND c.enabled AND c.write_back IS NOT NULL AND c.kind IN ('shopify', 'woocommerce')
     ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`);
  // Most status changes reach no outcome: the WHEN clause skips them without a call. It names no
  // store column, so migration 20261124_20 can still be undone alone.
  await knex.raw(`
    CREATE TRIGGER orders_store_write_back AFTER UPDATE OF status ON orders FOR EACH ROW
      WHEN (NEW.status IN ('confirmed', 'unconfirmed') AND OLD.status IS DISTINCT FROM NEW.status)
      EXECUTE FUNCTION orders_store_write_back()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER orders_store_write_back ON orders');
  await knex.raw('DROP FUNCTION orders_store_write_back()');
}
