import { z } from 'zod';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { errors } from './common';

export const TokenBody = named(
  'AccessToken',
  z.looseObject({
    access_token: z.string(),
    token_type: z.literal('bearer'),
    expires_in: z.number().int().meta({ description: 'Seconds (3600)' }),
    project_url: z.string().meta({ description: 'The Data API is at `{project_url}/data/v1`' }),
    publishable_key: z.string().meta({ description: 'Send it as the `apikey` header of the Data API' }),
  }),
);

export function register(b: OpenApiBuilder): void {
  b.tag(
    'Data API',
    'For integrators: trade an API key for a one-hour access token, then call `/data/v1` with `apikey` and `Authorization: Bearer <access token>`.',
  );
  b.add({
    method: 'post',
    path: '/api/v1/token',
    tag: 'Data API',
    security: ['apiKey'],
    summary: 'Trade an API key for an access token',
    description:
      'No request body is read. No CORS headers, `Cache-Control: no-store`. Limited to 60 a 5 minutes per client IP and 12 per key (shared through Redis; fails open if Redis is down). There is no refresh token: exchange again shortly before `expires_in` runs out.',
    responses: {
      200: {
        description: 'The access token',
        schema: TokenBody,
        example: {
          access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…',
          token_type: 'bearer',
          expires_in: 3600,
          project_url: 'http://localhost:3000',
          publishable_key: 'pk_…',
        },
      },
      ...errors({
        401: { description: 'The same answer for a key that is missing, malformed, unknown, expired or revoked', example: { error: 'invalid_api_key' } },
        429: { description: 'Over a rate limit; `Retry-After` (seconds), `RateLimit` and `RateLimit-Policy` headers', example: { error: 'rate_limited' } },
        500: { description: 'The exchange failed', example: { error: 'server_error' } },
      }),
    },
  });
}
