import { z } from 'zod';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { AUDIT_ACTIONS } from '../services/audit';
import { BODY_ERRORS, errors, instant, NOT_FOUND, SESSION_ERRORS, uuid } from './common';

const Invitation = named('Invitation', z.looseObject({ id: uuid, email: z.string(), expires_at: instant, created_at: instant }));
const INVITATION = {
  id: '5b1f0c2e-8d3a-4f6b-9c7e-2a4d6f8b0c1e',
  email: 'amina@example.com',
  expires_at: '2026-12-01T09:00:00.000Z',
  created_at: '2026-11-24T09:00:00.000Z',
};
const AuditEvent = named(
  'AuditEvent',
  z.looseObject({
    id: uuid,
    at: instant,
    action: z.enum(AUDIT_ACTIONS),
    actor: z
      .looseObject({ id: uuid, name: z.string(), email: z.string() })
      .nullable()
      .meta({ description: 'Who: null for the system (or a user since deleted)' }),
    target: z
      .looseObject({ type: z.string(), id: z.string().nullable(), label: z.string().nullable() })
      .nullable()
      .meta({ description: "What the event is about: a key, a store, a member… by its id and a short name (a key's name and prefix, never its value)" }),
    details: z.record(z.string(), z.unknown()).meta({ description: 'The filters of an export, the names of the fields a change touched: never a secret' }),
    ip: z.string().nullable().meta({ description: "The client's address" }),
    user_agent: z.string().nullable().meta({ description: 'Its browser, cut to 200 characters' }),
  }),
);
const AUDIT_EVENT = {
  id: '0d9e4b7a-3c2f-4e1a-8b6d-5f7a9c1e3b2d',
  at: '2026-11-29T09:12:00.000Z',
  action: 'api_key_created',
  actor: { id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', name: 'Amina', email: 'amina@example.com' },
  target: { type: 'api_key', id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', label: 'Google Sheets (sk_live_AbCdEf)' },
  details: { expires_in_days: null },
  ip: '203.0.113.7',
  user_agent: 'Mozilla/5.0 (Linux; Android 14)',
};
const position = (name: string, description: string) => ({ name, in: 'query' as const, description, schema: z.string() });
const OWNER_ONLY = { 403: { description: 'The caller is a member, not the owner', example: { error: 'Forbidden' } } };

export function register(b: OpenApiBuilder): void {
  b.tag('Workspace', "The workspace's members, the owner's invitation links and its audit log.");
  b.add({
    method: 'get',
    path: '/api/workspace/audit',
    tag: 'Workspace',
    security: ['session'],
    summary: 'The audit log, 50 events a page (owner)',
    description:
      'Exports, erasures, member changes, key, credential and connection changes, settings changes and sign-ins from a new device: who, when, what and from which address, newest first, kept one year. Never a secret. Follow `older` (or `newer`) with the position the previous answer gave.',
    parameters: [
      position('older', 'The page of events older than this position (`older` of a previous answer)'),
      position('newer', 'The page of events newer than this position (`newer` of a previous answer)'),
    ],
    responses: {
      200: {
        description: 'A page of events, newest first, with the positions of the pages around it (null: none)',
        schema: z.looseObject({ events: z.array(AuditEvent), older: z.string().nullable(), newer: z.string().nullable() }),
        example: { events: [AUDIT_EVENT], older: null, newer: null },
      },
      ...errors(SESSION_ERRORS, OWNER_ONLY, {
        400: {
          description: 'VALIDATION_ERROR: `older` or `newer` is not a position this service gave',
          example: {
            error: 'Validation failed',
            code: 'VALIDATION_ERROR',
            fields: { older: 'older is not a position of this log: follow the links of a previous page' },
          },
        },
      }),
    },
  });
  b.add({
    method: 'delete',
    path: '/api/workspace/members/{userId}',
    tag: 'Workspace',
    security: ['session'],
    summary: 'Remove a member, or leave the workspace',
    description: 'The owner removes any member; a member removes only themself (leaving: their session loses the workspace).',
    responses: {
      204: { description: 'Removed' },
      ...errors(SESSION_ERRORS, NOT_FOUND('Member'), {
        403: { description: 'A member other than the owner removing someone else', example: { error: 'Only the workspace owner can remove members' } },
        409: { description: 'OWNER_CANNOT_BE_REMOVED', example: { error: 'The owner cannot be removed from the workspace', code: 'OWNER_CANNOT_BE_REMOVED' } },
      }),
    },
  });
  b.add(
    {
      method: 'get',
      path: '/api/workspace/invitations',
      tag: 'Workspace',
      security: ['session'],
      summary: 'List pending invitations (owner)',
      description: 'Invitations neither used, revoked nor expired, oldest first. Never a token or its hash.',
      responses: {
        200: { description: 'Pending invitations', schema: z.looseObject({ invitations: z.array(Invitation) }), example: { invitations: [INVITATION] } },
        ...errors(SESSION_ERRORS, OWNER_ONLY),
      },
    },
    {
      method: 'post',
      path: '/api/workspace/invitations',
      tag: 'Workspace',
      security: ['session'],
      summary: 'Invite an address: create a join link (owner)',
      description:
        'A single-use link `{PUBLIC_BASE_URL}/join/{token}` (32 random bytes, base64url), valid 7 days, for this address only. It is in this answer only (`no-store`); we keep only its SHA-256. The owner hands it over (WhatsApp, SMS): no e-mail is sent. A new link for an address replaces its pending one.',
      body: { schema: z.object({ email: z.string() }), required: true, example: { email: 'amina@example.com' } },
      responses: {
        201: {
          description: 'The invitation, with its join link',
          schema: z.looseObject({
            id: uuid,
            email: z.string(),
            expires_at: instant,
            join_url: z.string().meta({ description: '`{PUBLIC_BASE_URL}/join/` + 43 characters' }),
          }),
          example: { id: INVITATION.id, email: INVITATION.email, expires_at: INVITATION.expires_at, join_url: 'https://ocs.example.com/join/…' },
        },
        ...errors(SESSION_ERRORS, BODY_ERRORS, OWNER_ONLY),
      },
    },
    {
      method: 'delete',
      path: '/api/workspace/invitations/{id}',
      tag: 'Workspace',
      security: ['session'],
      summary: 'Revoke a pending invitation (owner)',
      description: 'Its link answers 410 from then on.',
      responses: { 204: { description: 'Revoked' }, ...errors(SESSION_ERRORS, NOT_FOUND('Invitation'), OWNER_ONLY) },
    },
  );
}
