import type { Knex } from 'knex';
import type { CallService } from '../calls';
import { ConflictError, ForbiddenError, NotFoundError, isUuid, msg } from '../../services/shared';
import { audit } from '../audit';
import { releaseOrdersOf } from '../team';

export interface RemovedMember {
  user_id: string;
  sessionsEnded: number;
  keysRevoked: number;
  claimsReleased: number;
}

/** Leaving a workspace, or being removed from it by its owner. */
export class MemberService {
  constructor(
    private readonly knex: Knex,
    private readonly calls: CallService,
  ) {}

  /**
   * The owner removes a member, or a member leaves (`actorId` = `userId`). In one transaction: the
   * membership goes, the member's API keys of the workspace are revoked, their open call claims are
   * released (the calls are due again), and their sessions end — all of them when removed, all but
   * `keepSessionId` (the one leaving now) when they leave — so no device keeps the workspace in its
   * session. The owner cannot be removed (409).
   */
  async remove(workspace: { id: string; role: string }, actorId: string, userId: string, keepSessionId?: string): Promise<RemovedMember> {
    if (!isUuid(userId)) throw memberNotFound();
    if (workspace.role !== 'owner' && actorId !== userId) throw new ForbiddenError(msg('ownerRemoves'));
    return this.knex.transaction(async (trx) => {
      const member = await trx('workspace_members as m')
        .join('users as u', 'u.id', 'm.user_id')
        .where({ 'm.workspace_id': workspace.id, 'm.user_id': userId })
        .forUpdate('m')
        .first('m.role', 'u.email');
      if (!member) throw memberNotFound();
      if (member.role === 'owner') throw new ConflictError(msg('OWNER_CANNOT_BE_REMOVED'), 'OWNER_CANNOT_BE_REMOVED');
      await trx('workspace_members').where({ workspace_id: workspace.id, user_id: userId }).delete();
      const keysRevoked = await trx('api_keys')
        .where({ workspace_id: workspace.id, user_id: userId })
        .whereNull('revoked_at')
        .update({ revoked_at: trx.fn.now() });
      const claimsReleased = await this.calls.releaseClaimsOf(trx, workspace.id, userId);
      // Their orders go back to the pool at once: nobody waits on a person who left.
      await releaseOrdersOf(trx, workspace.id, userId);
      const sessionsEnded = await trx('session')
        .whereRaw("sess->>'userId' = ?", [userId])
        .modify((q) => {
          if (keepSessionId) q.whereNot({ sid: keepSessionId });
        })
        .delete();
      // The leaver's own session stays signed in, without the workspace it cached.
      if (keepSessionId)
        await trx('session')
          .where({ sid: keepSessionId })
          .update({ sess: trx.raw("(sess::jsonb - 'ctx')::json") });
      await audit.record(trx, {
        workspaceId: workspace.id,
        action: actorId === userId ? 'member_left' : 'member_removed',
        target: { type: 'member', id: userId, label: member.email },
        details: { keys_revoked: keysRevoked },
      });
      return { user_id: userId, sessionsEnded, keysRevoked, claimsReleased };
    });
  }
}

function memberNotFound(): NotFoundError {
  return new NotFoundError(msg('memberNotFound'));
}
