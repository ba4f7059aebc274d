import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Services } from '../../services';
import type { UserContext } from '../../services/users';

/** Resolves the session to a user and their workspace; a stale session simply signs nobody in. */
export function loadUser(services: Services): RequestHandler {
  return async (req, _res, next) => {
    const userId = req.session?.userId;
    if (userId) req.ctx = (await services.users.context(userId)) ?? undefined;
    next();
  };
}

export type WorkspaceContext = UserContext & { workspace: NonNullable<UserContext['workspace']> };

/** The caller's context on a route behind requireApiWorkspace or requirePageWorkspace. */
export function workspaceOf(req: Request): WorkspaceContext {
  const ctx = req.ctx;
  if (!ctx?.workspace) throw new Error('workspaceOf used on a route without a workspace guard');
  return ctx as WorkspaceContext;
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
