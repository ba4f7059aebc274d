import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { Secrets } from '../../integrations/secrets';
import { newSigningSecret } from '../../integrations/signing';
import {
  ConflictError,
  NotFoundError,
  ownerOnly,
  ValidationError,
  bodyFields,
  isUuid,
  parse,
  requiredText,
  issueMessage,
  msg,
  recode,
} from '../../services/shared';
import type { FieldErrors, WorkspaceActor, Coded, Message } from '../../services/shared';
import { audit } from '../audit';
import { siteUrl } from './platforms/addresses';
import type { StoreKind } from './platforms/registry';
import { STORE_KINDS, STORE_PLATFORMS, storePlatform } from './platforms/registry';
import { sealedWriteBack, storeTarget } from './records';

export const EVENT_RESULTS = ['created', 'updated', 'cancelled', 'duplicate', 'ignored_paid', 'ignored_unchanged', 'rejected'] as const;
export type EventResult = (typeof EVENT_RESULTS)[number];
export const MAX_CONNECTIONS = 20;
/** Events a connection's log shows, newest first. */
export const EVENT_LOG_SIZE = 200;

/** A connection as every member sees it: never its signing key nor its write-back credentials. */
export interface StoreConnection {
  id: string;
  kind: StoreKind;
  name: string;
  shop: string | null;
  cod_only: boolean;
  enabled: boolean;
  /** Being connected by the platform's approval: its webhooks are not registered yet, and its intake answers 404. */
  pending: boolean;
  /** Why the connection stopped by itself: `uninstalled` (the shop removed our Shopify app); null otherwise. */
  disabled_reason: 'uninstalled' | null;
  /** `oauth` when made by the platform's approval, `manual` when keys were pasted. */
  connected_by: 'oauth' | 'manual';
  intake_url: string;
  write_back: { enabled: boolean; last_error: string | null };
  /**
   * Shopify no longer renews the connection's token (a refresh was refused): the owner approves the
   * app again (Reconnect) for write-back to work. Its orders keep arriving meanwhile.
   */
  reconnect_needed: boolean;
  /**
   * A Shopify connection made in one click that holds a non-expiring token, which Shopify refuses
   * from this day (`2027-01-01`): reconnect before it. Null otherwise.
   */
  reconnect_before: string | null;
  created_at: string;
  last_event_at: string | null;
  counts: { created: number; rejected: number };
}

export interface StoreEvent {
  received_at: string;
  topic: string;
  external_id: string | null;
  result: EventResult;
  order_id: string | null;
  reason: string | null;
}

/** An event as the connection's page shows it: its reasons by their codes (none for events logged before codes were kept). */
export type StoreEventLine = StoreEvent & { reasons: Message[] };

const FIELDS = [
  'c.id',
  'c.kind',
  'c.name',
  'c.shop',
  'c.cod_only',
  'c.enabled',
  'c.pending',
  'c.disabled_reason',
  'c.connected_by',
  'c.write_back',
  'c.write_back_error',
  'c.reconnect_needed',
  'c.created_at',
];

const secret = z
  .string({ error: msg('notText', { label: 'secret' }) })
  .trim()
  .min(1, msg('required', { label: 'secret' }))
  .max(500, msg('tooLong', { label: 'secret', max: 500 }));
/** Write-back credentials: the shape of one of the platforms that write back (the registry's). */
const writeBack = z
  .union(
    STORE_PLATFORMS.flatMap((platform) => ('writeBack' in platform ? [platform.writeBack.credentials] : [])) as unknown as [
      z.ZodType<Record<string, unknown>>,
      ...z.ZodType<Record<string, unknown>>[],
    ],
    { error: msg('wbShape') },
  )
  .nullable();
const codOnly = z.boolean({ error: msg('trueOrFalse', { label: 'cod_only' }) });

