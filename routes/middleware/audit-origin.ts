import type { RequestHandler } from 'express';
import { withOrigin } from '../../services/audit';

/**
 * Who acts and from where, for the audit log: the rest of the request runs with its signed-in user
 * (read when an event is recorded), its client address (`req.ip`, behind the trusted proxies) and
 * its browser. Mounted after the session is read.
 */
export const auditOrigin: RequestHandler = (req, _res, next) =>
  withOrigin(() => ({ actorId: req.ctx?.user.id ?? null, ip: plainAddress(req.ip), userAgent: req.get('user-agent') ?? null }), next);

/** An IPv4 address as people write it: `::ffff:203.0.113.7` (an IPv4 client of a dual-stack socket) is `203.0.113.7`. */
function plainAddress(ip: string | undefined): string | null {
  if (!ip) return null;
  return /^::ffff:\d{1,3}(\.\d{1,3}){3}$/i.test(ip) ? ip.slice(7) : ip;
}
