/**
 * WebhookService: a workspace's endpoints (list, create, change, delete, their secret, a test
 * message, a resend) and their delivery log, and the worker's entry points (drain, prune).
 */
import type { Knex } from 'knex';
import type { Secrets } from '../../integrations/secrets';
import type { Jobs } from '../../db/jobs';
import { newSigningSecret } from '../../integrations/signing';
import type { UrlPolicy } from '../../integrations/url-guard';
import { audit } from '../audit';
import { ConflictError, ownerOnly, bodyFields, isUuid, msg, recode } from '../../services/shared';
import type { WorkspaceActor, Message } from '../../services/shared';
import type { Endpoint } from './endpoints';
import {
  createSchema,
  disabledFor,
  ENDPOINT_FIELDS,
  endpointNotFound,
  endpointRow,
  MAX_ENDPOINTS,
  toEndpoint,
  updateSchema,
  validateEndpoint,
  WEBHOOK_EVENTS,
} from './endpoints';
import type { Send } from './delivery';
import { DeliveryWorker, dropPending, queueDelivery } from './delivery';
import type { Delivery } from './log';
import { deliveryErrors, deliveryNotFound, listDeliveries, LOG_SIZE, pruneLog } from './log';

/**
 * A workspace's webhook endpoints, and the delivery of what the triggers record for them. Every
 * member reads the endpoints and their deliveries; only the owner changes them, sends to them or
 * reads their secret (the functions that take the caller's role).
 */
export class WebhookService {
  /** The worker's side: the drains of endpoints' due deliveries. */
  private readonly worker: DeliveryWorker;

  constructor(
    private readonly knex: Knex,
    private readonly jobs: Jobs,
    private readonly urlPolicy: UrlPolicy,
    /** Seals the endpoints' signing secrets before they are stored; opens them as they are read. */
    private readonly secrets: Secrets,
  ) {
    this.worker = new DeliveryWorker(knex, jobs, secrets);
  }

