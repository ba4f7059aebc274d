import type { Knex } from 'knex';
import { ValidationError, isUuid, msg } from '../../services/shared';
import type { Message } from '../../services/shared';

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
  const refuse = (message: Message) => new ValidationError({ fallbackAgentId: message });
  if (!isUuid(fallbackId)) throw refuse(msg('ladderOther'));
  if (fallbackId === agentId) throw refuse(msg('ladderSelf'));
  const rows: Array<{ id: string; fallback_agent_id: string | null }> = await trx('agents')
    .where({ workspace_id: workspaceId })
    .select('id', 'fallback_agent_id');
  const next = new Map(rows.map((r) => [r.id, r.fallback_agent_id]));
  if (!next.has(fallbackId)) throw refuse(msg('ladderOther'));
  const self = agentId ?? 'new';
  next.set(self, fallbackId);
  for (const start of next.keys()) {
    const seen = new Set<string>();
    for (let at: string | null | undefined = start; at; at = next.get(at)) {
      if (seen.has(at)) throw refuse(msg('ladderLoop'));
      seen.add(at);
    }
    if (seen.size > MAX_LADDER_AGENTS) throw refuse(msg('ladderLength'));
  }
}