export const createSchema = z.object({
  kind: z.enum(STORE_KINDS, { error: msg('oneOf', { label: 'kind', allowed: STORE_KINDS.join(', ') }) }),
  name: requiredText('name', 120),
  shop: z.string().nullable().optional(),
  secret: secret.optional(),
  cod_only: codOnly.optional(),
  write_back: writeBack.optional(),
});
export const updateSchema = z.object({
  name: requiredText('name', 120).optional(),
  secret: secret.optional(),
  cod_only: codOnly.optional(),
  write_back: writeBack.optional(),
  enabled: z.boolean({ error: msg('trueOrFalse', { label: 'enabled' }) }).optional(),
});
type WriteBack = z.infer<typeof writeBack>;

/** The kind's rules for what `shop`, `secret` and `write_back` may be (a field error each); the shop's address as kept. */
function checkKind(kind: StoreKind, input: { shop?: string | null; secret?: string; write_back?: WriteBack }, creating: boolean): string | null {
  const platform = storePlatform(kind)!;
  const fields: FieldErrors = {};
  let shop: string | null = null;
  if (input.shop) {
    const parsed = (platform.address?.schema ?? siteUrl).safeParse(input.shop);
    if (parsed.success) shop = parsed.data;
    else fields.shop = issueMessage(parsed.error.issues[0].message, 'shop');
  }
  // Custom senders sign with a key we make (shown once); the stores sign with theirs, which only
  // WooCommerce lets the shop choose, so we make one when it is left empty.
  if (platform.signingKey === 'us' && input.secret !== undefined) fields.secret = msg('customSecret');
  if (creating && platform.signingKey === 'store' && input.secret === undefined) fields.secret = msg('secretPaste', { label: 'secret' });
  const wb = input.write_back;
  if (wb) {
    // The one place that says which kinds write back: the platform's `writeBack` (the trigger queues for any connection holding credentials).
    if (!platform.writeBack) fields.write_back = msg('wbKinds');
    else if (!platform.writeBack.credentials.safeParse(wb).success) fields.write_back = platform.writeBack.wrongCredentials();
    else if (creating && !shop) fields.shop = msg('wbNeedsShop');
  }
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  return shop;
}

function toEvent(row: {
  received_at: Date;
  topic: string;
  external_id: string | null;
  result: EventResult;
  order_id: string | null;
  reason: string | null;
}): StoreEvent {
  return {
    received_at: row.received_at.toISOString(),
    topic: row.topic,
    external_id: row.external_id,
    result: row.result,
    order_id: row.order_id,
    reason: row.reason,
  };
}

/**
 * A workspace's store connections. Every member reads them and their event log; only the owner
 * adds, changes or deletes one (DESIGN's rule for integrations: they hold the store's keys).
 */
export class StoreConnectionService {
  constructor(
    private readonly knex: Knex,
    private readonly publicBaseUrl: string,
    /** Seals the signing key and the write-back credentials before they are stored. */
    private readonly secrets: Secrets,
  ) {}

  /** Write-back credentials as stored: Shopify's token, WooCommerce's consumer key and secret sealed. */
  private stored(credentials: WriteBack): string | null {
    if (!credentials) return null;
    return JSON.stringify(sealedWriteBack(this.secrets, credentials));
  }

  // biome-ignore lint/suspicious/noExplicitAny: rows as the database returns them, read field by field into their typed form
  private toConnection(row: any): StoreConnection {
    return {
      id: row.id,
      kind: row.kind,
      name: row.name,
      shop: row.shop,
      cod_only: row.cod_only,
      enabled: row.enabled,
      pending: row.pending,
      disabled_reason: row.disabled_reason,
      connected_by: row.connected_by ?? 'manual',
      intake_url: `${this.publicBaseUrl}/hooks/stores/${row.id}`,
      write_back: { enabled: row.write_back !== null, last_error: row.write_back_error },
      reconnect_needed: row.reconnect_needed ?? false,
      reconnect_before: storePlatform(row.kind)?.reconnectBefore?.(row) ?? null,
      created_at: row.created_at.toISOString(),
      last_event_at: row.last_event_at ? row.last_event_at.toISOString() : null,
      counts: { created: row.created ?? 0, rejected: row.rejected ?? 0 },
    };
  }

