import type { Knex } from 'knex';
import { z } from 'zod';
import { ConflictError, NotFoundError, moroccanPhone, normalizeMoroccanPhone, bodyFields, optionalText, parse, msg } from '../../services/shared';

/** A number of the workspace's block list: its orders are created unconfirmed, never called. */
export interface BlockedPhone {
  phone: string;
  reason: string | null;
  created_at: string;
}

export const blockSchema = z.object({
  phone: moroccanPhone,
  reason: optionalText('Reason', 200),
});

function toBlockedPhone(row: { phone: string; reason: string | null; created_at: Date }): BlockedPhone {
  return { phone: row.phone, reason: row.reason, created_at: row.created_at.toISOString() };
}

function notOnTheList(): NotFoundError {
  return new NotFoundError(msg('notBlocked'));
}

/** The block list of a workspace; every query is scoped by the workspace id it is given. */
export class BlockedPhoneService {
  constructor(private readonly knex: Knex) {}

  /** Newest first. */
  async list(workspaceId: string): Promise<BlockedPhone[]> {
    const rows = await this.knex('blocked_phones')
      .where({ workspace_id: workspaceId })
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'phone' }])
      .select('phone', 'reason', 'created_at');
    return rows.map(toBlockedPhone);
  }

  /** The entry of a normalised phone, or null. */
  async find(workspaceId: string, phone: string): Promise<BlockedPhone | null> {
    const row = await this.knex('blocked_phones').where({ workspace_id: workspaceId, phone }).first('phone', 'reason', 'created_at');
    return row ? toBlockedPhone(row) : null;
  }

  /** Adds `{phone, reason?}`; 409 PHONE_ALREADY_BLOCKED when the number is on the list already. */
  async add(workspaceId: string, body: unknown, db: Knex = this.knex): Promise<BlockedPhone> {
    const { phone, reason } = parse(blockSchema, bodyFields(body));
    const [row] = await db('blocked_phones')
      .insert({ workspace_id: workspaceId, phone, reason })
      .onConflict(['workspace_id', 'phone'])
      .ignore()
      .returning(['phone', 'reason', 'created_at']);
    if (!row) throw new ConflictError(msg('PHONE_ALREADY_BLOCKED'), 'PHONE_ALREADY_BLOCKED');
    return toBlockedPhone(row);
  }

  /** Removes a number given in any accepted form; 404 when it is not on this workspace's list. */
  async remove(workspaceId: string, phoneText: string): Promise<void> {
    const phone = normalizeMoroccanPhone(phoneText.trim());
    if (!phone) throw notOnTheList();
    const deleted = await this.knex('blocked_phones').where({ workspace_id: workspaceId, phone }).delete();
    if (deleted === 0) throw notOnTheList();
  }
}
