import type { Knex } from 'knex';
import { isUuid, msg, ownerOnly, ValidationError } from '../../services/shared';
import type { WorkspaceActor } from '../../services/shared';
import type { AuditAction, AuditEvent, AuditTargetType } from './record';
import { record } from './record';

/** Events per page. */
export const AUDIT_PAGE_SIZE = 50;
/** How long an event is kept: a year, then the worker's housekeeping deletes it. */
const KEPT = "interval '1 year'";
/** Rows deleted per housekeeping pass at most: a year's backlog goes in slices, never one long lock. */
const PRUNE_BATCH = 5000;

/** One line of the log, as the page and the API show it. */
interface AuditEntry {
  id: string;
  at: string;
  action: AuditAction;
  /** Who: null for the system, or a user since deleted. */
  actor: { id: string; name: string; email: string } | null;
  target: { type: AuditTargetType; id: string | null; label: string | null } | null;
  details: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
}

/** Which page: the newest (nothing), the one `older` than a position, or `newer` than one (positions as the links give them). */
export interface AuditPageQuery {
  older?: unknown;
  newer?: unknown;
}

export interface AuditPage {
  events: AuditEntry[];
  /** The position to ask for the next page of older events with, null on the oldest page. */
  older: string | null;
  /** The position to ask for the page of newer events with, null on the newest page. */
  newer: string | null;
}

interface Position {
  at: string;
  id: string;
}

/** A row's place in the log, to the microsecond Postgres keeps (a JavaScript Date keeps milliseconds only). */
const POSITION_AT = `to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const AT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const encode = (p: Position) => Buffer.from(`${p.at}|${p.id}`).toString('base64url');

/** A position this service gave out; anything else (edited, foreign) is refused, naming the parameter. */
function decode(value: unknown, name: string): Position | undefined {
  if (value === undefined || value === '') return undefined;
  const text = typeof value === 'string' && /^[A-Za-z0-9_-]{1,200}$/.test(value) ? Buffer.from(value, 'base64url').toString('utf8') : '';
  const [at, id] = text.split('|');
  if (!at || !AT_RE.test(at) || Number.isNaN(Date.parse(at)) || !isUuid(id)) throw new ValidationError({ [name]: msg('auditPosition', { label: name }) });
  return { at, id };
}

/** The workspace's audit log, for its owner: newest first, by pages of 50; and its pruning after a year. */
export class AuditService {
  constructor(private readonly knex: Knex) {}

  /** Writes an event outside any transaction (an export, which changes nothing): see `audit.record`. */
  async record(event: AuditEvent): Promise<void> {
    await record(this.knex, event);
  }

  /** A page of the log (the owner's only: anyone else is refused, 403); `older` and `newer` are the links' positions. */
  async list(workspace: WorkspaceActor, page: AuditPageQuery = {}): Promise<AuditPage> {
    ownerOnly(workspace);
    const older = decode(page.older, 'older');
    const newer = older ? undefined : decode(page.newer, 'newer');
    const query = this.knex('audit_events as e')
      .leftJoin('users as u', 'u.id', 'e.actor_id')
      .where('e.workspace_id', workspace.id)
      .select(
        'e.id',
        'e.created_at',
        'e.action',
        'e.actor_id',
        'u.name as actor_name',
        'u.email as actor_email',
        'e.target_type',
        'e.target_id',
        'e.target_label',
        'e.details',
        'e.ip',
        'e.user_agent',
        this.knex.raw(`${POSITION_AT} AS position_at`),
      )
      .limit(AUDIT_PAGE_SIZE + 1);
    if (newer) {
      query.whereRaw('(e.created_at, e.id) > (?::timestamptz, ?::uuid)', [newer.at, newer.id]).orderBy([
        { column: 'e.created_at', order: 'asc' },
        { column: 'e.id', order: 'asc' },
      ]);
    } else {
      if (older) query.whereRaw('(e.created_at, e.id) < (?::timestamptz, ?::uuid)', [older.at, older.id]);
      query.orderBy([
        { column: 'e.created_at', order: 'desc' },
        { column: 'e.id', order: 'desc' },
      ]);
    }
    const rows = await query;
    const more = rows.length > AUDIT_PAGE_SIZE;
    const shown = rows.slice(0, AUDIT_PAGE_SIZE);
    if (newer) shown.reverse();
    const position = (row: (typeof rows)[number] | undefined) => (row ? encode({ at: row.position_at, id: row.id }) : null);
    // Going newer, what lies beyond is newer still (`more`), and the position given is older than the page.
    const hasOlder = newer ? shown.length > 0 : more;
    const hasNewer = newer ? more : older !== undefined && shown.length > 0;
    return {
      events: shown.map(toEntry),
      older: hasOlder ? position(shown.at(-1)) : null,
      newer: hasNewer ? position(shown[0]) : null,
    };
  }

  /** Events older than a year, and devices not seen for a year: at most PRUNE_BATCH of each per pass. */
  async prune(): Promise<number> {
    const events = await this.knex.raw(
      `DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE created_at < now() - ${KEPT} LIMIT ${PRUNE_BATCH})`,
    );
    const devices = await this.knex.raw(
      `DELETE FROM user_devices WHERE (user_id, device_hash) IN
         (SELECT user_id, device_hash FROM user_devices WHERE last_seen_at < now() - ${KEPT} LIMIT ${PRUNE_BATCH})`,
    );
    return (events.rowCount ?? 0) + (devices.rowCount ?? 0);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a row as the database returns it, read field by field
function toEntry(row: any): AuditEntry {
  return {
    id: row.id,
    at: new Date(row.created_at).toISOString(),
    action: row.action,
    actor: row.actor_id && row.actor_name !== null ? { id: row.actor_id, name: row.actor_name, email: row.actor_email } : null,
    target: row.target_type ? { type: row.target_type, id: row.target_id, label: row.target_label } : null,
    details: row.details ?? {},
    ip: row.ip,
    user_agent: row.user_agent,
  };
}
