import type { Knex } from 'knex';
import { insertJobsSql, QUEUES } from '../jobs';

/**
 * The store write-back trigger writes its job with the one job INSERT of db/jobs.ts (insertJobsSql,
 * the row pg-boss's own `send` writes) and the queue's name from QUEUES, instead of a copy of both
 * in SQL. Same rows as before: test/store-write-back.test.ts compares them with pg-boss's, column by
 * column. Like every trigger function that looks rows up, it plans with `enable_seqscan = off`.
 */
export async function up(knex: Knex): Promise<void> {
  const connection = `(SELECT NEW.id AS order_id, NEW.status AS status
                         FROM store_connections c
                        WHERE c.id = NEW.store_connection_id AND c.enabled AND c.write_back IS NOT NULL
                          AND c.kind IN ('shopify', 'woocommerce')) AS s`;
  await knex.raw(`
    CREATE OR REPLACE FUNCTION orders_store_write_back() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
    BEGIN
      IF NEW.store_connection_id IS NULL OR current_setting('ocs.store_cancellation', true) = 'on' THEN RETURN NULL; END IF;
      ${insertJobsSql(QUEUES.storeWriteBack.name, connection, "jsonb_build_object('orderId', s.order_id, 'status', s.status, 'attempt', 1)", 'NULL')};
      RETURN NULL;
    END $$`);
}

/** The function before was the same rule written out by hand: kept as it is now. */
export async function down(): Promise<void> {}
