import { z } from 'zod';
import { FOLLOW_UP_OUTCOMES, OUTCOMES } from '../services/calls';
import { named } from './builder';
import { instant, uuid } from './common';

const Outcome = named(
  'Outcome',
  z.enum([...OUTCOMES, ...FOLLOW_UP_OUTCOMES.filter((o) => !(OUTCOMES as readonly string[]).includes(o))]).meta({
    description: 'A confirmation call’s outcome, or a follow-up call’s (`rescheduled`, `refused`, `no-answer`, `wrong-number`: docs/team.md)',
  }),
);

export const CallBody = named(
  'Call',
  z.looseObject({
    id: uuid,
    kind: z.enum(['human', 'voice', 'whatsapp']).meta({ description: 'Who made it: a member, a voice agent, or a WhatsApp message' }),
    attempt: z.number().int(),
    started_at: instant,
    ended_at: instant.nullable(),
    outcome: Outcome.nullable(),
    duration_seconds: z.number().int().nullable(),
    summary: z.string().nullable(),
    changes: z.string().nullable(),
    callback_at: instant.nullable(),
    made_by: uuid.nullable().meta({ description: 'The member who made a human call' }),
    cost: z.number().meta({ description: 'Credits charged for this call' }),
    reply: z
      .string()
      .nullable()
      .meta({ description: 'What the customer wrote back to a WhatsApp message instead of pressing a button ("[audio]", "[image]" … for media)' }),
  }),
);

export const OperationBody = named(
  'Operation',
  z.looseObject({
    id: uuid,
    order_id: uuid,
    agent_id: uuid,
    status: z.enum(['pending', 'in_progress', 'completed', 'cancelled']),
    attempts: z.number().int(),
    next_attempt_at: instant.nullable().meta({ description: 'When pending: when it is due' }),
    created_at: instant,
    calls: z.array(CallBody),
  }),
);
