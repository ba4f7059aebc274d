/**
 * What ends a call and how it arrives: the outcome's details, a voice agent's authenticated report,
 * the schema of an outcome a member or an agent sends, and the summaries the service writes itself.
 */
import { z } from 'zod';
import { decode, msg, plain } from '../../services/shared';
import type { Coded, Message } from '../../services/shared';
import { amountFields } from '../orders';
import type { Outcome } from './outcomes';
import { OUTCOMES } from './outcomes';

export interface OutcomeDetails {
  outcome: Outcome;
  callbackAt?: Date | null;
  changes?: string | null;
  summary?: string | null;
  durationSeconds?: number | null;
  /** What the customer wrote back to a WhatsApp message. */
  reply?: string | null;
  /** The code of a summary the service wrote itself (`systemSummary`), for the pages; absent for an agent's or a member's words. */
  summaryCode?: Coded | null;
}

/** A summary the service writes itself (no agent or member said it): its English for the API, its code for the pages. */
export function systemSummary(message: Message): { summary: string; summaryCode: Coded | null } {
  return { summary: plain(message), summaryCode: decode(message) };
}

/** A report a voice agent sent, authenticated. */
export type AgentReport = { type: 'call.started' } | ({ type: 'call.ended' } & OutcomeDetails);

const text = (field: string) =>
  z
    .string({ error: msg('notText', { label: field }) })
    .max(2000, msg('tooLong', { label: field, max: '2,000' }))
    .nullable()
    .optional();

/** What an outcome report carries, from a member (camelCase or snake_case) or a voice agent. */
export function outcomeSchema(now: () => Date) {
  return z
    .object({
      outcome: z.enum(OUTCOMES, { error: msg('oneOf', { label: 'outcome', allowed: OUTCOMES.join(', ') }) }),
      callbackAt: z.iso
        .datetime({ offset: true, error: msg('isoDateTime', { label: 'callbackAt' }) })
        .nullable()
        .optional(),
      changes: text('changes'),
      notes: text('notes'),
      // The caller settles the amount with the customer: applied with the outcome.
      ...amountFields,
    })
    .superRefine((value, ctx) => {
      if (value.outcome !== 'postponed') return;
      if (!value.callbackAt) {
        ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: msg('requiredForPostponed', { label: 'callbackAt' }) });
        return;
      }
      const at = new Date(value.callbackAt).getTime();
      const current = now().getTime();
      if (at <= current) ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: msg('future', { label: 'callbackAt' }) });
      else if (at > current + 30 * 86_400_000) ctx.addIssue({ code: 'custom', path: ['callbackAt'], message: msg('within30', { label: 'callbackAt' }) });
    });
}
