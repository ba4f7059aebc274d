import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import {
  ConflictError,
  ForbiddenError,
  GoneError,
  NotFoundError,
  ownerOnly,
  ValidationError,
  bodyFields,
  email,
  isUuid,
  parse,
  msg,
} from '../../services/shared';
import type { WorkspaceActor } from '../../services/shared';
import { audit } from '../audit';

/**
 * Joining a workspace takes a link the owner hands over (WhatsApp, SMS): we send no e-mail, so an
 * address alone proves nothing. The link carries 32 random bytes; we keep only their SHA-256.
 */
const VALID_DAYS = 7;
/** 32 random bytes are 43 base64url characters. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const invitationSchema = z.object({ email });

export interface InvitationView {
  id: string;
  email: string;
  expires_at: string;
  created_at: string;
}

export interface NewInvitation {
  id: string;
  email: string;
  expires_at: string;
  join_url: string;
}

/** The workspace a live link leads to, and the address it is for. */
export interface JoinLink {
  id: string;
  email: string;
  workspaceId: string;
  workspaceName: string;
}

const hashToken = (token: string): string => crypto.createHash('sha256').update(token).digest('hex');
const iso = (d: Date): string => new Date(d).toISOString();

export class InvitationService {
  constructor(
    private readonly knex: Knex,
    private readonly publicBaseUrl: string,
  ) {}

  /** The owner invites an address: a new link, returned this once; it replaces a pending one for the same address. */
  async create(workspace: WorkspaceActor, createdBy: string, input: unknown, db: Knex = this.knex): Promise<NewInvitation> {
    ownerOnly(workspace);
    const { email: address } = parse(invitationSchema, { email: bodyFields(input).email });
    const alreadyMember = await db('workspace_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.workspace_id', workspace.id)
      .whereRaw('lower(u.email) = ?', [address])
      .first('u.id');
    if (alreadyMember) throw new ValidationError({ email: msg('alreadyMember') });
    const token = crypto.randomBytes(32).toString('base64url');
    const row = await db.transaction(async (trx) => {
      await this.pending(trx, workspace.id).whereRaw('lower(email) = ?', [address]).update({ revoked_at: trx.fn.now() });
      const [created] = await trx('invitations')
        .insert({
          workspace_id: workspace.id,
          email: address,
          created_by: createdBy,
          token_hash: hashToken(token),
          expires_at: trx.raw(`now() + make_interval(days => ?)`, [VALID_DAYS]),
        })
        .returning(['id', 'email', 'expires_at']);
      await audit.record(trx, { workspaceId: workspace.id, action: 'member_invited', target: { type: 'invitation', id: created.id, label: address } });
      return created;
    });
    return { id: row.id, email: row.email, expires_at: iso(row.expires_at), join_url: `${this.publicBaseUrl}/join/${token}` };
  }

  /** Pending invitations (not used, revoked or expired), oldest first; never a token or its hash. */
  async list(workspace: WorkspaceActor): Promise<InvitationView[]> {
    ownerOnly(workspace);
    const rows = await this.pending(this.knex, workspace.id)
      .where('expires_at', '>', this.knex.fn.now())
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select('id', 'email', 'expires_at', 'created_at');
    return rows.map((r: { id: string; email: string; expires_at: Date; created_at: Date }) => ({
      id: r.id,
      email: r.email,
      expires_at: iso(r.expires_at),
      created_at: iso(r.created_at),
    }));
  }

  /** Withdraws a pending invitation of this workspace; another workspace's id, or a used one, is 404. */
  async revoke(workspace: WorkspaceActor, id: string): Promise<void> {
    ownerOnly(workspace);
    if (!isUuid(id)) throw new NotFoundError(msg('invitationNotFound'));
    await this.knex.transaction(async (trx) => {
      const [row] = await this.pending(trx, workspace.id).where({ id }).update({ revoked_at: trx.fn.now() }).returning(['id', 'email']);
      if (!row) throw new NotFoundError(msg('invitationNotFound'));
      await audit.record(trx, { workspaceId: workspace.id, action: 'invitation_revoked', target: { type: 'invitation', id: row.id, label: row.email } });
    });
  }

  /**
   * What a link leads to: 404 for a token never issued, 410 once used, revoked or expired, and 403
   * when it is opened by a signed-in user with another address (case does not count).
   */
  async open(token: string, user?: { email: string }, db: Knex = this.knex): Promise<JoinLink> {
    const row = TOKEN_RE.test(token)
      ? await db('invitations as i')
          .join('workspaces as w', 'w.id', 'i.workspace_id')
          .where('i.token_hash', hashToken(token))
          .first('i.id', 'i.email', 'i.workspace_id', 'w.name', 'i.used_at', 'i.revoked_at', db.raw('i.expires_at <= now() AS expired'))
      : undefined;
    if (!row) throw new NotFoundError(msg('inviteMissing'));
    if (row.used_at) throw new GoneError(msg('inviteUsed'));
    if (row.revoked_at) throw new GoneError(msg('inviteWithdrawn'));
    if (row.expired) throw new GoneError(msg('inviteExpired', { days: VALID_DAYS }));
    if (user && user.email.toLowerCase() !== row.email.toLowerCase()) {
      throw new ForbiddenError(msg('inviteOtherEmail'));
    }
    return { id: row.id, email: row.email, workspaceId: row.workspace_id, workspaceName: row.name };
  }

  /**
   * The user joins through the link: it must be for their address, still live, and they must
   * belong to no workspace. Marking it used and adding the member are one transaction; the update
   * takes the row's lock and re-checks `used_at`, so of two joins at once exactly one wins.
   */
  async join(token: string, user: { id: string; email: string }, db: Knex = this.knex): Promise<JoinLink> {
    const run = async (trx: Knex.Transaction) => {
      const link = await this.open(token, user, trx);
      const used = await this.pending(trx, link.workspaceId)
        .where({ id: link.id })
        .where('expires_at', '>', trx.fn.now())
        .update({ used_at: trx.fn.now(), used_by: user.id })
        .returning('id');
      if (used.length === 0) throw new GoneError(msg('inviteUsed'));
      const joined = await trx('workspace_members')
        .insert({ workspace_id: link.workspaceId, user_id: user.id, role: 'member' })
        .onConflict('user_id')
        .ignore()
        .returning('user_id');
      if (joined.length === 0) {
        throw new ConflictError(msg('ALREADY_IN_WORKSPACE'), 'ALREADY_IN_WORKSPACE');
      }
      // The one who joins acts: a sign-up through the link has no session yet.
      await audit.record(trx, {
        workspaceId: link.workspaceId,
        action: 'member_joined',
        actorId: user.id,
        target: { type: 'member', id: user.id, label: user.email },
      });
      return link;
    };
    return db.isTransaction ? run(db as Knex.Transaction) : this.knex.transaction(run);
  }

  private pending(db: Knex, workspaceId: string): Knex.QueryBuilder {
    return db('invitations').where({ workspace_id: workspaceId }).whereNull('used_at').whereNull('revoked_at');
  }
}
