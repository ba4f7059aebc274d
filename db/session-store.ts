import connectPgSimple from 'connect-pg-simple';
import session from 'express-session';
import type pg from 'pg';

const PgStore = connectPgSimple(session);
type Query = (sql: string, params: unknown[], done: (err?: Error | null) => void) => void;

/**
 * connect-pg-simple's store, with one rule of ours on every write: a session that names a workspace
 * is written only while its user is still a member of it. A request that loaded a member's session
 * before they were removed and saves it afterwards would otherwise bring the deleted row back, with
 * the workspace still cached in it. Expired rows are deleted by the worker's housekeeping job, never
 * by a timer in the web process.
 */
export class MemberSessionStore extends PgStore {
  constructor(pool: pg.Pool, private readonly ttlMs: number, errorLog: (...args: unknown[]) => void) {
    super({ pool, tableName: 'session', createTableIfMissing: false, disableTouch: true, pruneSessionInterval: false, errorLog });
  }

  override set(sid: string, sess: session.SessionData, done?: (err?: unknown) => void): void {
    // As connect-pg-simple computes it (the column is its own `timestamp`, compared with to_timestamp).
    const expires = sess.cookie?.expires ? new Date(sess.cookie.expires) : new Date(Date.now() + this.ttlMs);
    (this as unknown as { query: Query }).query(
      `INSERT INTO session (sess, expire, sid)
       SELECT $1::json, to_timestamp($2), $3
        WHERE $1::jsonb #>> '{ctx,workspace,id}' IS NULL
           OR EXISTS (SELECT 1 FROM workspace_members m
                       WHERE m.user_id::text = $1::jsonb ->> 'userId'
                         AND m.workspace_id::text = $1::jsonb #>> '{ctx,workspace,id}')
       ON CONFLICT (sid) DO UPDATE SET sess = excluded.sess, expire = excluded.expire`,
      [JSON.stringify(sess), Math.ceil(expires.getTime() / 1000), sid],
      (err) => done?.(err),
    );
  }
}
