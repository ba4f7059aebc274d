import bcrypt from 'bcrypt';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { Prepared } from '../../db/prepared';
import { queryPrepared } from '../../db/prepared';
import { ValidationError, isLanguage, languageSchema, email, parse, requiredText, msg } from '../../services/shared';
import type { InvitationService } from './invitations';
import type { Language } from '../../services/shared';
import type { WorkspaceService } from './workspaces';

const PASSWORD_MIN_CHARS = 8;
/** bcrypt reads only the first 72 bytes; longer passwords are refused rather than silently cut. */
const PASSWORD_MAX_BYTES = 72;

const password = z
  .string({ error: msg('passwordRequired') })
  .min(PASSWORD_MIN_CHARS, msg('passwordShort', { min: PASSWORD_MIN_CHARS }))
  .refine((p) => Buffer.byteLength(p, 'utf8') <= PASSWORD_MAX_BYTES, msg('passwordLong', { max: PASSWORD_MAX_BYTES }));

const signUpSchema = z.object({
  name: requiredText('Name', 200),
  email,
  password,
  workspace: z
    .string()
    .trim()
    .max(200, msg('workspaceNameLong', { max: 200 }))
    .optional()
    .transform((v) => (v ? v : undefined)),
});

export type SignUpInput = z.input<typeof signUpSchema>;

export interface User {
  id: string;
  email: string;
  name: string;
}

export interface UserContext {
  /** `language`: the user's saved dashboard language, null until they choose one. */
  user: User & { language: Language | null };
  workspace: { id: string; name: string; role: 'owner' | 'member'; owner_id: string } | null;
}

/** A user and their workspace (at most one), read on every Data API request: prepared. */
const CONTEXT: Prepared = {
  name: 'ocs-user-context',
  text: `SELECT u.id, u.email, u.name, u.language, w.id AS workspace_id, w.name AS workspace_name, w.owner_id, m.role
           FROM users u
           LEFT JOIN workspace_members m ON m.user_id = u.id
           LEFT JOIN workspaces w ON w.id = m.workspace_id
          WHERE u.id = $1
          LIMIT 1`,
};

interface ContextRow {
  id: string;
  email: string;
  name: string;
  language: string | null;
  workspace_id: string | null;
  workspace_name: string;
  owner_id: string;
  role: 'owner' | 'member';
}

export class UserService {
  // A real hash to compare against when the email is unknown, so timing does not reveal accounts.
  private readonly dummyHash: Promise<string>;

  constructor(
    private readonly knex: Knex,
    private readonly workspaces: WorkspaceService,
    private readonly invitations: InvitationService,
    private readonly bcryptCost: number,
  ) {
    this.dummyHash = bcrypt.hash('not-a-real-password', bcryptCost);
  }

  /**
   * Creates the account and, when it creates one, the named workspace. Through an invitation link
   * the account is for the invited address, whatever email was posted, and joins that workspace
   * in the same transaction (the link proves the address; nothing else does). `language`: the one
   * the owner signed up in, for the name of the workspace's first agent.
   */
  async signUp(input: SignUpInput, invitationToken?: string, language: Language = 'en'): Promise<User> {
    const invited = invitationToken === undefined ? undefined : await this.invitations.open(invitationToken);
    const data = parse(signUpSchema, invited ? { ...input, email: invited.email, workspace: undefined } : input);
    const passwordHash = await bcrypt.hash(data.password, this.bcryptCost);
    return this.knex.transaction(async (trx) => {
      const {
        rows: [user],
      } = await trx.raw(
        `INSERT INTO users (email, name, password_hash) VALUES (?, ?, ?)
         ON CONFLICT ((lower(email))) DO NOTHING RETURNING id, email, name`,
        [data.email, data.name, passwordHash],
      );
      if (!user) throw new ValidationError({ email: msg('emailTaken') });
      if (invitationToken !== undefined) await this.invitations.join(invitationToken, user, trx);
      else if (data.workspace) await this.workspaces.create(user.id, data.workspace, trx, language);
      return user as User;
    });
  }

  /** Returns the user for a correct email and password, else null; the same work either way. */
  async authenticate(emailInput: unknown, passwordInput: unknown): Promise<User | null> {
    const address = typeof emailInput === 'string' && !emailInput.includes('\u0000') ? emailInput.trim().toLowerCase() : '';
    const secret = typeof passwordInput === 'string' ? passwordInput : '';
    const row = address ? await this.knex('users').whereRaw('lower(email) = ?', [address]).first() : undefined;
    const tooLong = Buffer.byteLength(secret, 'utf8') > PASSWORD_MAX_BYTES;
    const matches = await bcrypt.compare(tooLong ? '' : secret, row?.password_hash ?? (await this.dummyHash));
    if (!row || !matches || tooLong) return null;
    return { id: row.id, email: row.email, name: row.name };
  }

  /** Ends every session of the user, on every device (the session store's rows). */
  async endAllSessions(userId: string): Promise<number> {
    return this.knex('session').whereRaw("sess->>'userId' = ?", [userId]).delete();
  }

  /** Expired sessions (the worker's housekeeping; the web processes run no timer for it). */
  async pruneExpiredSessions(): Promise<number> {
    return this.knex('session').where('expire', '<', this.knex.fn.now()).delete();
  }

  /** Saves the user's dashboard language (`{language}`: en, fr or ar; anything else is a ValidationError),
   * and makes the user's sessions on other devices pick it up. */
  async setLanguage(userId: string, input: unknown): Promise<Language> {
    const { language } = parse(languageSchema, input);
    await this.knex.transaction(async (trx) => {
      await trx('users').where({ id: userId }).update({ language });
      // Every other device re-reads the user on its next request, and so speaks the new language.
      await trx.raw("UPDATE session SET sess = (sess::jsonb - 'ctx')::json WHERE sess->>'userId' = ? AND sess->'ctx' IS NOT NULL", [userId]);
    });
    return language;
  }

  /** The signed-in user and their workspace, in one query. */
  async context(userId: string): Promise<UserContext | null> {
    const [row] = await queryPrepared<ContextRow>(this.knex, CONTEXT, [userId]);
    if (!row) return null;
    return {
      user: { id: row.id, email: row.email, name: row.name, language: isLanguage(row.language) ? row.language : null },
      workspace: row.workspace_id ? { id: row.workspace_id, name: row.workspace_name, role: row.role, owner_id: row.owner_id } : null,
    };
  }
}
