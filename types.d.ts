import 'express-session';
import type { Logger } from './logger';
import type { UserContext } from './services/accounts';

declare module 'express-session' {
  interface SessionData {
    userId?: string;
    csrfToken?: string;
    notice?: string;
    /** When the session's expiry last slid forward and its context was read (ms since epoch). */
    slidAt?: number;
    /** The user and workspace, as last read from the database. */
    ctx?: UserContext;
  }
}

declare global {
  namespace Express {
    interface Request {
      /** The signed-in user and their workspace, when there is a valid session. */
      ctx?: UserContext;
      /** The request's id (its `X-Request-Id`), set by the request log. */
      id: string;
      /** A logger whose lines carry the request's id, method and path. */
      log: Logger;
    }
  }
}
