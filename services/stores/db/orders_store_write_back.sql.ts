import { insertJobsSql, QUEUES } from '../../../db/jobs';
import { WRITE_BACK_KINDS } from '../platforms/registry';

/**
 * The current text of the write-back trigger's function (`pg_get_functiondef`), generated from the
 * registry and the one job INSERT (`insertJobsSql`): the kinds it queues a job for are the
 * platforms with `writeBack`, the one list of them. A migration applies a literal copy of it
 * (20261126_38_01_write_back_job last); a platform that starts writing back changes this text, and
 * needs a migration holding the new one (`test/stores/platform-registry.test.ts` compares it with
 * the database's).
 */
const kinds = WRITE_BACK_KINDS.map((kind) => `'${kind}'`).join(', ') || 'NULL';
const connection = `(SELECT NEW.id AS order_id, NEW.status AS status
                         FROM store_connections c
                        WHERE c.id = NEW.store_connection_id AND c.enabled AND c.write_back IS NOT NULL
                          AND c.kind IN (${kinds})) AS s`;
const job = insertJobsSql(QUEUES.storeWriteBack.name, connection, "jsonb_build_object('orderId', s.order_id, 'status', s.status, 'attempt', 1)", 'NULL');

export const definition = `CREATE OR REPLACE FUNCTION public.orders_store_write_back()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
    BEGIN
      IF NEW.store_connection_id IS NULL OR current_setting('ocs.store_cancellation', true) = 'on' THEN RETURN NULL; END IF;
      ${job};
      RETURN NULL;
    END $function$
`;
