import type { Knex } from 'knex';
import { insertJobsSql, QUEUES } from '../jobs';

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
 * insertJobsSql); test/store-write-back.test.ts compares the two column by column.
 */
export async function up(knex: Knex): Promise<void> {
  // Migration 20261126_38_01 replaces this function (its job INSERT is the same; the queue's
  // `standard` policy has no unique index for ON CONFLICT DO NOTHING to meet).
  await knex.raw(`
    CREATE FUNCTION orders_store_write_back() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.store_connection_id IS NULL OR current_setting('ocs.store_cancellation', true) = 'on' THEN RETURN NULL; END IF;
      ${insertJobsSql(
        QUEUES.storeWriteBack.name,
        'store_connections c',
        "jsonb_build_object('orderId', NEW.id, 'status', NEW.status, 'attempt', 1)",
        'NULL',
        "c.id = NEW.store_connection_id AND c.enabled AND c.write_back IS NOT NULL AND c.kind IN ('shopify', 'woocommerce')",
      )};
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
