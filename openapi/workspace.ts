import { z } from 'zod';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { BODY_ERRORS, errors, instant, NOT_FOUND, SESSION_ERRORS, uuid } from './common';

const Invitation = named('Invitation', z.looseObject({ id: uuid, email: z.string(), expires_at: instant, created_at: instant }));
const INVITATION = {
  id: '5b1f0c2e-8d3a-4f6b-9c7e-2a4d6f8b0c1e',
  email: 'amina@example.com',
  expires_at: '2026-12-01T09:00:00.000Z',
  created_at: '2026-11-24T09:00:00.000Z',
};
const OWNER_ONLY = { 403: { description: 'The caller is a member, not the owner', example: { error: 'Forbidden' } } };

export function register(b: OpenApiBuilder): void {
  b.tag('Workspace', "The workspace's members, and the owner's invitation links.");
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
