import { z } from 'zod';
import { ASSIGNMENTS } from '../services/team';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { BODY_ERRORS, errors, instant, NOT_FOUND, OWNER_ONLY, SESSION_ERRORS, uuid } from './common';

const money = z
  .string()
  .regex(/^\d+\.\d{2}$/)
  .nullable();

const PayRuleBody = named(
  'PayRule',
  z.looseObject({
    fixed: money.meta({ description: 'A fixed amount a month' }),
    per_confirmed: money.meta({ description: 'An amount per order the member’s call confirmed' }),
    per_delivered: money.meta({ description: 'An amount per order they confirmed that was delivered' }),
  }),
);

const MemberTermsBody = named(
  'MemberTerms',
  z.looseObject({
    user_id: uuid,
    name: z.string(),
    role: z.enum(['owner', 'member']),
    share: z.number().int().nullable().meta({ description: 'Percent of new orders with `weighted` assignment (0–100)' }),
    pay: PayRuleBody,
  }),
);

const TeamSettingsBody = named(
  'TeamSettings',
  z.looseObject({
    assignment: z.enum(ASSIGNMENTS).meta({
      description:
        '`open`: whoever asks takes the next due order (the default); `round_robin`: new orders go to the on-shift confirmers in turn; `weighted`: by each on-shift confirmer’s share',
    }),
    reserve_minutes: z.number().int().meta({ description: 'How long an assigned order waits for its assignee once due (default 30)' }),
    follow_ups: z.boolean().meta({ description: 'Follow-up calls for parcels the courier could not deliver (default on)' }),
    currency: z.string().meta({ description: 'The pay’s currency (ISO 4217, default MAD)' }),
  }),
);

const StoreConfirmersBody = named(
  'StoreConfirmers',
  z.looseObject({ store_name: z.string(), user_ids: z.array(uuid).meta({ description: 'The members its orders go to; empty: everyone on shift' }) }),
);

const TeamMemberBody = named(
  'TeamMember',
  z.looseObject({
    user_id: uuid,
    name: z.string(),
    email: z.string(),
    role: z.enum(['owner', 'member']),
    on_shift: z.boolean().meta({ description: 'On shift: the toggle is on and the member made a request within the last two hours' }),
    last_seen_at: instant.nullable(),
    open_call: z.looseObject({ id: uuid, order_id: uuid, started_at: instant }).nullable(),
    calls_today: z.number().int().meta({ description: 'Calls the member ended today (Morocco day)' }),
  }),
);

const PayViewBody = named(
  'PayView',
  z.looseObject({
    from: z.string(),
    to: z.string(),
    currency: z.string(),
    lines: z.array(
      z.looseObject({
        user_id: uuid,
        name: z.string(),
        rule: PayRuleBody,
        confirmed: z
          .number()
          .int()
          .meta({ description: 'Orders the member’s call confirmed within the period (an order counts once, for its last confirming call)' }),
        delivered: z.number().int().meta({ description: 'Orders they confirmed that were delivered within the period (by the delivery’s day)' }),
        fixed_part: z.string().meta({ description: 'The monthly amount times the part of each month the period covers' }),
        amount: z.string(),
      }),
    ),
  }),
);

const PERIOD = [
  { name: 'from', in: 'query' as const, description: 'First day (Morocco time), default 29 days before `to`', schema: z.string(), example: '2026-10-01' },
  { name: 'to', in: 'query' as const, description: 'Last day, included; default today', schema: z.string(), example: '2026-10-31' },
];

const SETTINGS_EXAMPLE = { assignment: 'weighted', reserve_minutes: 30, follow_ups: true, currency: 'MAD' };
const MEMBER_EXAMPLE = {
  user_id: '5d2c7a40-8e8b-4f0e-9d1c-6a1b2c3d4e5f',
  name: 'Salma',
  role: 'member',
  share: 25,
  pay: { fixed: null, per_confirmed: null, per_delivered: '10.00' },
};

