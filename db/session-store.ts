import connectPgSimple from 'connect-pg-simple';
import session from 'express-session';
import type pg from 'pg';

const PgStore = connectPgSimple(session);
type Query = (sql: string, params: unknown[], done: (err?: Error | null) => void) => void;

/**
 * Marks a session read from the table, for the lifetime of the request that read it (never
 * written: `set` leaves it out). express-session copies it onto `req.session` and counts it in the
 * hash it compares at the end of the request, so marking it changes nothing else.
 */
const LOADED = '_loadedFromStore';

/** A session naming a workspace is written only while its user is still a member of it. */
const STILL_A_MEMBER = `($1::jsonb #>> '{ctx,workspace,id}' IS NULL
   OR EXISTS (SELECT 1 FROM workspace_members m
               WHERE m.user_id::text = $1::jsonb ->> 'userId'
                 AND m.workspace_id::text = $1::jsonb #>> '{ctx,workspace,id}'))`;

/** A session this request created: written whole, twice if the request saves it twice. */
const INSERT_NEW = `INSERT INTO session (sess, expire, sid)
  SELECT $1::json, to_timestamp($2), $3 WHERE ${STILL_A_MEMBER}
  ON CONFLICT (sid) DO UPDATE SET sess = excluded.sess, expire = excluded.expire`;

/** A session read from the table: its row is updated if it still exists, never made again. */
const UPDATE_LOADED = `UPDATE session SET sess = $1::json, expire = to_timestamp($2) WHERE sid = $3 AND ${STILL_A_MEMBER}`;

/**
 * connect-pg-simple's store, with two rules of ours on every write, so that a request still in
 * flight cannot undo a sign-out:
 * - A session loaded from the table is only ever updated. A request that loaded it before its row
 *   was deleted ("Sign out everywhere", sign-out, a member's removal, expiry) and saves it after
 *   finds no row, and the session stays ended. Only a session created by the request itself (at
 *   sign-in, or an anonymous visitor's first form) is inserted.
 * - A session that names a workspace is written only while its user is still a member of it: a
 *   member who leaves keeps this session row without the workspace, and another request of theirs
 *   in flight must not write the workspace back into it.
 * Expired rows are deleted by the worker's housekeeping job, never by a timer in the web process.
 */
export class MemberSessionStore extends PgStore {
  constructor(
    pool: pg.Pool,
    private readonly ttlMs: number,
    errorLog: (...args: unknown[]) => void,
  ) {
    super({ pool, tableName: 'session', createTableIfMissing: false, disableTouch: true, pruneSessionInterval: false, errorLog });
  }

  override get(sid: string, done: (err: unknown, sess?: session.SessionData | null) => void): void {
    super.get(sid, (err, sess) => {
      if (sess) (sess as unknown as Record<string, unknown>)[LOADED] = true;
      done(err, sess);
    });
  }

  override set(sid: string, sess: session.SessionData, done?: (err?: unknown) => void): void {
    const { [LOADED]: loaded, ...data } = sess as unknown as Record<string, unknown>;
    // As connect-pg-simple computes it (the column is its own `timestamp`, compared with to_timestamp).
    const expires = sess.cookie?.expires ? new Date(sess.cookie.expires) : new Date(Date.now() + this.ttlMs);
    (this as unknown as { query: Query }).query(loaded ? UPDATE_LOADED : INSERT_NEW, [JSON.stringify(data), Math.ceil(expires.getTime() / 1000), sid], (err) =>
      done?.(err),
    );
  }
}
