import type { Knex } from 'knex';
import { SHOP_TIME_ZONE } from '../../services/shared';
import { assignWaiting } from './assignment';

/** A member is off shift after this long without a request, whatever their toggle says. */
const IDLE_OFF_SHIFT_HOURS = 2;
/** A member's last request is written at most this often: one UPDATE a minute, not one a request. */
const SEEN_EVERY_MS = 60_000;

/** The SQL of "this member is on shift" for workspace_members aliased `m`, at the database's clock. */
export const ON_SHIFT_SQL = `(m.on_shift AND m.last_seen_at > now() - interval '${IDLE_OFF_SHIFT_HOURS} hours')`;

export interface TeamMember {
  user_id: string;
  name: string;
  email: string;
  role: 'owner' | 'member';
  on_shift: boolean;
  last_seen_at: string | null;
  /** The call the member has open now (claimed, no outcome yet), if any. */
  open_call: { id: string; order_id: string; started_at: string } | null;
  /** Calls the member ended today (Morocco day). */
  calls_today: number;
}

/**
 * Who is working: a member's toggle (`on_shift`) and their last request (`last_seen_at`). The shift
 * is derived: on while the toggle is on and the last request is under two hours old, so nobody has
 * to sweep idle members off; the first request after such a pause writes the toggle off.
 */
export class ShiftService {
  /** When this process last wrote each member's last request. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly knex: Knex) {}

  /** A member's request: their last request written when it is a minute old or more. */
  async touch(userId: string, workspaceId: string): Promise<void> {
    const now = Date.now();
    if (now - (this.seen.get(userId) ?? 0) < SEEN_EVERY_MS) return;
    this.seen.set(userId, now);
    if (this.seen.size > 10_000) this.seen.clear();
    await this.knex.raw(`UPDATE workspace_members m SET on_shift = ${ON_SHIFT_SQL}, last_seen_at = now() WHERE m.user_id = ? AND m.workspace_id = ?`, [
      userId,
      workspaceId,
    ]);
  }

  /** Whether the member is on shift now. */
  async isOn(userId: string, workspaceId: string): Promise<boolean> {
    const row = await this.knex('workspace_members as m')
      .where({ 'm.user_id': userId, 'm.workspace_id': workspaceId })
      .first(this.knex.raw(`${ON_SHIFT_SQL} AS on`));
    return row?.on === true;
  }

  /**
   * Puts the member on or off shift. Coming on shift hands them their share of the orders that
   * waited unassigned while nobody was on shift.
   */
  async set(workspaceId: string, userId: string, on: boolean): Promise<{ on_shift: boolean }> {
    this.seen.set(userId, Date.now());
    await this.knex.transaction(async (trx) => {
      await trx('workspace_members').where({ workspace_id: workspaceId, user_id: userId }).update({ on_shift: on, last_seen_at: trx.fn.now() });
    });
    if (on) await assignWaiting(this.knex, workspaceId);
    return { on_shift: on };
  }

  /** The members with their shift, their open call and their calls today. */
  async team(workspaceId: string): Promise<TeamMember[]> {
    const rows = await this.knex('workspace_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.workspace_id', workspaceId)
      .orderBy([{ column: 'm.role', order: 'desc' }, { column: 'u.name' }, { column: 'u.id' }])
      .select(
        'm.user_id',
        'u.name',
        'u.email',
        'm.role',
        'm.last_seen_at',
        this.knex.raw(`${ON_SHIFT_SQL} AS on_shift`),
        this.knex.raw(
          `(SELECT json_build_object('id', c.id, 'order_id', op.order_id, 'started_at', c.started_at)
              FROM calls c JOIN operations op ON op.id = c.operation_id
             WHERE c.workspace_id = m.workspace_id AND c.made_by = m.user_id AND c.kind = 'human' AND c.ended_at IS NULL AND c.dropped_at IS NULL
             ORDER BY c.started_at DESC LIMIT 1) AS open_call`,
        ),
        this.knex.raw(
          `(SELECT count(*)::int FROM calls c
             WHERE c.workspace_id = m.workspace_id AND c.made_by = m.user_id AND c.outcome IS NOT NULL AND c.dropped_at IS NULL
               AND c.started_at >= (date_trunc('day', now() AT TIME ZONE '${SHOP_TIME_ZONE}') AT TIME ZONE '${SHOP_TIME_ZONE}')) AS calls_today`,
        ),
      );
    return rows.map((row) => ({
      user_id: row.user_id,
      name: row.name,
      email: row.email,
      role: row.role,
      on_shift: row.on_shift === true,
      last_seen_at: row.last_seen_at ? new Date(row.last_seen_at).toISOString() : null,
      open_call: row.open_call ? { ...row.open_call, started_at: new Date(row.open_call.started_at).toISOString() } : null,
      calls_today: row.calls_today,
    }));
  }
}
