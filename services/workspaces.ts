import type { Knex } from 'knex';
import { z } from 'zod';
import { ConflictError, ForbiddenError, ValidationError } from './errors';
import { email, parse, requiredText } from './validation';

const workspaceName = z.object({ name: requiredText('Workspace name', 200) });
const invitation = z.object({ email });

export interface Member {
  user_id: string;
  name: string;
  email: string;
  role: 'owner' | 'member';
}

export class WorkspaceService {
  constructor(private readonly knex: Knex) {}

  /** Creates a workspace owned by the user, who must not belong to one already. */
  async create(userId: string, nameInput: unknown, db: Knex = this.knex): Promise<{ id: string; name: string }> {
    const { name } = parse(workspaceName, { name: nameInput });
    const run = async (trx: Knex.Transaction) => {
      const [workspace] = await trx('workspaces').insert({ name, owner_id: userId }).returning(['id', 'name']);
      const inserted = await trx('workspace_members')
        .insert({ workspace_id: workspace.id, user_id: userId, role: 'owner' })
        .onConflict('user_id')
        .ignore()
        .returning('user_id');
      if (inserted.length === 0) throw new ConflictError('You already belong to a workspace');
      return workspace;
    };
    return db.isTransaction ? run(db as Knex.Transaction) : db.transaction(run);
  }

  /** Joins the oldest open invitation for this email, if the user has no workspace yet. */
  async acceptInvitation(userId: string, userEmail: string, db: Knex = this.knex): Promise<boolean> {
    const { rows } = await db.raw(
      `WITH invite AS (
         SELECT id, workspace_id FROM invitations
          WHERE lower(email) = lower(?) AND accepted_at IS NULL
          ORDER BY created_at LIMIT 1
       ), joined AS (
         INSERT INTO workspace_members (workspace_id, user_id, role)
         SELECT workspace_id, ?, 'member' FROM invite
         ON CONFLICT (user_id) DO NOTHING
         RETURNING workspace_id
       )
       UPDATE invitations SET accepted_at = now()
        WHERE id IN (SELECT invite.id FROM invite JOIN joined USING (workspace_id))
       RETURNING id`,
      [userEmail, userId],
    );
    return rows.length > 0;
  }

  async members(workspaceId: string): Promise<Member[]> {
    return this.knex('workspace_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.workspace_id', workspaceId)
      .orderBy([{ column: 'm.role', order: 'desc' }, { column: 'm.created_at' }])
      .select('u.id as user_id', 'u.name', 'u.email', 'm.role');
  }

  async openInvitations(workspaceId: string): Promise<Array<{ email: string; created_at: Date }>> {
    return this.knex('invitations')
      .where({ workspace_id: workspaceId })
      .whereNull('accepted_at')
      .orderBy('created_at')
      .select('email', 'created_at');
  }

  /** The owner invites an email; that person joins at sign-up or at their next sign-in. */
  async invite(workspace: { id: string; role: string }, invitedBy: string, emailInput: unknown): Promise<void> {
    if (workspace.role !== 'owner') throw new ForbiddenError('Only the workspace owner can invite members');
    const { email: address } = parse(invitation, { email: emailInput });
    const alreadyMember = await this.knex('workspace_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.workspace_id', workspace.id)
      .whereRaw('lower(u.email) = ?', [address])
      .first('u.id');
    if (alreadyMember) throw new ValidationError({ email: 'This person is already a member' });
    await this.knex.raw(
      `INSERT INTO invitations (workspace_id, email, invited_by) VALUES (?, ?, ?)
       ON CONFLICT (workspace_id, (lower(email))) DO NOTHING`,
      [workspace.id, address, invitedBy],
    );
  }
}