export function register(b: OpenApiBuilder): void {
  b.tag('Team', 'Who is on shift, how new orders are assigned, what each confirmer is paid (docs/team.md).');
  b.add(
    {
      method: 'put',
      path: '/api/me/shift',
      tag: 'Team',
      security: ['session'],
      summary: 'Go on or off shift',
      description:
        'Coming on shift hands the member their share of the orders that waited unassigned. Signing out, or two hours without a request, sets off shift.',
      body: { schema: z.looseObject({ on: z.boolean() }), example: { on: true } },
      responses: {
        200: { description: 'The member’s shift now', schema: z.looseObject({ on_shift: z.boolean() }), example: { on_shift: true } },
        ...errors(SESSION_ERRORS, BODY_ERRORS),
      },
    },
    {
      method: 'get',
      path: '/api/team',
      tag: 'Team',
      security: ['session'],
      summary: 'The members, their shift, their open call and their calls today',
      responses: { 200: { description: 'Owner first', schema: z.looseObject({ members: z.array(TeamMemberBody) }) }, ...errors(SESSION_ERRORS) },
    },
    {
      method: 'put',
      path: '/api/team/{userId}',
      tag: 'Team',
      security: ['session'],
      summary: 'Set a member’s share and pay rule (the owner)',
      description:
        '`share` (percent, 0–100, for `weighted` assignment) and `pay` `{fixed, perConfirmed, perDelivered}` (amounts ≥ 0, any of them: a combination adds up; null clears one). Fields left out keep their value.',
      body: {
        schema: z.looseObject({ share: z.number().int().nullable().optional(), pay: z.looseObject({}).optional() }),
        example: { share: 25, pay: { perDelivered: 10 } },
      },
      responses: {
        200: { description: 'The member’s terms now', schema: MemberTermsBody, example: MEMBER_EXAMPLE },
        ...errors(SESSION_ERRORS, BODY_ERRORS, OWNER_ONLY, NOT_FOUND('Member')),
      },
    },
    {
      method: 'get',
      path: '/api/settings/team',
      tag: 'Team',
      security: ['session'],
      summary: 'The assignment settings, each member’s terms and each store’s confirmers',
      responses: {
        200: {
          description: 'The settings (defaults until changed)',
          schema: TeamSettingsBody.extend({ members: z.array(MemberTermsBody), stores: z.array(StoreConfirmersBody) }),
        },
        ...errors(SESSION_ERRORS),
      },
    },
    {
      method: 'put',
      path: '/api/settings/team',
      tag: 'Team',
      security: ['session'],
      summary: 'Change the assignment settings (the owner)',
      description: 'Any of `assignment`, `reserveMinutes` (1–1440), `followUps` (boolean), `currency`; snake_case names are accepted too.',
      body: { schema: z.looseObject({}), example: { assignment: 'round_robin', reserveMinutes: 20 } },
      responses: {
        200: { description: 'The settings now', schema: TeamSettingsBody, example: SETTINGS_EXAMPLE },
        ...errors(SESSION_ERRORS, BODY_ERRORS, OWNER_ONLY),
      },
    },
    {
      method: 'put',
      path: '/api/settings/team/stores',
      tag: 'Team',
      security: ['session'],
      summary: 'Name a store’s confirmers (the owner)',
      description: 'The store’s new orders go to these members alone (those on shift); an empty list gives them to everyone again.',
      body: {
        schema: z.looseObject({ storeName: z.string(), userIds: z.array(uuid) }),
        example: { storeName: 'Atlas', userIds: ['5d2c7a40-8e8b-4f0e-9d1c-6a1b2c3d4e5f'] },
      },
      responses: { 200: { description: 'The store’s confirmers now', schema: StoreConfirmersBody }, ...errors(SESSION_ERRORS, BODY_ERRORS, OWNER_ONLY) },
    },
    {
      method: 'post',
      path: '/api/orders/assign',
      tag: 'Team',
      security: ['session'],
      summary: 'Reassign orders (the owner)',
      description:
        '`orderIds` (1–1000) go to `userId`, a member, or back to the pool with `null`: all of them or none. An assignment alone sends no `order.updated`.',
      body: {
        schema: z.looseObject({ orderIds: z.array(uuid), userId: uuid.nullable() }),
        example: { orderIds: ['0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10'], userId: null },
      },
      responses: {
        200: { description: 'How many were assigned', schema: z.looseObject({ assigned: z.number().int() }), example: { assigned: 1 } },
        ...errors(SESSION_ERRORS, BODY_ERRORS, OWNER_ONLY, NOT_FOUND('Order')),
      },
    },
    {
      method: 'get',
      path: '/api/stats/team/pay',
      tag: 'Team',
      security: ['session'],
      summary: 'Pay for a period',
      description:
        'Per member, the counts their rule uses and the amount. An order counts once, for the member whose call confirmed it; a delivered order counts in the period of its delivery. The owner gets every line, a member their own.',
      parameters: PERIOD,
      responses: { 200: { description: 'The pay view', schema: PayViewBody }, ...errors(SESSION_ERRORS, BODY_ERRORS) },
    },
    {
      method: 'get',
      path: '/api/stats/team/pay.csv',
      tag: 'Team',
      security: ['session'],
      summary: 'The pay view as CSV',
      description: 'UTF-8 with a BOM, a row per line of the pay view.',
      parameters: PERIOD,
      responses: {
        200: {
          description: 'The file (attachment)',
          media: 'text/csv',
          example: 'member,fixed_per_month,per_confirmed,per_delivered,confirmed,delivered,fixed_part,amount,currency\nSalma,,,10.00,40,31,0.00,310.00,MAD\n',
        },
        ...errors(SESSION_ERRORS, BODY_ERRORS),
      },
    },
  );
}
