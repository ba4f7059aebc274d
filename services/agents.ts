import type { Knex } from 'knex';
import { z } from 'zod';
import type { UrlPolicy } from '../integrations/url-guard';
import { newSigningSecret } from '../integrations/signing';
import { NotFoundError, ownerOnly, ValidationError } from './errors';
import type { WorkspaceActor } from './errors';
import { bodyFields, camelOrSnake, isUuid, parse, requiredText, validEndpointUrl } from './validation';

export const AGENT_KINDS = ['human', 'voice'] as const;
type AgentKind = (typeof AGENT_KINDS)[number];

export interface Agent {
  id: string;
  name: string;
  kind: AgentKind;
  is_order_handler: boolean;
  endpoint_url: string | null;
  created_at: string;
  /** Only in the answers that reveal it (creation, rotation). */
  secret?: string;
}

const name = requiredText('Name', 200);
const orderHandler = z.boolean({ error: 'orderHandler must be true or false' }).optional();
const kind = z.enum(AGENT_KINDS, { error: 'kind must be human or voice' }).optional();
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
  };
}

const AGENT_FIELDS = ['id', 'name', 'kind', 'is_order_handler', 'endpoint_url', 'created_at'];

type AgentRow = Omit<Agent, 'created_at' | 'secret'> & { created_at: Date; secret?: string | null };

function toAgent(row: AgentRow, withSecret = false): Agent {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    is_order_handler: row.is_order_handler,
    endpoint_url: row.endpoint_url ?? null,
    created_at: row.created_at.toISOString(),
    ...(withSecret && row.secret ? { secret: row.secret } : {}),
  };
}

/**
 * Agents of one workspace; at most one of them is the order handler. Every member works with the
 * human agents; a voice agent (its endpoint, its secret) is the owner's: creating, editing,
 * rotating or reading its secret takes the caller's role.
 */
export class AgentService {
  constructor(
    private readonly knex: Knex,
    private readonly urlPolicy: UrlPolicy,
  ) {}

  async get(workspaceId: string, id: string): Promise<Agent> {
    if (!isUuid(id)) throw agentNotFound();
    const row = await this.knex('agents').where({ id, workspace_id: workspaceId }).first(AGENT_FIELDS);
    if (!row) throw agentNotFound();
    return toAgent(row);
  }

  /** A voice agent's signing secret, for the workspace's owner (the agent's page). */
  async secret(workspace: WorkspaceActor, id: string): Promise<string> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw agentNotFound();
    const row = await this.knex('agents').where({ id, workspace_id: workspace.id, kind: 'voice' }).first('secret');
    if (!row) throw agentNotFound();
    return row.secret;
  }

  /** A new signing secret for a voice agent; the old one stops working at once. */
  async rotateSecret(workspace: WorkspaceActor, id: string): Promise<Agent> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw agentNotFound();
    const [row] = await this.knex('agents')
      .where({ id, workspace_id: workspace.id, kind: 'voice' })
      .update({ secret: newSigningSecret() })
      .returning([...AGENT_FIELDS, 'secret']);
    if (!row) throw agentNotFound();
    return toAgent(row, true);
  }

  async list(workspaceId: string): Promise<Agent[]> {
    const rows = await this.knex('agents')
      .where({ workspace_id: workspaceId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(AGENT_FIELDS);
    return rows.map((row) => toAgent(row));
  }

  async create(workspace: WorkspaceActor, body: unknown, db: Knex = this.knex): Promise<Agent> {
    const input = agentInput(body);
    if (input.kind === 'voice') ownerOnly(workspace);
    const workspaceId = workspace.id;
    const fields: Record<string, string> = {};
    let data: z.infer<typeof createSchema> | undefined;
    try {
      data = parse(createSchema, input);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(fields, err.fields);
    }
    const isVoice = (data?.kind ?? input.kind) === 'voice';
    let endpointUrl: string | null = null;
    if (isVoice) {
      try {
        endpointUrl = await validEndpointUrl(input.endpointUrl, 'endpointUrl', this.urlPolicy);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        Object.assign(fields, err.fields);
      }
    } else if (input.endpointUrl !== undefined && input.endpointUrl !== null) {
      fields.endpointUrl = 'endpointUrl is only for voice agents';
    }
    if (Object.keys(fields).length > 0 || !data) throw new ValidationError(fields);
    const row = {
      workspace_id: workspaceId,
      name: data.name,
      is_order_handler: data.orderHandler ?? false,
      kind: data.kind ?? 'human',
      endpoint_url: endpointUrl,
      secret: isVoice ? newSigningSecret() : null,
    };
    return db.transaction(async (trx) => {
      if (data.orderHandler) await this.releaseHandler(trx, workspaceId);
      const [created] = await trx('agents')
        .insert(row)
        .returning([...AGENT_FIELDS, 'secret']);
      return toAgent(created, true);
    });
  }

  /** Renames and/or (un)sets the handler; making this agent the handler unsets the previous one. */
  async update(workspace: WorkspaceActor, id: string, body: unknown): Promise<Agent> {
    const workspaceId = workspace.id;
    const current = await this.get(workspaceId, id);
    // A voice agent's kind never changes, so this check cannot go stale before the update.
    if (current.kind === 'voice') ownerOnly(workspace);
    const input = agentInput(body);
    const data = parse(editSchema, input);
    if (input.kind !== undefined && input.kind !== current.kind) throw new ValidationError({ kind: 'The kind of an agent never changes' });
    let endpointUrl: string | undefined;
    if (input.endpointUrl !== undefined) {
      if (current.kind !== 'voice') throw new ValidationError({ endpointUrl: 'endpointUrl is only for voice agents' });
      endpointUrl = await validEndpointUrl(input.endpointUrl, 'endpointUrl', this.urlPolicy);
    }
    return this.knex.transaction(async (trx) => {
      if (data.orderHandler) await this.releaseHandler(trx, workspaceId);
      const patch = {
        ...(data.name !== undefined ? { name: data.name } : {}),
        ...(data.orderHandler !== undefined ? { is_order_handler: data.orderHandler } : {}),
        ...(endpointUrl !== undefined ? { endpoint_url: endpointUrl } : {}),
      };
      const query = trx('agents').where({ id, workspace_id: workspaceId });
      const [row] = Object.keys(patch).length > 0 ? await query.update(patch).returning(AGENT_FIELDS) : await query.select(AGENT_FIELDS);
      if (!row) throw agentNotFound();
      return toAgent(row);
    });
  }

  /**
   * Unsets the workspace's current handler before another is set. Handler changes of one workspace
   * queue on its row first: without that, two concurrent changes could each unset the old handler
   * and both set theirs, and the one-handler index would refuse the second with an error.
   */
  private async releaseHandler(trx: Knex.Transaction, workspaceId: string): Promise<void> {
    await trx.raw('SELECT 1 FROM workspaces WHERE id = ? FOR NO KEY UPDATE', [workspaceId]);
    await trx('agents').where({ workspace_id: workspaceId, is_order_handler: true }).update({ is_order_handler: false });
  }
}

function agentNotFound(): NotFoundError {
  return new NotFoundError('Agent not found');
}
