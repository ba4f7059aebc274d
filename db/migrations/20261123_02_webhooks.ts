import type { Knex } from 'knex';

/**
 * Outbound webhooks (docs/webhooks.md). Events are written by triggers in the transaction of the
 * change itself, whatever path made it (a page, /api, the Data API, an import, the confirmation
 * loop): a change that rolls back writes nothing, one that commits is never lost. The worker sends.
 */
/** An order as GET /api/orders/:id shows it: its row and the id of its latest operation. */
const WEBHOOK_ORDER = `
  CREATE OR REPLACE FUNCTION webhook_order(o orders) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
      'id', o.id,
      'workspace_id', o.workspace_id,
      'client_name', o.client_name,
      'phone', o.phone,
      'store_name', o.store_name,
      'products_name', o.products_name,
      'address', o.address,
      'status', o.status,
      'created_at', o.created_at,
      'operation_id', (SELECT id FROM operations WHERE order_id = o.id ORDER BY created_at DESC, id DESC LIMIT 1))
  $$`;

/** order.created, order.updated (naming the fields that changed, in this order), order.deleted. */
const ORDERS_WEBHOOK_EVENTS = `
    CREATE OR REPLACE FUNCTION orders_webhook_events() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE changed text[];
    BEGIN
      -- Most workspaces have no endpoint: one index probe, nothing built.
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace_id ELSE NEW.workspace_id END) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        PERFORM webhook_event(NEW.workspace_id, 'order.created', jsonb_build_object('order', webhook_order(NEW)));
      ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(name ORDER BY position) INTO changed FROM (VALUES
          (1, 'client_name', NEW.client_name IS DISTINCT FROM OLD.client_name),
          (2, 'phone', NEW.phone IS DISTINCT FROM OLD.phone),
          (3, 'store_name', NEW.store_name IS DISTINCT FROM OLD.store_name),
          (4, 'products_name', NEW.products_name IS DISTINCT FROM OLD.products_name),
          (5, 'address', NEW.address IS DISTINCT FROM OLD.address),
          (6, 'status', NEW.status IS DISTINCT FROM OLD.status)) AS f(position, name, differs)
        WHERE differs;
        IF changed IS NOT NULL THEN
          PERFORM webhook_event(NEW.workspace_id, 'order.updated',
            jsonb_build_object('order', webhook_order(NEW), 'previous_status', OLD.status, 'changed_fields', to_jsonb(changed)));
        END IF;
      ELSE
        PERFORM webhook_event(OLD.workspace_id, 'order.deleted', jsonb_build_object('order', webhook_order(OLD)));
        RETURN OLD;
      END IF;
      RETURN NULL;
    END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.specificType('events', 'text[]').notNullable();
    t.text('description');
    t.text('secret').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('disabled_reason');
    // The first failure of the current run of failures; a success clears it.
    t.timestamp('failing_since', { useTz: true });
    // A drain of this endpoint holds it until then: one drain at a time, and a crashed one lets go.
    t.timestamp('draining_until', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });

  await knex.schema.createTable('webhook_messages', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    // The `webhook-id`: the same on every try and on a resend.
    t.text('message_id').notNullable().unique().defaultTo(knex.raw("'msg_' || replace(gen_random_uuid()::text, '-', '')"));
    t.text('event_type').notNullable();
    // What the payload's `data` is made from (rows as they were when the change committed).
    t.jsonb('data').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.uuid('message_id').notNullable().references('webhook_messages.id').onDelete('CASCADE');
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('last_status_code');
    t.text('last_error');
    t.timestamp('next_attempt_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('delivered_at', { useTz: true });
    t.check("status IN ('pending', 'succeeded', 'failed')", [], 'webhook_deliveries_status_check');
    t.index(['endpoint_id', 'created_at']);
    t.index(['message_id']);
  });
  await knex.raw("CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'");

  // One message per event, and a delivery to each enabled endpoint of the workspace that asked for it.
  await knex.raw(`
    CREATE FUNCTION webhook_event(workspace uuid, event_type text, data jsonb) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE message uuid;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = workspace AND enabled AND event_type = ANY(events)) THEN
        RETURN;
      END IF;
      INSERT INTO webhook_messages (workspace_id, event_type, data) VALUES (workspace, event_type, data) RETURNING id INTO message;
      INSERT INTO webhook_deliveries (workspace_id, endpoint_id, message_id, next_attempt_at)
        SELECT workspace, id, message, now() FROM webhook_endpoints WHERE workspace_id = workspace AND enabled AND event_type = ANY(events);
    END $$`);

  // A later migration replaces it (20261124_20, and 20261201_56_02 last).
  await knex.raw(WEBHOOK_ORDER);

  // Created and updated: at commit (deferred), when the order's operation exists and every change
  // of the transaction is in the row. Deleted: before the row goes, while its operation is still there.
  // A later migration replaces the function (20261124_20, and 20261126_44_01 last).
  await knex.raw(ORDERS_WEBHOOK_EVENTS);
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER orders_webhook_changes AFTER INSERT OR UPDATE ON orders
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION orders_webhook_events()`);
  await knex.raw('CREATE TRIGGER orders_webhook_deleted BEFORE DELETE ON orders FOR EACH ROW EXECUTE FUNCTION orders_webhook_events()');

  // call.ended: when a call gets its outcome (an expired claim is dropped, never ended).
  await knex.raw(`
    CREATE FUNCTION calls_webhook_events() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE o orders;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND workspace_id = NEW.workspace_id) THEN RETURN NULL; END IF;
      SELECT orders.* INTO o FROM orders JOIN operations op ON op.order_id = orders.id WHERE op.id = NEW.operation_id;
      IF FOUND THEN
        PERFORM webhook_event(NEW.workspace_id, 'call.ended', jsonb_build_object('order', webhook_order(o), 'call', to_jsonb(NEW)));
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER calls_webhook_ended AFTER UPDATE OF ended_at ON calls
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
      WHEN (OLD.ended_at IS NULL AND NEW.ended_at IS NOT NULL)
      EXECUTE FUNCTION calls_webhook_events()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER calls_webhook_ended ON calls');
  await knex.raw('DROP FUNCTION calls_webhook_events()');
  await knex.raw('DROP TRIGGER orders_webhook_deleted ON orders');
  await knex.raw('DROP TRIGGER orders_webhook_changes ON orders');
  await knex.raw('DROP FUNCTION orders_webhook_events()');
  await knex.raw('DROP FUNCTION webhook_order(orders)');
  await knex.raw('DROP FUNCTION webhook_event(uuid, text, jsonb)');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_messages');
  await knex.schema.dropTable('webhook_endpoints');
}
