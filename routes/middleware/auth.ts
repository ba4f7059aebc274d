import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Services } from '../../services';
import type { UserContext, KeyViewer } from '../../services/accounts';
import { SLIDE_EVERY_MS } from './session';

/**
 * Resolves the session to a user and their workspace. The context is kept in the session row,
 * which is read on every request anyway, and re-read from the database when missing (after
 * sign-in or a workspace change) and at the hourly slide of the session's expiry. A user who no
 * longer exists signs nobody in.
 */
export function loadUser(services: Services): RequestHandler {
  return async (req, _res, next) => {
    const s = req.session;
    if (!s?.userId) return next();
    if (!s.ctx || Date.now() - (s.slidAt ?? 0) > SLIDE_EVERY_MS) {
      const ctx = await services.users.context(s.userId);
      if (!ctx) {
        delete s.userId;
        delete s.ctx;
        return next();
      }
      s.ctx = ctx;
      s.slidAt = Date.now();
    }
    req.ctx = s.ctx;
    next();
  };
}

/** Makes the next request re-read the user's context (after their workspace changed). */
export function forgetContext(req: Request): void {
  if (req.session) delete req.session.ctx;
}

/** The credential of an `Authorization: Bearer <credential>` header, if that is what was sent. */
export function bearerCredential(req: Request): string | undefined {
  return /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
}

export type WorkspaceContext = UserContext & { workspace: NonNullable<UserContext['workspace']> };

/** The caller's context on a route behind requireApiWorkspace or requirePageWorkspace. */
export function workspaceOf(req: Request): WorkspaceContext {
  const ctx = req.ctx;
  if (!ctx?.workspace) throw new Error('workspaceOf used on a route without a workspace guard');
  return ctx as WorkspaceContext;
}

/** The caller as the API-key rules see them: a member lists and revokes their own keys, the owner all. */
export function keyViewer(req: Request): KeyViewer {
  const { user, workspace } = workspaceOf(req);
  return { userId: user.id, workspaceId: workspace.id, role: workspace.role };
}

export function requireApiUser(req: Request, res: Response, next: NextFunction): void {
  if (!req.ctx) {
    res.status(401).json({ error: 'Unauthorized' });
    return;
  }
  next();
}

export function requireApiWorkspace(req: Request, res: Response, next: NextFunction): void {
  requireApiUser(req, res, () => {
    if (!req.ctx!.workspace) {
      res.status(403).json({ error: 'No workspace found' });
      return;
    }
    next();
  });
}

export function requirePageUser(req: Request, res: Response, next: NextFunction): void {
  if (!req.ctx) {
    res.redirect(303, '/login');
    return;
  }
  next();
}

export function requirePageWorkspace(req: Request, res: Response, next: NextFunction): void {
  requirePageUser(req, res, () => {
    if (!req.ctx!.workspace) {
      res.redirect(303, '/workspace');
      return;
    }
    next();
  });
}
