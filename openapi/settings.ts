import { z } from 'zod';
import { blockSchema, RETENTION_MONTHS, retentionSchema } from '../services/orders';
import { schema as callSettingsInput } from '../services/calls';
import { SHOP_TIME_ZONE } from '../services/shared';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { BODY_ERRORS, errors, instant, OWNER_ONLY, SESSION_ERRORS } from './common';

export const CallSettingsBody = named(
  'CallSettings',
  z.looseObject({
    max_attempts: z.number().int(),
    retry_interval_minutes: z.number().int(),
    calling_hours: z.looseObject({ start: z.string(), end: z.string() }).meta({ description: 'HH:MM, Morocco time; start inclusive, end exclusive' }),
    timezone: z.literal(SHOP_TIME_ZONE),
  }),
);
export const BlockedPhoneBody = named(
  'BlockedPhone',
  z.looseObject({
    phone: z.string().meta({ description: 'Normalised: `+212` and nine digits' }),
    reason: z.string().nullable(),
    created_at: instant,
  }),
);
export const RetentionBody = named(
  'RetentionSettings',
  z.looseObject({
    retention_months: z
      .number()
      .int()
      .min(RETENTION_MONTHS.min)
      .max(RETENTION_MONTHS.max)
      .meta({ description: "Months a customer's details are kept after the order's last change (default 24)" }),
  }),
);
const BLOCKED = { phone: '+212612345678', reason: 'Refused delivery twice', created_at: '2026-11-24T10:00:00.000Z' };

const EXAMPLE = { max_attempts: 3, retry_interval_minutes: 120, calling_hours: { start: '09:00', end: '21:00' }, timezone: SHOP_TIME_ZONE };

export function register(b: OpenApiBuilder): void {
  b.tag(
    'Settings',
    'How the confirmation loop calls: attempts, retry interval, calling hours; and the numbers it never calls (the block list): every member may change them. How long customers’ details are kept: the owner’s.',
  );
  b.add(
    {
      method: 'get',
      path: '/api/settings/calls',
      tag: 'Settings',
      security: ['session'],
      summary: "The workspace's call settings",
      responses: { 200: { description: 'The settings (defaults until changed)', schema: CallSettingsBody, example: EXAMPLE }, ...errors(SESSION_ERRORS) },
    },
    {
      method: 'put',
      path: '/api/settings/calls',
      tag: 'Settings',
      security: ['session'],
      summary: 'Change the call settings',
      description: 'Any of the fields; snake_case names are accepted too.',
      body: { schema: callSettingsInput, example: { maxAttempts: 3, retryIntervalMinutes: 60, callingHours: { start: '09:00', end: '21:00' } } },
      responses: { 200: { description: 'The settings now', schema: CallSettingsBody, example: EXAMPLE }, ...errors(SESSION_ERRORS, BODY_ERRORS) },
    },
    {
      method: 'get',
      path: '/api/settings/retention',
      tag: 'Settings',
      security: ['session'],
      summary: 'How long customers’ details are kept',
      description:
        "Each day the worker anonymises the orders whose last change is older than `retention_months`: the customer's name, phone, address, city and note, and their calls' summaries and replies. Statuses, amounts, dates and every statistic stay (docs/privacy.md).",
      responses: {
        200: { description: 'The setting (24 until changed)', schema: RetentionBody, example: { retention_months: 24 } },
        ...errors(SESSION_ERRORS),
      },
    },
    {
      method: 'put',
      path: '/api/settings/retention',
      tag: 'Settings',
      security: ['session'],
      summary: 'Change how long customers’ details are kept (the owner)',
      description: `A whole number of months from ${RETENTION_MONTHS.min} to ${RETENTION_MONTHS.max}; \`retention_months\` is accepted too. Orders already anonymised stay so.`,
      body: { schema: retentionSchema, example: { retentionMonths: 12 } },
      responses: {
        200: { description: 'The setting now', schema: RetentionBody, example: { retention_months: 12 } },
        ...errors(SESSION_ERRORS, BODY_ERRORS, OWNER_ONLY),
      },
    },
    {
      method: 'get',
      path: '/api/settings/blocked-phones',
      tag: 'Settings',
      security: ['session'],
      summary: "The workspace's block list",
      description:
        "Orders from these numbers are created `unconfirmed` with the flag `blocked_phone` and their operation cancelled: never called, no credit spent. Another workspace's list never applies.",
      responses: {
        200: { description: 'Newest first', schema: z.looseObject({ blocked_phones: z.array(BlockedPhoneBody) }), example: { blocked_phones: [BLOCKED] } },
        ...errors(SESSION_ERRORS),
      },
    },
    {
      method: 'post',
      path: '/api/settings/blocked-phones',
      tag: 'Settings',
      security: ['session'],
      summary: 'Block a number',
      description:
        'The phone in any form an order accepts (`0612345678`, `+212 6 12…`); stored normalised. Orders created from now on are flagged; existing orders are left as they are.',
      body: { schema: blockSchema, example: { phone: '06 12 34 56 78', reason: 'Refused delivery twice' } },
      responses: {
        201: { description: 'The entry', schema: BlockedPhoneBody, example: BLOCKED },
        ...errors(SESSION_ERRORS, BODY_ERRORS, {
          409: {
            description: 'PHONE_ALREADY_BLOCKED: the number is on the list already (nothing changes)',
            example: { error: 'This number is on the block list already', code: 'PHONE_ALREADY_BLOCKED' },
          },
        }),
      },
    },
    {
      method: 'delete',
      path: '/api/settings/blocked-phones/{phone}',
      tag: 'Settings',
      security: ['session'],
      summary: 'Unblock a number',
      description: 'New orders from the number are called again; orders already created stay as they are.',
      parameters: [
        {
          name: 'phone',
          in: 'path',
          description: 'The number in any accepted form, URL-encoded (`%2B212612345678`, `0612345678`)',
          schema: z.string(),
          example: '%2B212612345678',
        },
      ],
      responses: {
        204: { description: 'Removed' },
        ...errors(SESSION_ERRORS, {
          404: {
            description: "The number is not on the caller's workspace's list (or is no Moroccan number)",
            example: { error: 'This number is not on the block list' },
          },
        }),
      },
    },
  );
}
