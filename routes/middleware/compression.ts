import compression from 'compression';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Answers smaller than this are sent as they are: compressing them saves nothing worth the CPU. */
const COMPRESSION_THRESHOLD = 1024;

/**
 * Marks a response that shows a secret once (a new API key, a signing secret): it is never
 * compressed, because a compressed size next to attacker-chosen text can leak the secret (BREACH).
 */
export function doNotCompress(res: Response): void {
  res.locals.noCompression = true;
}

/** An answer that shows a secret (a key, a signing secret): never cached, never compressed. */
export function secretAnswer(res: Response): Response {
  res.set('Cache-Control', 'no-store');
  doNotCompress(res);
  return res;
}

/**
 * `/hooks` and everything under it, matched as Express routes it (case-insensitively, with or
 * without a query); read from `originalUrl` because a mounted router rewrites `req.url`.
 */
const HOOKS = /^\/hooks(?:[/?]|$)/i;

/** What may be compressed: our HTML, JSON, CSV and SVG — never agent callbacks, event streams or secrets. */
export function shouldCompress(req: Request, res: Response): boolean {
  if (HOOKS.test(req.originalUrl)) return false;
  if (res.locals.noCompression) return false;
  const type = String(res.getHeader('Content-Type') ?? '');
  if (type.startsWith('text/event-stream')) return false;
  return compression.filter(req, res);
}

/**
 * A streamed answer (a CSV export, a list written row by row) reaches the client as it is
 * produced: what was written in one turn of the event loop is flushed through the compressor after
 * it, rather than waiting for the compressor's 16 kB buffer to fill or the answer to end. Answers
 * sent whole (`res.json`, `res.render`) end without writing, so they are compressed in one piece.
 */
function flushEachBurst(_req: Request, res: Response, next: NextFunction): void {
  const write = res.write as (...args: unknown[]) => boolean;
  let flushQueued = false;
  res.write = function (this: Response, ...args: unknown[]) {
    if (!flushQueued) {
      flushQueued = true;
      setImmediate(() => {
        flushQueued = false;
        if (!res.destroyed) res.flush();
      });
    }
    return write.apply(this, args);
  } as Response['write'];
  next();
}

/** gzip, or brotli when the client prefers it; streamed answers are compressed as they stream. */
export function compressAnswers(): RequestHandler {
  const compress = compression({ threshold: COMPRESSION_THRESHOLD, filter: shouldCompress });
  return (req, res, next) => {
    // A client that accepts no encoding gets nothing compressed: skip wrapping every write for it
    // (most API clients; the answer it gets is the identity one any cache may give anybody).
    if (!req.headers['accept-encoding']) return next();
    compress(req, res, (err?: unknown) => (err ? next(err) : flushEachBurst(req, res, next)));
  };
}
