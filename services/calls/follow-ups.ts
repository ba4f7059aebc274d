/**
 * A follow-up call's outcome (docs/team.md): the customer of a parcel the courier could not deliver
 * gives a day (`rescheduled`), confirms the refusal (`refused`), does not answer (`no-answer`,
 * retried like a confirmation call), or the number is not theirs (`wrong-number`). The order's
 * confirmation status never changes: the parcel's delivery does.
 */
import type { Knex } from 'knex';
import { z } from 'zod';
import { msg, shopDay } from '../../services/shared';
import { applyDeliveryEvent, notifyDeliveryUpdated } from '../deliveries';
import type { LockedCall } from './queries';
import { nextOpening, settingsFrom } from './settings';

export const FOLLOW_UP_OUTCOMES = ['rescheduled', 'refused', 'no-answer', 'wrong-number'] as const;

/** A rescheduled day is at most this far ahead. */
const RESCHEDULE_DAYS = 30;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** What a member sends to end a follow-up call. */
export function followUpSchema(now: () => Date) {
  return z
    .object({
      outcome: z.enum(FOLLOW_UP_OUTCOMES, { error: msg('oneOf', { label: 'outcome', allowed: FOLLOW_UP_OUTCOMES.join(', ') }) }),
      rescheduledFor: z
        .string({ error: msg('isoDate', { label: 'rescheduledFor' }) })
        .nullable()
        .optional(),
      notes: z
        .string({ error: msg('notText', { label: 'notes' }) })
        .max(2000, msg('tooLong', { label: 'notes', max: '2,000' }))
        .nullable()
        .optional(),
    })
    .superRefine((value, ctx) => {
      if (value.outcome !== 'rescheduled') return;
      const day = value.rescheduledFor?.trim() ?? '';
      const today = shopDay(now());
      const last = new Date(Date.parse(today) + RESCHEDULE_DAYS * 86_400_000).toISOString().slice(0, 10);
      if (!day) ctx.addIssue({ code: 'custom', path: ['rescheduledFor'], message: msg('required', { label: 'rescheduledFor' }) });
      else if (!DAY.test(day) || Number.isNaN(Date.parse(day)) || new Date(Date.parse(day)).toISOString().slice(0, 10) !== day)
        ctx.addIssue({ code: 'custom', path: ['rescheduledFor'], message: msg('isoDate', { label: 'rescheduledFor' }) });
      else if (day < today || day > last)
        ctx.addIssue({ code: 'custom', path: ['rescheduledFor'], message: msg('rescheduleRange', { label: 'rescheduledFor', days: RESCHEDULE_DAYS }) });
    });
}

export type FollowUpInput = z.infer<ReturnType<typeof followUpSchema>>;

/**
 * Ends a follow-up call (locked with its order by the caller) with the member's outcome, and applies
 * it, in the caller's transaction: the day kept on the order and `order.delivery_updated` sent; the
 * delivery `refused` if it was not; another try within the attempts setting; or the end.
 */
export async function endFollowUp(trx: Knex.Transaction, call: LockedCall, input: FollowUpInput, by: string, now: Date): Promise<void> {
  const settings = settingsFrom(call);
  let attempts = call.op_attempts as number;
  let next: Date | null = null;
  if (input.outcome === 'no-answer') {
    attempts += 1;
    if (attempts < settings.max_attempts) next = nextOpening(settings, new Date(now.getTime() + settings.retry_interval_minutes * 60_000));
  }
  await trx('calls')
    .where({ id: call.id })
    .update({ ended_at: now, outcome: input.outcome, summary: input.notes ?? null, ended_by: 'member', cost: 0 });
  await trx('operations')
    .where({ id: call.operation_id })
    .update({ attempts, status: next ? 'pending' : 'completed', next_attempt_at: next });
  const workspaceId = call.op_workspace_id as string;
  const orderId = call.order_id as string;
  if (input.outcome === 'rescheduled') {
    await trx('orders').where({ id: orderId, workspace_id: workspaceId }).update({ rescheduled_for: input.rescheduledFor?.trim() });
    await notifyDeliveryUpdated(trx, workspaceId, [orderId]);
  } else if (input.outcome === 'refused') {
    const order = await trx('orders').where({ id: orderId }).first('delivery_status');
    if (order?.delivery_status !== 'refused')
      await applyDeliveryEvent(trx, { workspaceId, orderId, status: 'refused', at: now, source: 'person', by }, { followUps: false });
  }
}

/** Whether the call belongs to a follow-up (a parcel in trouble) rather than a confirmation. */
export async function isFollowUpCall(knex: Knex, workspaceId: string, callId: string): Promise<boolean> {
  const row = await knex('calls as c')
    .join('operations as op', 'op.id', 'c.operation_id')
    .where({ 'c.id': callId, 'c.workspace_id': workspaceId })
    .first('op.purpose');
  return row?.purpose === 'follow_up';
}
