import type { Knex } from 'knex';
import { z } from 'zod';
import { NotFoundError } from './errors';
import { bodyFields, camelOrSnake, isUuid, parse, requiredText } from './validation';

export interface Agent {
  id: string;
  name: string;
  is_order_handler: boolean;
  created_at: string;
}

const name = requiredText('Name', 200);
const orderHandler = z.boolean({ error: 'orderHandler must be true or false' }).optional();
const createSchema = z.object({ name, orderHandler });
const editSchema = z.object({ name: name.optional(), orderHandler });

/** `name` and `orderHandler` (or `order_handler`; camelCase wins) from a JSON body. */
function agentInput(body: unknown): { name?: unknown; orderHandler?: unknown } {
  const source = bodyFields(body);
  return {
    name: Object.hasOwn(source, 'name') ? source.name : undefined,
    orderHandler: camelOrSnake(source, 'orderHandler', 'order_handler'),
  };
}

const AGENT_FIELDS = ['id', 'name', 'is_order_handler', 'created_at'];

function toAgent(row: Omit<Agent, 'created_at'> & { created_at: Date }): Agent {
  return { id: row.id, name: row.name, is_order_handler: row.is_order_handler, created_at: row.created_at.toISOString() };
}

/** Agents of one workspace; at most one of them is the order handler. */
export class AgentService {
  constructor(private readonly knex: Knex) {}

  async list(workspaceId: string): Promise<Agent[]> {
    const rows = await this.knex('agents')
      .where({ workspace_id: workspaceId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(AGENT_FIELDS);
    return rows.map(toAgent);
  }

  async create(workspaceId: string, body: unknown): Promise<Agent> {
    const data = parse(createSchema, agentInput(body));
    return this.knex.transaction(async (trx) => {
      if (data.orderHandler) await this.releaseHandler(trx, workspaceId);
      const [row] = await trx('agents')
        .insert({ workspace_id: workspaceId, name: data.name, is_order_handler: data.orderHandler ?? false })
        .returning(AGENT_FIELDS);
      return toAgent(row);
    });
  }

  /** Renames and/or (un)sets the handler; making this agent the handler unsets the previous one. */
  async update(workspaceId: string, id: string, body: unknown): Promise<Agent> {
    if (!isUuid(id)) throw agentNotFound();
    const data = parse(editSchema, agentInput(body));
    return this.knex.transaction(async (trx) => {
      if (data.orderHandler) await this.releaseHandler(trx, workspaceId);
      const patch = {
        ...(data.name !== undefined ? { name: data.name } : {}),
        ...(data.orderHandler !== undefined ? { is_order_handler: data.orderHandler } : {}),
      };
      const query = trx('agents').where({ id, workspace_id: workspaceId });
      const [row] = Object.keys(patch).length > 0
        ? await query.update(patch).returning(AGENT_FIELDS)
        : await query.select(AGENT_FIELDS);
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
