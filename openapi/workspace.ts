import type { OpenApiBuilder } from './builder';
import { errors, NOT_FOUND, SESSION_ERRORS } from './common';

export function register(b: OpenApiBuilder): void {
  b.tag('Workspace', "The workspace's members.");
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
}
