import type pg from 'pg';
import { queryPool } from '../../db/prepared';
import type { UserContext } from './users';

/** connect-pg-simple's read of a live session, as a prepared statement. */
const SESSION_READ = { name: 'ocs-session-read', text: 'SELECT sess FROM session WHERE sid = $1 AND expire >= now()' };

/** What a stored session holds that the JSON routes' fast path reads (express-session keeps the rest). */
export interface StoredSession {
  userId?: string;
  /** When the session's expiry last slid forward and its context was read (ms since epoch). */
  slidAt?: number;
  /** The user and workspace, as last read from the database. */
  ctx?: UserContext;
}

/**
 * The session store's rows (table `session`), read on the pool express-session writes them through.
 * Sign-in and the writes are express-session's; ending a user's sessions is UserService's.
 */
export class SessionService {
  constructor(private readonly pool: pg.Pool) {}

  /** A session by its id, when its row is there and not expired: one prepared read. */
  async live(sid: string): Promise<StoredSession | undefined> {
    const rows = await queryPool<{ sess: StoredSession }>(this.pool, SESSION_READ, [sid]);
    return rows[0]?.sess;
  }
}
