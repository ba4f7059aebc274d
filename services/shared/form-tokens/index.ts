import crypto from 'node:crypto';
import type { Knex } from 'knex';

/** A form is not kept open longer than this; used tokens older than it are pruned. */
const KEPT_HOURS = 24;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,64}$/;

/** What became of a form's submission: created now, or its token was used before (nothing created). */
export type Once<T> = { created: true; result: T } | { created: false };

/**
 * One-time tokens of the dashboard's creation forms (a store connection, an API key, an
 * invitation, a webhook endpoint, an agent, a blocked number). A page puts a fresh token in its
 * form; the submission inserts it into `form_tokens` in the same transaction as the creation, so a
 * reload or a double tap finds it used and creates nothing. A failed creation rolls the token back
 * with it: the corrected form can be sent again.
 */
export class FormTokenService {
  constructor(private readonly knex: Knex) {}

  /** A new token for a form (nothing is stored until it is used). */
  issue(): string {
    return crypto.randomBytes(24).toString('base64url');
  }

  /**
   * Runs `create` in a transaction that also consumes `token` for `userId`. Without a token (a client
   * that is not one of our pages) it just runs `create`; a malformed token counts as used.
   */
  async once<T>(userId: string, purpose: string, token: string | undefined, create: (db: Knex) => Promise<T>): Promise<Once<T>> {
    if (token === undefined || token === '') return { created: true, result: await create(this.knex) };
    if (!TOKEN_PATTERN.test(token)) return { created: false };
    return this.knex.transaction(async (trx) => {
      const used = await trx('form_tokens').insert({ token, user_id: userId, purpose }).onConflict('token').ignore().returning('token');
      if (used.length === 0) return { created: false } as const;
      return { created: true, result: await create(trx) } as const;
    });
  }

  /** Used tokens past the time a form stays open: the worker's housekeeping deletes them. */
  async pruneExpired(): Promise<number> {
    return this.knex('form_tokens')
      .where('used_at', '<', this.knex.raw(`now() - interval '${KEPT_HOURS} hours'`))
      .delete();
  }
}
