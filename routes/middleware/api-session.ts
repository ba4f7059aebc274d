import { Router } from 'express';
import type { RequestHandler } from 'express';
import { parse as parseCookies } from 'cookie';
import { unsign } from 'cookie-signature';
import type pg from 'pg';
import type { SessionData } from 'express-session';
import { queryPool } from '../../db/prepared';
import { SESSION_COOKIE, SLIDE_EVERY_MS } from './session';

/** connect-pg-simple's read of a live session, as a prepared statement. */
const SESSION_READ = { name: 'ocs-session-read', text: 'SELECT sess FROM session WHERE sid = $1 AND expire >= now()' };

/** The session id a request's cookie carries, when its signature is good (as express-session reads it). */
export function signedSessionId(cookieHeader: string | undefined, secret: string): string | undefined {
  if (!cookieHeader) return undefined;
  const raw = parseCookies(cookieHeader)[SESSION_COOKIE];
  if (!raw?.startsWith('s:')) return undefined;
  return unsign(raw.slice(2), secret) || undefined;
}

/**
 * The session for the JSON routes. A signed-in session whose context is cached and fresh (the
 * common case: every request but the first after sign-in and one an hour) is one prepared read of
 * its row, and nothing else: the route gets the user and workspace as loadUser would give them,
 * and, the session being unchanged, express-session would neither write it nor set a cookie. Every
 * other case (no cookie, a bad signature, no row, a context to read or slide) goes through the
 * full path, express-session and loadUser, which may write the session. Reading the row on every
 * request keeps "sign out everywhere" and a member's removal immediate, as before.
 */
export function apiSession(secret: string, pool: pg.Pool, fullPath: RequestHandler[]): RequestHandler {
  const full = Router().use(fullPath);
  return (req, res, next) => {
    const sid = signedSessionId(req.headers.cookie, secret);
    if (!sid) return full(req, res, next);
    queryPool<{ sess: SessionData }>(pool, SESSION_READ, [sid]).then((rows) => {
      const sess = rows[0]?.sess;
      if (!sess?.userId || !sess.ctx || Date.now() - (sess.slidAt ?? 0) > SLIDE_EVERY_MS) return full(req, res, next);
      req.sessionID = sid;
      req.ctx = sess.ctx;
      next();
    }, next);
  };
}
