import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { Prepared } from '../../db/prepared';
import { queryPrepared } from '../../db/prepared';
import { NotFoundError, bodyFields, camelOrSnake, isUuid, parse, msg } from '../../services/shared';
import { audit } from '../audit';

const KEY_PREFIX = 'sk_live_';
/** 32 random bytes are 43 base64url characters: 256 bits, hashed with SHA-256 and looked up by hash. */
const KEY_RE = /^sk_live_[A-Za-z0-9_-]{43}$/;
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 6;
const LAST_USED_THROTTLE_MS = 60_000;

const EXPIRY_MESSAGE = msg('wholeDays', { label: 'expiresInDays', min: 1, max: 365 });

export const createSchema = z.object({
  name: z
    .string({ error: msg('notText', { label: 'Name' }) })
    .trim()
    .max(100, msg('tooLong', { label: 'Name', max: 100 }))
    .optional(),
  expiresInDays: z.number({ error: EXPIRY_MESSAGE }).int(EXPIRY_MESSAGE).min(1, EXPIRY_MESSAGE).max(365, EXPIRY_MESSAGE).optional(),
});

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface KeyOwner {
  keyId: string;
  userId: string;
  /** The workspace the key was made in: a token minted from it reads that workspace only. */
  workspaceId: string;
}

/** Who asks about keys: a member sees their own, the owner every key of the workspace. */
export interface KeyViewer {
  userId: string;
  workspaceId: string;
  role: 'owner' | 'member';
}

const COLUMNS = ['id', 'name', 'prefix', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'];
const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function view(row: Record<string, unknown>): ApiKeyView {
  return {
    id: row.id as string,
    name: row.name as string,
    prefix: row.prefix as string,
    created_at: iso(row.created_at as Date)!,
    expires_at: iso(row.expires_at as Date | null),
    last_used_at: iso(row.last_used_at as Date | null),
    revoked_at: iso(row.revoked_at as Date | null),
  };
}

/** A key as the audit log names it: its name and the start anyone may see ("Sheets (sk_live_AbCdEf)"). */
const keyLabel = (row: { name: string; prefix: string }) => (row.name ? `${row.name} (${row.prefix})` : row.prefix);

export const hashKey = (key: string): string => crypto.createHash('sha256').update(key).digest('hex');

/** A live key by its hash (every token exchange): prepared. */
const LIVE_KEY: Prepared = {
  name: 'ocs-live-key',
  text: 'SELECT id, user_id, workspace_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) LIMIT 1',
};

export class ApiKeyService {
  private readonly lastTouched = new Map<string, number>();

  constructor(private readonly knex: Knex) {}

  /** Creates a key; the full value is returned this once and only its hash is stored. `db`: the caller's transaction, if any. */
  async create(owner: { userId: string; workspaceId: string }, input: unknown, db: Knex = this.knex): Promise<ApiKeyView & { key: string }> {
    const body = bodyFields(input);
    const data = parse(createSchema, { name: body.name ?? undefined, expiresInDays: camelOrSnake(body, 'expiresInDays', 'expires_in_days') ?? undefined });
    const key = `${KEY_PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
    const run = async (trx: Knex.Transaction) => {
      const [created] = await trx('api_keys')
        .insert({
          user_id: owner.userId,
          workspace_id: owner.workspaceId,
          name: data.name ?? '',
          key_hash: hashKey(key),
          prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
          expires_at: data.expiresInDays ? trx.raw(`now() + make_interval(days => ?)`, [data.expiresInDays]) : null,
        })
        .returning(COLUMNS);
      await audit.record(trx, {
        workspaceId: owner.workspaceId,
        action: 'api_key_created',
        target: { type: 'api_key', id: created.id, label: keyLabel(created) },
        details: { expires_in_days: data.expiresInDays ?? null },
      });
      return created;
    };
    const row = db.isTransaction ? await run(db as Knex.Transaction) : await db.transaction(run);
    return { ...view(row), key };
  }

  /** The keys the viewer may see: the owner all of the workspace's, a member only their own. */
  async list(viewer: KeyViewer): Promise<ApiKeyView[]> {
    const rows = await this.visible(viewer)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .select(COLUMNS);
    return rows.map(view);
  }

  /** Revokes a key the viewer may see (again is harmless); any other id (another member's, another workspace's) is 404. */
  async revoke(viewer: KeyViewer, id: string): Promise<void> {
    if (!isUuid(id)) throw new NotFoundError(msg('apiKeyNotFound'));
    await this.knex.transaction(async (trx) => {
      const row = await this.visible(viewer, trx).where({ id }).forUpdate().first('id', 'name', 'prefix', 'revoked_at');
      if (!row) throw new NotFoundError(msg('apiKeyNotFound'));
      if (row.revoked_at) return;
      await trx('api_keys').where({ id }).update({ revoked_at: trx.fn.now() });
      await audit.record(trx, { workspaceId: viewer.workspaceId, action: 'api_key_revoked', target: { type: 'api_key', id, label: keyLabel(row) } });
    });
  }

  private visible(viewer: KeyViewer, db: Knex = this.knex): Knex.QueryBuilder {
    const query = db('api_keys').where({ workspace_id: viewer.workspaceId });
    return viewer.role === 'owner' ? query : query.where({ user_id: viewer.userId });
  }

  /**
   * The owner of a live key (well-formed, known, not revoked, not expired), else null. `keyHash` is
   * `hashKey(key)`, when the caller has it already.
   */
  async verify(key: string, keyHash = hashKey(key)): Promise<KeyOwner | null> {
    if (!KEY_RE.test(key)) return null;
    const [row] = await queryPrepared<{ id: string; user_id: string; workspace_id: string }>(this.knex, LIVE_KEY, [keyHash]);
    if (!row) return null;
    this.touch(row.id);
    return { keyId: row.id, userId: row.user_id, workspaceId: row.workspace_id };
  }

  /** Records last use at most once a minute per key and process, off the request's critical path. */
  private touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.lastTouched.get(keyId) ?? 0) < LAST_USED_THROTTLE_MS) return;
    this.lastTouched.set(keyId, now);
    if (this.lastTouched.size > 10_000) this.lastTouched.clear();
    this.knex('api_keys')
      .where({ id: keyId })
      .update({ last_used_at: this.knex.fn.now() })
      .catch(() => this.lastTouched.delete(keyId));
  }
}