  /**
   * The connections with their last 7 days' counts and their newest message (probes of the events'
   * recent index; pruning keeps each connection's newest events, so the newest is always there).
   * Intake never writes the connection's row: a flash sale's messages would queue on its lock.
   */
  private select(db: Knex | Knex.Transaction) {
    return db
      .from('store_connections as c')
      .joinRaw(
        `LEFT JOIN LATERAL (
           SELECT count(*) FILTER (WHERE e.result = 'created')::int AS created, count(*) FILTER (WHERE e.result = 'rejected')::int AS rejected
             FROM store_events e WHERE e.connection_id = c.id AND e.received_at > now() - interval '7 days') k ON true`,
      )
      .select([
        ...FIELDS,
        'k.created',
        'k.rejected',
        db.raw('(SELECT e.received_at FROM store_events e WHERE e.connection_id = c.id ORDER BY e.received_at DESC, e.id DESC LIMIT 1) AS last_event_at'),
      ]);
  }

  async list(workspaceId: string): Promise<StoreConnection[]> {
    const rows = await this.select(this.knex)
      .where('c.workspace_id', workspaceId)
      .orderBy([{ column: 'c.created_at' }, { column: 'c.id' }]);
    return rows.map((row) => this.toConnection(row));
  }

  async get(workspaceId: string, id: string, db: Knex = this.knex): Promise<StoreConnection> {
    if (!isUuid(id)) throw connectionNotFound();
    const row = await this.select(db).where({ 'c.workspace_id': workspaceId, 'c.id': id }).first();
    if (!row) throw connectionNotFound();
    return this.toConnection(row);
  }

  /** Adds a connection; the answer carries the signing key when we made it, this once. `db`: the caller's transaction, if any. */
  async create(workspace: WorkspaceActor, body: unknown, db: Knex = this.knex): Promise<StoreConnection & { secret?: string }> {
    ownerOnly(workspace);
    const input = parse(createSchema, bodyFields(body));
    const shop = checkKind(input.kind, input, true);
    const signingKey = storePlatform(input.kind)!.signingKey;
    const made = signingKey === 'us' ? newSigningSecret() : input.secret === undefined ? crypto.randomBytes(24).toString('base64url') : undefined;
    const id = await db.transaction(async (trx) => {
      // Counted under the workspace's lock: two concurrent adds cannot make a 21st.
      await trx('workspaces').where({ id: workspace.id }).forUpdate().first('id');
      const [{ n }] = await trx('store_connections').where({ workspace_id: workspace.id }).count({ n: '*' });
      if (Number(n) >= MAX_CONNECTIONS) throw new ConflictError(msg('tooManyStores', { max: MAX_CONNECTIONS }), 'TOO_MANY_STORES');
      const [row] = await trx('store_connections')
        .insert({
          workspace_id: workspace.id,
          kind: input.kind,
          name: input.name,
          shop,
          secret: this.secrets.seal(made ?? input.secret!),
          cod_only: input.cod_only ?? true,
          write_back: this.stored(input.write_back ?? null),
        })
        .returning('id');
      await audit.record(trx, { workspaceId: workspace.id, action: 'store_created', target: storeTarget(row.id, input.name), details: { kind: input.kind } });
      return row.id as string;
    });
    const connection = await this.get(workspace.id, id, db);
    return made ? { ...connection, secret: made } : connection;
  }

