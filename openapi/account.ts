import { z } from 'zod';
import { ORDER_STATUSES } from '../services/orders';
import { OUTCOMES } from '../services/calls';
import { MAX_DAYS } from '../services/stats';
import { DELIVERY_STATS_EXAMPLE, DeliveryStatsBody } from './deliveries';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { BODY_ERRORS, byOutcome, errors, SESSION_ERRORS } from './common';
import { LANGUAGES } from '../services/shared';

export const CreditsBody = named(
  'Credits',
  z.looseObject({
    credits: z.number().meta({ description: 'The balance: granted − spent' }),
    totalCredits: z.number(),
    totalSpent: z.number(),
  }),
);
export const CREDITS_EXAMPLE = { credits: 42.5, totalCredits: 50, totalSpent: 7.5 };

const count = z.number().int();
const rate = z.number().nullable();
const money = z
  .string()
  .regex(/^\d+\.\d{2}$/)
  .meta({ description: 'The `total_amount` of the confirmed orders added up, in MAD (orders in another currency or without an amount add nothing)' });

export const StatsBody = named(
  'Stats',
  z.looseObject({
    from: z.string(),
    to: z.string(),
    orders: count,
    by_status: z.looseObject(Object.fromEntries(ORDER_STATUSES.map((s) => [s, count])) as Record<(typeof ORDER_STATUSES)[number], typeof count>).meta({
      description:
        'The orders added in the period, by their status now: `confirmed` counts each confirmed order once, whoever confirmed it (a call, or a person changing the status). `/api/stats/team` counts calls instead.',
    }),
    confirmation_rate: rate.meta({
      description:
        'Confirmed ÷ orders whose confirmation has finished, leaving out the orders declined at once because their number is blocked; null when none',
    }),
    blocked: count.meta({ description: 'Orders declined at once because their number was on the block list (never called)' }),
    calls: count,
    answered_rate: rate,
    average_calls_to_confirm: rate,
    confirmed_amount: money,
    by_day: z.array(z.looseObject({ date: z.string(), orders: count, confirmed: count, confirmed_amount: money })),
    by_store: z.array(z.looseObject({ store_name: z.string(), orders: count, confirmed: count, confirmed_amount: money })),
    by_channel: z
      .looseObject(
        Object.fromEntries(
          ['human', 'voice', 'whatsapp'].map((channel) => [
            channel,
            z.looseObject({
              calls: count,
              answered: count.meta({
                description: 'Reached the customer: any outcome but no-answer and failed, or a WhatsApp message the customer wrote back to',
              }),
              answered_rate: rate,
              by_outcome: z.looseObject(Object.fromEntries(OUTCOMES.map((o) => [o, count]))),
              delivered: count.meta({ description: 'Orders this channel confirmed whose delivery ended `delivered` in the period' }),
              refused: count,
              returned: count,
              lost: count,
              delivered_rate: rate.meta({ description: 'delivered ÷ (delivered + refused + returned + lost) of the orders this channel confirmed' }),
            }),
          ]),
        ),
      )
      .meta({
        description:
          'Ended calls of the period by channel: members (human), voice agents, WhatsApp messages; and how the orders each confirmed ended at the door',
      }),
    delivery: DeliveryStatsBody,
  }),
);

export function register(b: OpenApiBuilder): void {
  b.tag('Account', "The signed-in user's language, and the workspace's credits and statistics.");
  b.add(
    {
      method: 'put',
      path: '/api/account',
      tag: 'Account',
      security: ['session'],
      summary: "Set the signed-in user's dashboard language",
      description:
        'Saved on the user: every page, on every device, is then in this language (before the `lang` cookie and `Accept-Language`). The API itself, its `error` codes and this document stay in English.',
      body: { schema: z.object({ language: z.enum(LANGUAGES) }), required: true, example: { language: 'fr' } },
      responses: {
        200: {
          description: 'The saved language',
          schema: named('AccountLanguage', z.looseObject({ language: z.enum(LANGUAGES) })),
          example: { language: 'fr' },
        },
        ...errors(SESSION_ERRORS, BODY_ERRORS, {
          400: {
            description: 'VALIDATION_ERROR: a language other than `en`, `fr`, `ar`; INVALID_JSON when the body is not JSON',
            example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { language: 'language must be one of en, fr, ar' } },
          },
        }),
      },
    },
    {
      method: 'get',
      path: '/api/credits',
      tag: 'Account',
      security: ['session'],
      summary: "The workspace owner's credit balance",
      responses: { 200: { description: 'The balance', schema: CreditsBody, example: CREDITS_EXAMPLE }, ...errors(SESSION_ERRORS) },
    },
    {
      method: 'get',
      path: '/api/stats',
      tag: 'Account',
      security: ['session'],
      summary: 'Confirmation figures of a period',
      parameters: [
        { name: 'from', in: 'query', description: 'First day (Morocco time), default 29 days before `to`', schema: z.string(), example: '2026-11-01' },
        { name: 'to', in: 'query', description: 'Last day, included; default today', schema: z.string(), example: '2026-11-30' },
      ],
      responses: {
        200: {
          description: 'The figures; `by_day` has every day of the period, `by_store` the 50 busiest stores',
          schema: StatsBody,
          example: {
            from: '2026-11-01',
            to: '2026-11-02',
            orders: 3,
            by_status: Object.fromEntries(ORDER_STATUSES.map((s) => [s, s === 'confirmed' ? 2 : s === 'pending' ? 1 : 0])),
            confirmation_rate: 1,
            blocked: 0,
            calls: 3,
            answered_rate: 0.67,
            average_calls_to_confirm: 1.5,
            confirmed_amount: '698.00',
            by_day: [
              { date: '2026-11-01', orders: 2, confirmed: 1, confirmed_amount: '349.00' },
              { date: '2026-11-02', orders: 1, confirmed: 1, confirmed_amount: '349.00' },
            ],
            by_store: [{ store_name: 'Atlas', orders: 3, confirmed: 2, confirmed_amount: '698.00' }],
            by_channel: {
              human: {
                calls: 1,
                answered: 1,
                answered_rate: 1,
                by_outcome: byOutcome({ confirmed: 1 }),
                delivered: 0,
                refused: 0,
                returned: 0,
                lost: 0,
                delivered_rate: null,
              },
              voice: {
                calls: 0,
                answered: 0,
                answered_rate: null,
                by_outcome: byOutcome(),
                delivered: 0,
                refused: 0,
                returned: 0,
                lost: 0,
                delivered_rate: null,
              },
              whatsapp: {
                calls: 3,
                answered: 2,
                answered_rate: 0.67,
                by_outcome: byOutcome({ confirmed: 1, 'no-answer': 2 }),
              },
            },
            delivery: DELIVERY_STATS_EXAMPLE,
          },
        },
        ...errors(SESSION_ERRORS, {
          400: {
            description: `VALIDATION_ERROR: a date that is not YYYY-MM-DD, from after to, more than ${MAX_DAYS} days`,
            example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { from: 'from must be on or before to' } },
          },
        }),
      },
    },
  );
}
