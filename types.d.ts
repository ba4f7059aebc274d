import 'express-session';
import type { UserContext } from './services/users';

declare module 'express-session' {
  interface SessionData {
    userId?: string;
    csrfToken?: string;
    notice?: string;
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
