import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { unreadableBytes } from '../../services/shared';

/** What an inbound route (under /hooks: voice agents, stores, carriers, WhatsApp) may read, and how long a sender may take to send it. */
export interface InboundBodyLimits {
  /** How long a body may take to arrive, from the moment its headers did. */
  bodyTimeoutMs: number;
  /** How many bodies one client address may be sending at once, before any signature holds. */
  bodiesPerIp: number;
}

/** Routes under /hooks without a connection or call id (a platform's privacy topics, a keys callback) read at most this. */
const ID_LESS_INBOUND_BODY_BYTES = 64 * 1024;

/** The mark of a body reader under the one guard (a route-enumerating test requires it wherever a stranger's body is read). */
const GUARDED_BODY = Symbol('guarded body reader');

/** Marks `reader` as one of the guard's: what the route-enumerating test looks for in a route's handlers. */
export function guarded<T extends RequestHandler>(reader: T): T {
  Object.defineProperty(reader, GUARDED_BODY, { value: true });
  return reader;
}

/** Whether a route's handler is one of the guard's body readers. */
export function isGuardedReader(handler: unknown): boolean {
  return typeof handler === 'function' && (handler as unknown as Record<symbol, unknown>)[GUARDED_BODY] === true;
}

/**
 * A body reader held to a time: the body must have arrived within `timeoutMs` of its headers (408
 * and the socket closed otherwise), and `admit` may refuse it before a byte is read (it answers
 * itself and returns false) or be told when it is done (`release`).
 */
export function withinTime(
  read: RequestHandler,
  timeoutMs: number,
  admit: (req: Request, res: Response) => { release: () => void } | undefined = () => ({ release: () => undefined }),
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const admitted = admit(req, res);
    if (!admitted) return;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      admitted.release();
    };
    const timer = setTimeout(() => {
      release();
      if (!res.headersSent) refuse(res, 408, 'request_timeout');
      // Whatever was answered, the sender that stalled is not waited for any longer.
      res.once('finish', () => req.socket.destroy());
      if (res.writableFinished) req.socket.destroy();
    }, timeoutMs);
    res.once('close', release);
    read(req, res, (err?: unknown) => {
      release();
      next(err);
    });
  };
}

/**
 * Reading a stranger's body before its signature can be checked is the one thing at /hooks that
 * costs memory: a megabyte per open connection, held for as long as the sender likes. So a body is
 * read only once its route knows the connection or call it names (404 before that), within
 * `bodyTimeoutMs` (then 408 and the socket is closed), and one client address may have at most
 * `bodiesPerIp` bodies arriving at once (429 beyond, nothing read). A signed sender's throughput
 * is not bounded: each of its bodies arrives in a moment and frees its place.
 */
export function inboundBodies(limits: InboundBodyLimits) {
  const reading = new Map<string, number>();

  /** One more body arriving from the request's address, unless it already sends `bodiesPerIp` (then 429, nothing read). */
  const admit = (req: Request, res: Response) => {
    const address = req.ip ?? 'unknown';
    const count = reading.get(address) ?? 0;
    if (count >= limits.bodiesPerIp) return void refuse(res, 429, 'rate_limited');
    reading.set(address, count + 1);
    return {
      release: () => {
        const left = (reading.get(address) ?? 1) - 1;
        if (left > 0) reading.set(address, left);
        else reading.delete(address);
      },
    };
  };

  /**
   * The raw bytes of the body, at most `limit` (413 beyond), read under the rules above; then, before
   * any signature is checked, bytes that are not UTF-8 or JSON nested past its depth are refused
   * (400 `unreadable_body`): what every route under /hooks reads goes through here.
   */
  const raw = (limit: string | number): RequestHandler => {
    const read = withinTime(express.raw({ type: () => true, limit }), limits.bodyTimeoutMs, admit);
    return guarded((req: Request, res: Response, next: NextFunction) =>
      read(req, res, (err?: unknown) => {
        if (err) return next(err);
        if (Buffer.isBuffer(req.body) && unreadableBytes(req.body)) return void res.status(400).json({ error: 'unreadable_body' });
        next();
      }),
    );
  };
  return { raw };
}

/** The body readers one inbound router shares between its routes (one count of bodies per client address). */
export type InboundBodies = ReturnType<typeof inboundBodies>;

/** The routes under /hooks that name a connection, a call or a WhatsApp agent: their bodies are read by `inboundBodies`. */
const ID_ROUTES = /^\/(?:stores|carriers|calls|whatsapp)\/[^/]+\/?$/i;

/**
 * For routes under /hooks that name no connection or call: a body over ID_LESS_INBOUND_BODY_BYTES is
 * refused from its declared length before anything is read (413), and one of unknown length (411),
 * so that whatever parser the route uses reads no more than that.
 */
export const idLessInboundBodies: RequestHandler = (req, res, next) => {
  if (ID_ROUTES.test(req.path)) return next();
  const declared = req.headers['content-length'];
  if (req.headers['transfer-encoding'] !== undefined && declared === undefined) return void refuse(res, 411, 'length_required');
  if (declared !== undefined && Number(declared) > ID_LESS_INBOUND_BODY_BYTES) return void refuse(res, 413, 'payload_too_large');
  next();
};

/** An answer that leaves the body unread: the connection is closed after it, so nothing more arrives. */
export function refuse(res: Response, status: number, error: string): void {
  res.set('Connection', 'close').status(status).json({ error });
}
