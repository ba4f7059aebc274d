import type { Knex } from 'knex';
import { z } from 'zod';
import { NotFoundError, ValidationError, bodyFields, camelOrSnake, isUuid, msg, ownerOnly, parse } from '../../services/shared';
import type { WorkspaceActor } from '../../services/shared';

export const ASSIGNMENTS = ['open', 'round_robin', 'weighted'] as const;
type Assignment = (typeof ASSIGNMENTS)[number];

export interface TeamSettings {
  assignment: Assignment;
  reserve_minutes: number;
  follow_ups: boolean;
  currency: string;
}

/** A member's pay rule: any of a fixed amount a month, an amount per confirmed and per delivered order. */
export interface PayRule {
  fixed: string | null;
  per_confirmed: string | null;
  per_delivered: string | null;
}

export interface MemberTerms {
  user_id: string;
  name: string;
  role: 'owner' | 'member';
  /** Percent of the weighted assignment. */
  share: number | null;
  pay: PayRule;
}

const DEFAULTS: TeamSettings = { assignment: 'open', reserve_minutes: 30, follow_ups: true, currency: 'MAD' };

/** A form's text as a number when it is one (pages post text; the API posts JSON numbers). */
const numeric = (value: unknown) => (typeof value === 'string' && /^\s*\d+([.,]\d+)?\s*$/.test(value) ? Number(value.replace(',', '.')) : value);
const flag = (value: unknown) => (value === 'true' || value === 'on' ? true : value === 'false' || value === 'off' ? false : value);

const settingsSchema = z.object({
  assignment: z.enum(ASSIGNMENTS, { error: msg('oneOf', { label: 'assignment', allowed: ASSIGNMENTS.join(', ') }) }).optional(),
  reserveMinutes: z.preprocess(
    numeric,
    z
      .number({ error: msg('wholeNumber', { label: 'reserveMinutes', min: 1, max: 1440 }) })
      .int(msg('wholeNumber', { label: 'reserveMinutes', min: 1, max: 1440 }))
      .min(1, msg('wholeNumber', { label: 'reserveMinutes', min: 1, max: 1440 }))
      .max(1440, msg('wholeNumber', { label: 'reserveMinutes', min: 1, max: 1440 }))
      .optional(),
  ),
  followUps: z.preprocess(flag, z.boolean({ error: msg('notValid', { label: 'followUps' }) }).optional()),
  currency: z
    .string({ error: msg('currencyInvalid') })
    .trim()
    .toUpperCase()
    .regex(/^[A-Z]{3}$/, msg('currencyInvalid'))
    .optional(),
});

const amount = (label: string) =>
  z.preprocess(
    (value) => (value === '' ? null : numeric(value)),
    z
      .number({ error: msg('payAmount', { label }) })
      .min(0, msg('payAmount', { label }))
      .max(1_000_000_000, msg('payAmount', { label }))
      .nullable()
      .optional(),
  );

const termsSchema = z.object({
  share: z.preprocess(
    (value) => (value === '' ? null : numeric(value)),
    z
      .number({ error: msg('wholeNumber', { label: 'share', min: 0, max: 100 }) })
      .int(msg('wholeNumber', { label: 'share', min: 0, max: 100 }))
      .min(0, msg('wholeNumber', { label: 'share', min: 0, max: 100 }))
      .max(100, msg('wholeNumber', { label: 'share', min: 0, max: 100 }))
      .nullable()
      .optional(),
  ),
  fixed: amount('fixed'),
  perConfirmed: amount('perConfirmed'),
  perDelivered: amount('perDelivered'),
});

const amountText = (value: unknown) => (value === null || value === undefined ? null : Number(value).toFixed(2));

/** The team's settings (assignment, reserve, follow-ups, pay currency), each member's share and pay rule, and each store's confirmers. */
export class TeamSettingsService {
  constructor(private readonly knex: Knex) {}

  async get(workspaceId: string, db: Knex | Knex.Transaction = this.knex): Promise<TeamSettings> {
    const row = await db('team_settings').where({ workspace_id: workspaceId }).first('assignment', 'reserve_minutes', 'follow_ups', 'currency');
    return row ?? { ...DEFAULTS };
  }

  /** Every member may read; the owner alone changes (400 names each bad field, nothing changes). */
  async update(workspace: WorkspaceActor, body: unknown): Promise<TeamSettings> {
    ownerOnly(workspace);
    const source = bodyFields(body);
    const input = parse(settingsSchema, {
      assignment: source.assignment,
      reserveMinutes: camelOrSnake(source, 'reserveMinutes', 'reserve_minutes'),
      followUps: camelOrSnake(source, 'followUps', 'follow_ups'),
      currency: source.currency,
    });
    return this.knex.transaction(async (trx) => {
      const current = await this.get(workspace.id, trx);
      const row: TeamSettings = {
        assignment: input.assignment ?? current.assignment,
        reserve_minutes: input.reserveMinutes ?? current.reserve_minutes,
        follow_ups: input.followUps ?? current.follow_ups,
        currency: input.currency ?? current.currency,
      };
      await trx('team_settings')
        .insert({ workspace_id: workspace.id, ...row })
        .onConflict('workspace_id')
        .merge();
      return row;
    });
  }

