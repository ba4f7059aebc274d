import type { Knex } from 'knex';
import { SECRET_COLUMNS } from '../../db/secrets-at-rest';
import type { Secrets } from '../../integrations/secrets';
import { z } from 'zod';
import type { UrlPolicy } from '../../integrations/url-guard';
import { newSigningSecret } from '../../integrations/signing';
import { NotFoundError, ownerOnly, ValidationError, bodyFields, camelOrSnake, isUuid, parse, requiredText, validEndpointUrl, msg } from '../../services/shared';
import type { FieldErrors, WorkspaceActor } from '../../services/shared';
import { audit } from '../audit';
import { checkLadder } from '../calls';
import type { WhatsAppAgentFields } from '../whatsapp';
import { namesWhatsAppField, readWhatsAppRows, WHATSAPP_COLUMNS, whatsappFields, whatsappInput, whatsappRow } from '../whatsapp';

export const AGENT_KINDS = ['human', 'voice', 'whatsapp'] as const;
type AgentKind = (typeof AGENT_KINDS)[number];

export interface Agent extends Partial<WhatsAppAgentFields> {
  id: string;
  name: string;
  kind: AgentKind;
  is_order_handler: boolean;
  endpoint_url: string | null;
  /** The agent that takes an order over when this one's operation ends without an answer (the ladder). */
  fallback_agent_id: string | null;
  created_at: string;
  /** Only in the answers that reveal it (creation, rotation). */
  secret?: string;
  /** A WhatsApp agent's webhook verify token: in its creation's answer and on its page. */
  verify_token?: string;
}

const name = requiredText('Name', 200);
const orderHandler = z.boolean({ error: msg('trueOrFalse', { label: 'orderHandler' }) }).optional();
const kind = z.enum(AGENT_KINDS, { error: msg('agentKind') }).optional();
export const createSchema = z.object({ name, orderHandler, kind });
export const editSchema = z.object({ name: name.optional(), orderHandler });

/** The agent fields of a JSON body, camelCase or snake_case (camelCase wins). */
function agentInput(body: unknown) {
  const source = bodyFields(body);
  return {
    name: Object.hasOwn(source, 'name') ? source.name : undefined,
    orderHandler: camelOrSnake(source, 'orderHandler', 'order_handler'),
    kind: Object.hasOwn(source, 'kind') ? source.kind : undefined,
    endpointUrl: camelOrSnake(source, 'endpointUrl', 'endpoint_url'),
    fallbackAgentId: camelOrSnake(source, 'fallbackAgentId', 'fallback_agent_id'),
    whatsapp: whatsappInput(source),
  };
}

/** A fallback named in a body: null or '' clears it; anything but text is refused. */
function fallbackOf(value: unknown): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  if (typeof value !== 'string') throw new ValidationError({ fallbackAgentId: msg('ladderOther') });
  return value;
}

/** The WhatsApp connection's columns sealed at rest (db/secrets-at-rest.ts). */
const WHATSAPP_SECRETS = SECRET_COLUMNS.whatsapp_agents.text;

const AGENT_FIELDS = ['id', 'name', 'kind', 'is_order_handler', 'endpoint_url', 'fallback_agent_id', 'created_at'];

type AgentRow = Omit<Agent, 'created_at' | 'secret' | keyof WhatsAppAgentFields> & { created_at: Date; secret?: string | null };

function toAgent(row: AgentRow, withSecret = false, whatsapp?: WhatsAppAgentFields): Agent {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    is_order_handler: row.is_order_handler,
    endpoint_url: row.endpoint_url ?? null,
    fallback_agent_id: row.fallback_agent_id ?? null,
    ...(whatsapp ?? {}),
    created_at: row.created_at.toISOString(),
    ...(withSecret && row.secret ? { secret: row.secret } : {}),
  };
}

/**
 * Agents of one workspace; at most one of them is the order handler. Every member works with the
 * human agents; a voice or WhatsApp agent (its endpoint, its secrets) is the owner's: creating,
 * editing, rotating or reading its secret takes the caller's role. Any agent may name a fallback
 * (services/calls/ladder.ts); a WhatsApp agent must, since someone has to read the customers' replies.
 */
export class AgentService {
  constructor(
    private readonly knex: Knex,
    private readonly urlPolicy: UrlPolicy,
    private readonly publicBaseUrl: string,
    /** Seals the voice agents' signing secrets and the WhatsApp agents' tokens before they are stored; opens them as they are read. */
    private readonly secrets: Secrets,
  ) {}

  /** A row as read, its voice signing secret opened. */
  private opened<T extends { secret?: string | null }>(row: T): T {
    return this.secrets.openFields(row, ['secret']);
  }

  /** A WhatsApp connection's row about to be written, its tokens sealed. */
  private sealedWhatsApp(row: Record<string, unknown>): Record<string, unknown> {
    return this.secrets.sealFields(row, WHATSAPP_SECRETS);
  }

