import { Router } from 'express';
import type { RequestHandler } from 'express';
import { parse as parseCookies } from 'cookie';
import { unsign } from 'cookie-signature';
import type { SessionService } from '../../services/accounts';
import { SESSION_COOKIE, SLIDE_EVERY_MS } from './session';

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
 * its row (SessionService.live), and nothing else: the route gets the user and workspace as loadUser would give them,
 * and, the session being unchanged, express-session would neither write it nor set a cookie. Every
 * other case (no cookie, a bad signature, no row, a context to read or slide) goes through the
 * full path, express-session and loadUser, which may write the session. Reading the row on every
 * request keeps "sign out everywhere" and a member's removal immediate, as before.
 */
export function apiSession(secret: string, sessions: SessionService, fullPath: RequestHandler[]): RequestHandler {
  const full = Router().use(fullPath);
  return (req, res, next) => {
    const sid = signedSessionId(req.headers.cookie, secret);
    if (!sid) return full(req, res, next);
    sessions.live(sid).then((sess) => {
      if (!sess?.userId || !sess.ctx || Date.now() - (sess.slidAt ?? 0) > SLIDE_EVERY_MS) return full(req, res, next);
      req.sessionID = sid;
      req.ctx = sess.ctx;
      next();
    }, next);
  };
}