  async list(workspaceId: string): Promise<Endpoint[]> {
    const rows = await this.knex('webhook_endpoints')
      .where({ workspace_id: workspaceId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(ENDPOINT_FIELDS);
    return rows.map(toEndpoint);
  }

  async get(workspaceId: string, id: string): Promise<Endpoint> {
    return toEndpoint(await endpointRow(this.knex, workspaceId, id));
  }

  /** Why an endpoint is disabled, by its code, as its page shows it (null while it is enabled). */
  async disabledReason(workspaceId: string, id: string): Promise<Message | null> {
    const row = await this.knex('webhook_endpoints').where({ workspace_id: workspaceId, id }).first('enabled', 'disabled_reason_code');
    return row && !row.enabled && row.disabled_reason_code ? recode(row.disabled_reason_code) : null;
  }

  /** The endpoint's signing secret (the dashboard shows it; the API only in the 201 and rotate answers). */
  async secret(workspace: WorkspaceActor, id: string): Promise<string> {
    ownerOnly(workspace);
    return this.secrets.open((await endpointRow(this.knex, workspace.id, id)).secret);
  }

  async create(workspace: WorkspaceActor, body: unknown, db: Knex = this.knex): Promise<Endpoint & { secret: string }> {
    ownerOnly(workspace);
    const workspaceId = workspace.id;
    const source = bodyFields(body);
    const [url, input] = await validateEndpoint(source, createSchema, true, this.urlPolicy);
    return db.transaction(async (trx) => {
      // Counted under the workspace's lock: two concurrent creates cannot make an eleventh.
      await trx('workspaces').where({ id: workspaceId }).forUpdate().first('id');
      const [{ n }] = await trx('webhook_endpoints').where({ workspace_id: workspaceId }).count({ n: '*' });
      if (Number(n) >= MAX_ENDPOINTS) throw new ConflictError(msg('TOO_MANY_WEBHOOKS'), 'TOO_MANY_WEBHOOKS');
      const [row] = await trx('webhook_endpoints')
        .insert({
          workspace_id: workspaceId,
          url,
          events: input.events ?? [...WEBHOOK_EVENTS],
          description: input.description ?? null,
          secret: this.secrets.seal(newSigningSecret()),
        })
        .returning([...ENDPOINT_FIELDS, 'secret']);
      await audit.record(trx, { workspaceId, action: 'webhook_created', target: endpointTarget(row), details: { events: row.events } });
      return { ...toEndpoint(row), secret: this.secrets.open(row.secret) };
    });
  }

  async update(workspace: WorkspaceActor, id: string, body: unknown): Promise<Endpoint> {
    ownerOnly(workspace);
    const workspaceId = workspace.id;
    const source = bodyFields(body);
    const [url, input] = await validateEndpoint(source, updateSchema, false, this.urlPolicy);
    return this.knex.transaction(async (trx) => {
      const current = await endpointRow(trx, workspaceId, id, true);
      const patch: Record<string, unknown> = {};
      if (url !== undefined) patch.url = url;
      if (input.events !== undefined) patch.events = input.events;
      if (input.description !== undefined) patch.description = input.description;
      if (input.enabled === false && current.enabled) Object.assign(patch, disabledFor(msg('hookDisabledByMember')));
      // Enabled again: only events from now on are sent; the count of failing days starts afresh.
      if (input.enabled === true && !current.enabled)
        Object.assign(patch, { enabled: true, disabled_reason: null, disabled_reason_code: null, failing_since: null });
      if (input.enabled === false) await dropPending(trx, id, msg('hookDroppedByMember'));
      if (Object.keys(patch).length === 0) return toEndpoint(current);
      const [row] = await trx('webhook_endpoints').where({ id }).update(patch).returning(ENDPOINT_FIELDS);
      const changed = Object.keys(patch).filter((field) => !field.startsWith('disabled_') && field !== 'failing_since');
      await audit.record(trx, { workspaceId, action: 'webhook_edited', target: endpointTarget(row), details: { changed } });
      return toEndpoint(row);
    });
  }

  /** Deletes the endpoint; its pending deliveries go with it. */
  async remove(workspace: WorkspaceActor, id: string): Promise<void> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw endpointNotFound();
    await this.knex.transaction(async (trx) => {
      const [row] = await trx('webhook_endpoints').where({ workspace_id: workspace.id, id }).delete(['id', 'url']);
      if (!row) throw endpointNotFound();
      await audit.record(trx, { workspaceId: workspace.id, action: 'webhook_deleted', target: endpointTarget(row) });
    });
  }

  async rotateSecret(workspace: WorkspaceActor, id: string): Promise<Endpoint & { secret: string }> {
    ownerOnly(workspace);
    return this.knex.transaction(async (trx) => {
      await endpointRow(trx, workspace.id, id, true);
      const [row] = await trx('webhook_endpoints')
        .where({ workspace_id: workspace.id, id })
        .update({ secret: this.secrets.seal(newSigningSecret()) })
        .returning([...ENDPOINT_FIELDS, 'secret']);
      await audit.record(trx, { workspaceId: workspace.id, action: 'webhook_secret_rotated', target: endpointTarget(row) });
      return { ...toEndpoint(row), secret: this.secrets.open(row.secret) };
    });
  }

  /** A `webhook.test` to this endpoint alone. */
  async sendTest(workspace: WorkspaceActor, id: string): Promise<Delivery> {
    ownerOnly(workspace);
    const workspaceId = workspace.id;
    return this.knex.transaction(async (trx) => {
      const endpoint = await endpointRow(trx, workspaceId, id);
      if (!endpoint.enabled) throw new ConflictError(msg('WEBHOOK_DISABLED'), 'WEBHOOK_DISABLED');
      const [message] = await trx('webhook_messages').insert({ workspace_id: workspaceId, event_type: 'webhook.test', data: {} }).returning('id');
      return queueDelivery(trx, this.jobs, workspaceId, id, message.id);
    });
  }

  /** The endpoint's last deliveries, newest first. */
  async deliveries(workspaceId: string, id: string, limit = LOG_SIZE): Promise<Delivery[]> {
    await endpointRow(this.knex, workspaceId, id);
    return listDeliveries(this.knex, id, limit);
  }

  /** Why each of the endpoint's last deliveries failed, by its code, for the page (a reason kept before codes: its English, as data). */
  async deliveryErrors(workspaceId: string, id: string, limit = LOG_SIZE): Promise<Map<string, Message>> {
    await endpointRow(this.knex, workspaceId, id);
    return deliveryErrors(this.knex, id, limit);
  }

  /** Sends a delivered or failed message to the endpoint again, with the same `webhook-id`. */
  async resend(workspace: WorkspaceActor, id: string, deliveryId: string): Promise<Delivery> {
    ownerOnly(workspace);
    const workspaceId = workspace.id;
    if (!isUuid(deliveryId)) throw deliveryNotFound();
    return this.knex.transaction(async (trx) => {
      const endpoint = await endpointRow(trx, workspaceId, id);
      const delivery = await trx('webhook_deliveries').where({ id: deliveryId, endpoint_id: id, workspace_id: workspaceId }).first('message_id');
      if (!delivery) throw deliveryNotFound();
      if (!endpoint.enabled) throw new ConflictError(msg('WEBHOOK_DISABLED'), 'WEBHOOK_DISABLED');
      return queueDelivery(trx, this.jobs, workspaceId, id, delivery.message_id);
    });
  }

  // ---- delivery (the worker, see delivery.ts) ----------------------------------------------

  /** Endpoints with a delivery due now: each gets a drain job (one at a time per endpoint). */
  async queueDueDrains(): Promise<number> {
    return this.worker.queueDueDrains();
  }

  /** Sends an endpoint's due deliveries for a while, a batch at a time (DeliveryWorker.drain says how). */
  async drain(endpointId: string, send: Send): Promise<{ sent: number; failed: number }> {
    return this.worker.drain(endpointId, send);
  }

  /** Settled deliveries beyond each endpoint's last LOG_SIZE, and messages no delivery needs any more. */
  async prune(): Promise<number> {
    return pruneLog(this.knex);
  }
}

/** An endpoint as the audit log names it: its address without what may be a credential (user, password, query). */
function endpointTarget(row: { id: string; url: string }) {
  const url = URL.canParse(row.url) ? new URL(row.url) : null;
  return { type: 'webhook' as const, id: row.id, label: url ? `${url.protocol}//${url.host}${url.pathname}` : row.url };
}
