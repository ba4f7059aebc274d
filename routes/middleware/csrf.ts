import crypto from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, msg } from '../../services/shared';
import { sameSecret } from '../../integrations/secret-compare';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

class CrossSiteError extends AppError {
  constructor() {
    super(403, msg('crossSite'));
  }
}

/**
 * Refuses state-changing requests that a browser marks as coming from another site: by
 * Fetch-Metadata where the browser sends it, else by an Origin that is present and not ours.
 * Clients that send neither (curl, servers) pass; they carry no ambient cookies to abuse.
 */
export function refuseCrossSite(publicBaseUrl: string): RequestHandler {
  const ownOrigin = new URL(publicBaseUrl).origin;
  return (req, _res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const site = req.get('sec-fetch-site');
    if (site) {
      return next(site === 'cross-site' || site === 'same-site' ? new CrossSiteError() : undefined);
    }
    const origin = req.get('origin');
    if (origin === undefined) return next();
    const requestOrigin = `${req.protocol}://${req.get('host')}`;
    next(origin === ownOrigin || origin === requestOrigin ? undefined : new CrossSiteError());
  };
}

/** The session's synchronizer token, created on first use. */
export function csrfToken(req: Request): string {
  if (!req.session) return '';
  req.session.csrfToken ??= crypto.randomBytes(32).toString('base64url');
  return req.session.csrfToken;
}

function sameToken(expected: string | undefined, given: unknown): boolean {
  if (!expected || typeof given !== 'string') return false;
  return sameSecret(given, expected);
}

/** Every page form post must carry the session's `_csrf` token. */
export function requireCsrfToken(req: Request, _res: Response, next: NextFunction): void {
  if (SAFE_METHODS.has(req.method)) {
    next();
    return;
  }
  next(sameToken(req.session?.csrfToken, req.body?._csrf) ? undefined : new AppError(403, msg('CSRF_TOKEN'), 'CSRF_TOKEN'));
}