  async members(workspaceId: string): Promise<MemberTerms[]> {
    const rows = await this.knex('workspace_members as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.workspace_id', workspaceId)
      .orderBy([{ column: 'm.role', order: 'desc' }, { column: 'u.name' }, { column: 'u.id' }])
      .select('m.user_id', 'u.name', 'm.role', 'm.share', 'm.pay_fixed', 'm.pay_per_confirmed', 'm.pay_per_delivered');
    return rows.map((row) => ({
      user_id: row.user_id,
      name: row.name,
      role: row.role,
      share: row.share,
      pay: { fixed: amountText(row.pay_fixed), per_confirmed: amountText(row.pay_per_confirmed), per_delivered: amountText(row.pay_per_delivered) },
    }));
  }

  /** The owner sets a member's share and pay rule; fields left out keep their value, null clears one. */
  async setTerms(workspace: WorkspaceActor, userId: string, body: unknown): Promise<MemberTerms> {
    ownerOnly(workspace);
    const source = bodyFields(body);
    const pay = (source.pay && typeof source.pay === 'object' ? source.pay : source) as Record<string, unknown>;
    const input = parse(termsSchema, {
      share: source.share,
      fixed: pay.fixed,
      perConfirmed: camelOrSnake(pay, 'perConfirmed', 'per_confirmed'),
      perDelivered: camelOrSnake(pay, 'perDelivered', 'per_delivered'),
    });
    if (!isUuid(userId)) throw memberNotFound();
    const patch = Object.fromEntries(
      Object.entries({ share: input.share, pay_fixed: input.fixed, pay_per_confirmed: input.perConfirmed, pay_per_delivered: input.perDelivered }).filter(
        ([, value]) => value !== undefined,
      ),
    );
    const updated =
      Object.keys(patch).length > 0
        ? await this.knex('workspace_members').where({ workspace_id: workspace.id, user_id: userId }).update(patch)
        : await this.knex('workspace_members')
            .where({ workspace_id: workspace.id, user_id: userId })
            .count({ n: '*' })
            .first()
            .then((r) => Number(r?.n));
    if (!updated) throw memberNotFound();
    const member = (await this.members(workspace.id)).find((m) => m.user_id === userId);
    if (!member) throw memberNotFound();
    return member;
  }

  /** Each store that names its own confirmers, and them. */
  async stores(workspaceId: string): Promise<Array<{ store_name: string; user_ids: string[] }>> {
    const rows = await this.knex('store_confirmers')
      .where({ workspace_id: workspaceId })
      .groupBy('store_name')
      .orderBy('store_name')
      .select('store_name', this.knex.raw('array_agg(user_id ORDER BY user_id) AS user_ids'));
    return rows;
  }

  /** The owner names a store's confirmers (an empty list: the store's orders go to everyone on shift). */
  async setStore(workspace: WorkspaceActor, body: unknown): Promise<{ store_name: string; user_ids: string[] }> {
    ownerOnly(workspace);
    const source = bodyFields(body);
    const storeName = typeof camelOrSnake(source, 'storeName', 'store_name') === 'string' ? String(camelOrSnake(source, 'storeName', 'store_name')).trim() : '';
    const given = camelOrSnake(source, 'userIds', 'user_ids');
    const userIds = given === undefined ? [] : Array.isArray(given) ? given : [given];
    const fields: Record<string, ReturnType<typeof msg>> = {};
    if (!storeName) fields.storeName = msg('required', { label: 'storeName' });
    else if (storeName.length > 200 || storeName.includes('\u0000')) fields.storeName = msg('tooLong', { label: 'storeName', max: 200 });
    if (!userIds.every((id) => typeof id === 'string' && isUuid(id))) fields.userIds = msg('notValid', { label: 'userIds' });
    if (Object.keys(fields).length > 0) throw new ValidationError(fields);
    const ids = [...new Set(userIds as string[])];
    return this.knex.transaction(async (trx) => {
      const members = await trx('workspace_members').where({ workspace_id: workspace.id }).whereIn('user_id', ids).pluck('user_id');
      if (members.length !== ids.length) throw new ValidationError({ userIds: msg('memberNotFound') });
      await trx('store_confirmers').where({ workspace_id: workspace.id, store_name: storeName }).delete();
      if (ids.length > 0) await trx('store_confirmers').insert(ids.map((user_id) => ({ workspace_id: workspace.id, store_name: storeName, user_id })));
      return { store_name: storeName, user_ids: [...ids].sort() };
    });
  }
}

function memberNotFound(): NotFoundError {
  return new NotFoundError(msg('memberNotFound'));
}
