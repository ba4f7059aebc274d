import { z } from 'zod';
import { createSchema } from '../services/accounts';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { BODY_ERRORS, errors, instant, NOT_FOUND, SESSION_ERRORS, uuid } from './common';

export const ApiKeyBody = named(
  'ApiKey',
  z.looseObject({
    id: uuid,
    name: z.string(),
    prefix: z.string().meta({ description: 'The first characters of the key, to recognise it' }),
    created_at: instant,
    expires_at: instant.nullable(),
    last_used_at: instant.nullable(),
    revoked_at: instant.nullable(),
  }),
);
const KEY = {
  id: '7c6b5a49-3827-4160-9f8e-7d6c5b4a3928',
  name: 'my plugin',
  prefix: 'sk_live_AbC123',
  created_at: '2026-11-23T09:00:00.000Z',
  expires_at: '2027-02-21T09:00:00.000Z',
  last_used_at: null,
  revoked_at: null,
};

export function register(b: OpenApiBuilder): void {
  b.tag('API keys', 'Keys for integrators (session cookie only: credentials cannot mint credentials).');
  b.add(
    {
      method: 'get',
      path: '/api/keys',
      tag: 'API keys',
      security: ['session'],
      summary: "List API keys: the owner's view holds every key of the workspace, a member's their own",
      responses: {
        200: { description: 'Newest first', schema: z.looseObject({ keys: z.array(ApiKeyBody) }), example: { keys: [KEY] } },
        ...errors(SESSION_ERRORS),
      },
    },
    {
      method: 'post',
      path: '/api/keys',
      tag: 'API keys',
      security: ['session'],
      summary: 'Create an API key',
      description: 'The full key is in this answer only (`no-store`); only its hash is kept. `expires_in_days` is accepted too.',
      body: { schema: createSchema, required: false, example: { name: 'my plugin', expiresInDays: 90 } },
      responses: {
        201: {
          description: 'The key, with its full value `key`',
          schema: ApiKeyBody.extend({ key: z.string().meta({ description: '`sk_live_` + 43 characters' }) }),
          example: { ...KEY, key: 'sk_live_…' },
        },
        ...errors(SESSION_ERRORS, BODY_ERRORS),
      },
    },
    {
      method: 'delete',
      path: '/api/keys/{id}',
      tag: 'API keys',
      security: ['session'],
      summary: 'Revoke an API key',
      description:
        "Revoking again is harmless. A member revokes their own keys only (someone else's is 404); the owner any key of the workspace. Access tokens already issued stay valid until they expire, while their user belongs to the key's workspace.",
      responses: { 204: { description: 'Revoked' }, ...errors(SESSION_ERRORS, NOT_FOUND('API key')) },
    },
  );
}
