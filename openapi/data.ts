import type { OpenApiBuilder } from './builder';
import { CREDITS_EXAMPLE, CreditsBody } from './account';
import { DATA_API_ERRORS, errors } from './common';
import { orderRoutes } from './orders';

/** The Data API: the order routes of /api (update by PATCH) and the credits, by access token. */
export function register(b: OpenApiBuilder): void {
  b.add(
    {
      method: 'get',
      path: '/data/v1/credits',
      tag: 'Data API',
      security: ['dataApi'],
      summary: "The workspace owner's credit balance",
      responses: { 200: { description: 'The balance', schema: CreditsBody, example: CREDITS_EXAMPLE }, ...errors(DATA_API_ERRORS) },
    },
    ...orderRoutes('/data/v1', 'Data API', ['dataApi'], 'patch'),
  );
}
