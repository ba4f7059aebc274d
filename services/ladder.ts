import type { Knex } from 'knex';
import { ValidationError } from './errors';
import { isUuid } from './validation';

/** A ladder is the first agent and at most two fallbacks. */
export const MAX_LADDER_AGENTS = 3;

/**
 * Checks the workspace's ladders as they would be with `agentId` falling back to `fallbackId`
 * (null: none): the fallback is another agent of the same workspace, no ladder loops, and none is
 * longer than three agents, counted from any agent. Throws a ValidationError naming
 * `fallbackAgentId`. The caller holds the workspace's row lock, so two edits cannot each pass
 * alone and make a loop together. `agentId` is undefined for an agent being created.
 */
export async function checkLadder(trx: Knex.Transaction, workspaceId: string, agentId: string | undefined, fallbackId: string | null): Promise<void> {
  if (fallbackId === null) return;
  const refuse = (message: string) => new ValidationError({ fallbackAgentId: message });
  if (!isUuid(fallbackId)) throw refuse('fallbackAgentId must be the id of another agent of this workspace');
  if (fallbackId === agentId) throw refuse('An agent cannot be its own fallback');
  const rows: Array<{ id: string; fallback_agent_id: string | null }> = await trx('agents')
    .where({ workspace_id: workspaceId })
    .select('id', 'fallback_agent_id');
  const next = new Map(rows.map((r) => [r.id, r.fallback_agent_id]));
  if (!next.has(fallbackId)) throw refuse('fallbackAgentId must be the id of another agent of this workspace');
  const self = agentId ?? 'new';
  next.set(self, fallbackId);
  for (const start of next.keys()) {
    const seen = new Set<string>();
    for (let at: string | null | undefined = start; at; at = next.get(at)) {
      if (seen.has(at)) throw refuse('This fallback would make a loop: an order would come back to an agent it already went through');
      seen.add(at);
    }
    if (seen.size > MAX_LADDER_AGENTS) throw refuse(`A ladder has at most ${MAX_LADDER_AGENTS} agents: the first and two fallbacks`);
  }
}
