import 'express-session';
import type { UserContext } from './services/users';

declare module 'express-session' {
  interface SessionData {
    userId?: string;
    csrfToken?: string;
    notice?: string;
    /** When the session's expiry last slid forward (ms since epoch). */
    slidAt?: number;
  }
}

declare global {
  namespace Express {
    interface Request {
      /** The signed-in user and their workspace, when there is a valid session. */
      ctx?: UserContext;
    }
  }
}
