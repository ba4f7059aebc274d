import type { RequestHandler } from 'express';
import { withOrigin } from '../../services/audit';

/**
 * Who acts and from where, for the audit log: the rest of the request runs with its signed-in user
 * (read when an event is recorded), its client address (`req.ip`, behind the trusted proxies) and
 * its browser. Mounted after the session is read.
 */
export const auditOrigin: RequestHandler = (req, _res, next) =>
  withOrigin(() => ({ actorId: req.ctx?.user.id ?? null, ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null }), next);
