import { z } from 'zod';
import { outcomeSchema } from '../services/calls';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { BODY_ERRORS, errors, NOT_FOUND, SESSION_ERRORS } from './common';
import { CallBody, OperationBody } from './operations';
import { OrderBody } from './orders';

export const CallView = named('CallView', z.looseObject({ call: CallBody, operation: OperationBody, order: OrderBody }));

export function register(b: OpenApiBuilder): void {
  b.tag('Calls', 'The human call queue: claim the next due call, record its outcome.');
  b.add(
    {
      method: 'post',
      path: '/api/calls/next',
      tag: 'Calls',
      security: ['session'],
      summary: 'Claim the next due call',
      description:
        "Claims the workspace's next due human call for the caller (the order is `calling`); the claim expires if no outcome is recorded in time. A member holds one open call at a time: while the caller's claim is still open, the answer is that call again, in the same shape.",
      responses: {
        200: { description: 'The claimed call (or the caller’s call still open), its operation and order', schema: CallView },
        204: { description: 'Nothing is due, or the calling hours are closed' },
        ...errors(SESSION_ERRORS),
      },
    },
    {
      method: 'post',
      path: '/api/calls/{callId}/outcome',
      tag: 'Calls',
      security: ['session'],
      summary: 'Record the outcome of a claimed call',
      description:
        '`callbackAt` (or `callback_at`) is required for `postponed`: in the future, at most 30 days ahead. A follow-up call (a parcel the courier could not deliver, docs/team.md) takes its own outcomes instead: `rescheduled` (with `rescheduledFor`, a day from today to 30 days ahead, kept on the order and sent with `order.delivery_updated`), `refused` (the delivery becomes `refused`), `no-answer` (retried within the attempts setting), `wrong-number`; the order’s status does not change.',
      body: { schema: outcomeSchema(() => new Date()), example: { outcome: 'postponed', callbackAt: '2026-11-22T19:30:00.000Z', notes: 'Call back tonight' } },
      responses: {
        200: { description: 'The ended call, its operation and order', schema: CallView },
        ...errors(SESSION_ERRORS, BODY_ERRORS, NOT_FOUND('Call'), {
          409: {
            description: 'CALL_NOT_OPEN: the call has ended, its claim expired, or another member has it',
            example: { error: 'This call is no longer open for you: it has ended, its claim expired, or another member has it', code: 'CALL_NOT_OPEN' },
          },
        }),
      },
    },
  );
}
