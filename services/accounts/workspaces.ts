import type { Knex } from 'knex';
import { z } from 'zod';
import { ConflictError, parse, requiredText, msg } from '../../services/shared';
import type { Language } from '../../services/shared';

const workspaceName = z.object({ name: requiredText('Workspace name', 200) });

export interface Member {
  user_id: string;
  name: string;
  email: string;
  role: 'owner' | 'member';
}

/**
 * The human agent every new workspace starts with, as its order handler: its members call the
 * customers themselves from the Calls page, so the first order is taken at once. Named after the
 * workspace's team, in the language the owner was using.
 */
const TEAM_AGENT: Record<Language, (workspace: string) => string> = {
  en: (workspace) => `${workspace} team`,
  fr: (workspace) => `Équipe ${workspace}`,
  ar: (workspace) => `فريق ${workspace}`,
};

export class WorkspaceService {
  constructor(private readonly knex: Knex) {}

  /**
   * Creates a workspace owned by the user, who must not belong to one already, with its team's
   * human agent as order handler (named in `language`).
   */
  async create(userId: string, nameInput: unknown, db: Knex = this.knex, language: Language = 'en'): Promise<{ id: string; name: string }> {
    const { name } = parse(workspaceName, { name: nameInput });
    const run = async (trx: Knex.Transaction) => {
      const [workspace] = await trx('workspaces').insert({ name, owner_id: userId }).returning(['id', 'name']);
      const inserted = await trx('workspace_members')
        .insert({ workspace_id: workspace.id, user_id: userId, role: 'owner' })
        .onConflict('user_id')
        .ignore()
        .returning('user_id');
      if (inserted.length === 0) throw new ConflictError(msg('alreadyInWorkspace'));
      await trx('agents').insert({ workspace_id: workspace.id, name: TEAM_AGENT[language](name).slice(0, 200), kind: 'human', is_order_handler: true });
      return workspace;
    };
    return db.isTransaction ? run(db as Knex.Transaction) : db.transaction(run);
  }

  async members(workspaceId: string): Promise<Member[]> {
    return this.knex('workspace_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.workspace_id', workspaceId)
      .orderBy([{ column: 'm.role', order: 'desc' }, { column: 'm.created_at' }])
      .select('u.id as user_id', 'u.name', 'u.email', 'm.role');
  }
}
