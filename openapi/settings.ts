import { z } from 'zod';
import { schema as callSettingsInput, TIMEZONE } from '../services/call-settings';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { BODY_ERRORS, errors, SESSION_ERRORS } from './common';

export const CallSettingsBody = named(
  'CallSettings',
  z.looseObject({
    max_attempts: z.number().int(),
    retry_interval_minutes: z.number().int(),
    calling_hours: z.looseObject({ start: z.string(), end: z.string() }).meta({ description: 'HH:MM, Morocco time; start inclusive, end exclusive' }),
    timezone: z.literal(TIMEZONE),
  }),
);
const EXAMPLE = { max_attempts: 3, retry_interval_minutes: 120, calling_hours: { start: '09:00', end: '21:00' }, timezone: TIMEZONE };

export function register(b: OpenApiBuilder): void {
  b.tag('Settings', 'How the confirmation loop calls: attempts, retry interval, calling hours.');
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
  );
}
