import session from 'express-session';
import type pg from 'pg';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { MemberSessionStore } from '../../db/session-store';

export const SESSION_COOKIE = 'ocs.sid';
const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** A signed-in session's expiry slides forward at most this often: one write an hour, not one a request. */
export const SLIDE_EVERY_MS = 60 * 60 * 1000;

/**
 * The session store: rows of the `session` table, touched hourly by loadUser, pruned by the worker,
 * and never written back for a workspace its user was removed from (see MemberSessionStore).
 */
export function sessionStore(pool: pg.Pool, logger: Logger) {
  return new MemberSessionStore(pool, SESSION_TTL_MS, (...args: unknown[]) => logger.error({ detail: args.map(String) }, 'session store error'));
}

/** Sessions live in Postgres, so any number of processes behave as one. */
export function sessionMiddleware(config: Config, pool: pg.Pool, logger: Logger) {
  return session({
    name: SESSION_COOKIE,
    store: sessionStore(pool, logger),
    secret: config.sessionSecret,
    resave: false,
    saveUninitialized: false,
    cookie: {
      httpOnly: true,
      sameSite: 'lax',
      secure: config.isProduction,
      maxAge: SESSION_TTL_MS,
    },
  });
}

type SessionCallback = (done: (err?: unknown) => void) => void;

function promisify(call: SessionCallback): Promise<void> {
  return new Promise((resolve, reject) => call((err) => (err ? reject(err) : resolve())));
}

export const regenerateSession = (s: session.Session) => promisify((done) => s.regenerate(done));
export const saveSession = (s: session.Session) => promisify((done) => s.save(done));
export const destroySession = (s: session.Session) => promisify((done) => s.destroy(done));