  async update(workspace: WorkspaceActor, id: string, body: unknown): Promise<StoreConnection> {
    ownerOnly(workspace);
    const input = parse(updateSchema, bodyFields(body));
    const current = await this.get(workspace.id, id);
    checkKind(current.kind, input, false);
    if (input.write_back && !current.shop) throw new ValidationError({ write_back: msg('wbAddAgain') });
    const patch: Record<string, unknown> = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.secret !== undefined) patch.secret = this.secrets.seal(input.secret);
    if (input.cod_only !== undefined) patch.cod_only = input.cod_only;
    if (input.enabled !== undefined) {
      // A connection being set up is enabled by its approval alone, once its webhooks are registered.
      if (current.pending) throw new ConflictError(msg('STORE_PENDING'), 'STORE_PENDING');
      patch.enabled = input.enabled;
      if (input.enabled) patch.disabled_reason = null;
    }
    // New credentials start without the old ones' error.
    if (input.write_back !== undefined) Object.assign(patch, { write_back: this.stored(input.write_back), write_back_error: null, reconnect_needed: false });
    if (Object.keys(patch).length > 0)
      await this.knex.transaction(async (trx) => {
        await trx('store_connections').where({ workspace_id: workspace.id, id }).update(patch);
        const changed = Object.keys(patch).filter((field) => !['disabled_reason', 'write_back_error', 'reconnect_needed'].includes(field));
        await audit.record(trx, {
          workspaceId: workspace.id,
          action: 'store_edited',
          target: storeTarget(id, input.name ?? current.name),
          details: { changed },
        });
      });
    return this.get(workspace.id, id);
  }

  /** Deletes the connection and its log; its orders stay, still naming it. */
  async remove(workspace: WorkspaceActor, id: string): Promise<void> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw connectionNotFound();
    await this.knex.transaction(async (trx) => {
      const [row] = await trx('store_connections').where({ workspace_id: workspace.id, id }).delete(['id', 'name', 'kind']);
      if (!row) throw connectionNotFound();
      await audit.record(trx, { workspaceId: workspace.id, action: 'store_deleted', target: storeTarget(row.id, row.name), details: { kind: row.kind } });
    });
  }

  /**
   * Deletes what no one can see any more: events older than the 7 days the counts cover and past
   * each connection's newest EVENT_LOG_SIZE. A store's late retry of a pruned delivery still finds
   * its order by (connection, external_id): it is ignored_unchanged, never a second order.
   */
  async prune(): Promise<number> {
    const { rowCount } = await this.knex.raw(
      `DELETE FROM store_events e
        WHERE e.received_at < now() - interval '7 days'
          AND e.id NOT IN (SELECT k.id FROM store_events k WHERE k.connection_id = e.connection_id ORDER BY k.received_at DESC, k.id DESC LIMIT ?)`,
      [EVENT_LOG_SIZE],
    );
    return rowCount ?? 0;
  }

  /** Why the last write-back failed, by its code, as the connection's page shows it (null when the last one worked). */
  async writeBackError(workspaceId: string, id: string): Promise<Message | null> {
    const row = await this.knex('store_connections').where({ workspace_id: workspaceId, id }).first('write_back_error', 'write_back_error_code');
    if (!row?.write_back_error) return null;
    return row.write_back_error_code ? recode(row.write_back_error_code) : msg('wbFailedBefore');
  }

  /** The connection's latest events, as the API gives them. */
  async events(workspaceId: string, id: string): Promise<StoreEvent[]> {
    return (await this.eventLog(workspaceId, id)).map(({ reasons: _reasons, ...event }) => event);
  }

  /** The connection's latest events with their reasons by code, as its page shows them. */
  async eventLog(workspaceId: string, id: string): Promise<StoreEventLine[]> {
    await this.get(workspaceId, id);
    const rows = await this.knex('store_events')
      .where({ connection_id: id })
      .orderBy([
        { column: 'received_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(EVENT_LOG_SIZE)
      .select('received_at', 'topic', 'external_id', 'result', 'order_id', 'reason', 'reason_codes');
    return rows.map((row) => ({ ...toEvent(row), reasons: ((row.reason_codes ?? []) as Coded[]).map(recode) }));
  }
}

function connectionNotFound(): NotFoundError {
  return new NotFoundError(msg('storeNotFound'));
}