  async get(workspaceId: string, id: string): Promise<Agent> {
    if (!isUuid(id)) throw agentNotFound();
    const row = await this.knex('agents').where({ id, workspace_id: workspaceId }).first(AGENT_FIELDS);
    if (!row) throw agentNotFound();
    return (await this.withWhatsApp(this.knex, [row]))[0];
  }

  /** A voice agent's signing secret, for the workspace's owner (the agent's page). */
  async secret(workspace: WorkspaceActor, id: string): Promise<string> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw agentNotFound();
    const row = await this.knex('agents').where({ id, workspace_id: workspace.id, kind: 'voice' }).first('secret');
    if (!row) throw agentNotFound();
    return this.secrets.open(row.secret);
  }

  /** A WhatsApp agent's webhook verify token, for the workspace's owner (the agent's page and its guide). */
  async verifyToken(workspace: WorkspaceActor, id: string): Promise<string> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw agentNotFound();
    const row = await this.knex('agents as a')
      .join('whatsapp_agents as w', 'w.agent_id', 'a.id')
      .where({ 'a.id': id, 'a.workspace_id': workspace.id })
      .first('w.verify_token');
    if (!row) throw agentNotFound();
    return this.secrets.open(row.verify_token);
  }

  /** A new signing secret for a voice agent; the old one stops working at once. */
  async rotateSecret(workspace: WorkspaceActor, id: string): Promise<Agent> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw agentNotFound();
    return this.knex.transaction(async (trx) => {
      const [row] = await trx('agents')
        .where({ id, workspace_id: workspace.id, kind: 'voice' })
        .update({ secret: this.secrets.seal(newSigningSecret()) })
        .returning([...AGENT_FIELDS, 'secret']);
      if (!row) throw agentNotFound();
      await audit.record(trx, { workspaceId: workspace.id, action: 'agent_secret_rotated', target: agentTarget(row) });
      return toAgent(this.opened(row), true);
    });
  }

  async list(workspaceId: string): Promise<Agent[]> {
    const rows = await this.knex('agents')
      .where({ workspace_id: workspaceId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(AGENT_FIELDS);
    return this.withWhatsApp(this.knex, rows);
  }

  async create(workspace: WorkspaceActor, body: unknown, db: Knex = this.knex): Promise<Agent> {
    const input = agentInput(body);
    if (input.kind === 'voice' || input.kind === 'whatsapp') ownerOnly(workspace);
    const workspaceId = workspace.id;
    const fields: FieldErrors = {};
    let data: z.infer<typeof createSchema> | undefined;
    try {
      data = parse(createSchema, input);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(fields, err.messages());
    }
    const agentKind = data?.kind ?? input.kind;
    const isVoice = agentKind === 'voice';
    let endpointUrl: string | null = null;
    if (isVoice) {
      try {
        endpointUrl = await validEndpointUrl(input.endpointUrl, 'endpointUrl', this.urlPolicy);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        Object.assign(fields, err.messages());
      }
    } else if (input.endpointUrl !== undefined && input.endpointUrl !== null) {
      fields.endpointUrl = msg('onlyVoice', { label: 'endpointUrl' });
    }
    let fallbackId: string | null = null;
    try {
      fallbackId = fallbackOf(input.fallbackAgentId) ?? null;
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(fields, err.messages());
    }
    let whatsapp: Record<string, unknown> | undefined;
    if (agentKind === 'whatsapp') {
      whatsapp = whatsappRow(input.whatsapp, true, fields);
      if (!fallbackId) fields.fallbackAgentId ??= msg('ladderWhatsApp');
    } else {
      const named = namesWhatsAppField(input.whatsapp);
      if (named) fields[named] = msg('onlyWhatsApp', { label: named });
    }
    if (Object.keys(fields).length > 0 || !data) throw new ValidationError(fields);
    const row = {
      workspace_id: workspaceId,
      name: data.name,
      is_order_handler: data.orderHandler ?? false,
      kind: data.kind ?? 'human',
      endpoint_url: endpointUrl,
      fallback_agent_id: fallbackId,
      secret: isVoice ? this.secrets.seal(newSigningSecret()) : null,
    };
    return db.transaction(async (trx) => {
      await this.lockWorkspace(trx, workspaceId);
      await checkLadder(trx, workspaceId, undefined, fallbackId);
      if (data.orderHandler) await this.releaseHandler(trx, workspaceId);
      const [created] = await trx('agents')
        .insert(row)
        .returning([...AGENT_FIELDS, 'secret']);
      // Voice and WhatsApp agents hold credentials (a signing secret, Meta's token): their changes are audited.
      if (created.kind !== 'human')
        await audit.record(trx, { workspaceId, action: 'agent_created', target: agentTarget(created), details: { kind: created.kind } });
      if (!whatsapp) return toAgent(this.opened(created), true);
      const [connection] = await trx('whatsapp_agents')
        .insert({ ...this.sealedWhatsApp(whatsapp), agent_id: created.id })
        .returning(WHATSAPP_COLUMNS);
      return {
        ...toAgent(created, true, whatsappFields(connection, this.publicBaseUrl, created.id)),
        verify_token: this.secrets.open(connection.verify_token),
      };
    });
  }

  /** Edits every field but the kind; making this agent the handler unsets the previous one. */
  async update(workspace: WorkspaceActor, id: string, body: unknown): Promise<Agent> {
    const workspaceId = workspace.id;
    const current = await this.get(workspaceId, id);
    // An agent's kind never changes, so this check cannot go stale before the update.
    if (current.kind !== 'human') ownerOnly(workspace);
    const input = agentInput(body);
    const data = parse(editSchema, input);
    if (input.kind !== undefined && input.kind !== current.kind) throw new ValidationError({ kind: msg('kindFixed') });
    let endpointUrl: string | undefined;
    if (input.endpointUrl !== undefined) {
      if (current.kind !== 'voice') throw new ValidationError({ endpointUrl: msg('onlyVoice', { label: 'endpointUrl' }) });
      endpointUrl = await validEndpointUrl(input.endpointUrl, 'endpointUrl', this.urlPolicy);
    }
    const fallbackId = fallbackOf(input.fallbackAgentId);
    const fields: FieldErrors = {};
    let whatsapp: Record<string, unknown> = {};
    if (current.kind === 'whatsapp') {
      whatsapp = whatsappRow(input.whatsapp, false, fields);
      if (fallbackId === null) fields.fallbackAgentId = msg('ladderWhatsApp');
    } else {
      const named = namesWhatsAppField(input.whatsapp);
      if (named) fields[named] = msg('onlyWhatsApp', { label: named });
    }
    if (Object.keys(fields).length > 0) throw new ValidationError(fields);
    return this.knex.transaction(async (trx) => {
      await this.lockWorkspace(trx, workspaceId);
      if (fallbackId !== undefined) await checkLadder(trx, workspaceId, id, fallbackId);
      if (data.orderHandler) await this.releaseHandler(trx, workspaceId);
      const patch = {
        ...(data.name !== undefined ? { name: data.name } : {}),
        ...(data.orderHandler !== undefined ? { is_order_handler: data.orderHandler } : {}),
        ...(endpointUrl !== undefined ? { endpoint_url: endpointUrl } : {}),
        ...(fallbackId !== undefined ? { fallback_agent_id: fallbackId } : {}),
      };
      const query = trx('agents').where({ id, workspace_id: workspaceId });
      const [row] = Object.keys(patch).length > 0 ? await query.update(patch).returning(AGENT_FIELDS) : await query.select(AGENT_FIELDS);
      if (!row) throw agentNotFound();
      if (Object.keys(whatsapp).length > 0) await trx('whatsapp_agents').where({ agent_id: id }).update(this.sealedWhatsApp(whatsapp));
      const changed = [...Object.keys(patch), ...Object.keys(whatsapp)];
      // A new access token or app secret is a credential changed: named as such, never shown.
      const credentials = changed.some((field) => field === 'access_token' || field === 'app_secret');
      if (current.kind !== 'human' && changed.length > 0)
        await audit.record(trx, {
          workspaceId,
          action: credentials ? 'agent_secret_rotated' : 'agent_edited',
          target: agentTarget(row),
          details: { kind: current.kind, changed },
        });
      return (await this.withWhatsApp(trx, [row]))[0];
    });
  }

  /** Agents' JSON, with each WhatsApp agent's connection (never its token or app secret). */
  private async withWhatsApp(db: Knex | Knex.Transaction, rows: AgentRow[]): Promise<Agent[]> {
    const connections = await readWhatsAppRows(
      db,
      rows.filter((r) => r.kind === 'whatsapp').map((r) => r.id),
    );
    return rows.map((row) => {
      const connection = connections.get(row.id);
      return toAgent(row, false, connection ? whatsappFields(connection, this.publicBaseUrl, row.id) : undefined);
    });
  }

  /** Handler and ladder changes of one workspace queue on its row (see releaseHandler and checkLadder). */
  private async lockWorkspace(trx: Knex.Transaction, workspaceId: string): Promise<void> {
    await trx.raw('SELECT 1 FROM workspaces WHERE id = ? FOR NO KEY UPDATE', [workspaceId]);
  }

  /**
   * Unsets the workspace's current handler before another is set. Handler changes of one workspace
   * queue on its row first (lockWorkspace): without that, two concurrent changes could each unset
   * the old handler and both set theirs, and the one-handler index would refuse the second.
   */
  private async releaseHandler(trx: Knex.Transaction, workspaceId: string): Promise<void> {
    await trx('agents').where({ workspace_id: workspaceId, is_order_handler: true }).update({ is_order_handler: false });
  }
}

/** An agent as the audit log names it. */
function agentTarget(row: { id: string; name: string }) {
  return { type: 'agent' as const, id: row.id, label: row.name };
}

function agentNotFound(): NotFoundError {
  return new NotFoundError(msg('agentNotFound'));
}
