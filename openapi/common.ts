import { z } from 'zod';
import type { Parameter, Response } from './builder';
import { named } from './builder';
import type { Outcome } from '../services/calls';
import { OUTCOMES } from '../services/calls';

/**
 * Shapes shared by the route groups. Response shapes are written here (the services type their
 * answers with TypeScript interfaces); the test suite checks every response it receives against
 * them, so they cannot drift unnoticed. Loose objects: an extra field is not a violation.
 */

export const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
/** `Date#toISOString()`: UTC with milliseconds. */
export const instant = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  .meta({ format: 'date-time' });

/** The JSON error body of every route (routes/middleware/errors.ts and services/shared/errors.ts). */
const ErrorBody = named(
  'Error',
  z
    .looseObject({
      error: z.string().meta({ description: 'What went wrong, for a person (or a fixed code such as `invalid_token` on the Data API and the token exchange)' }),
      code: z.string().optional().meta({
        description:
          'A stable code: VALIDATION_ERROR, INVALID_STATUS, INVALID_JSON, BAD_REQUEST, PAYLOAD_TOO_LARGE, TOO_MANY_ROWS, TOO_MANY_CELLS, TOO_MUCH_WORK, REPORT_INTERRUPTED, NO_ORDER_HANDLER, ORDER_NOT_EDITABLE, OPERATION_OPEN, PHONE_ALREADY_BLOCKED, CALL_NOT_OPEN, CALL_CLOSED, TOO_MANY_WEBHOOKS, WEBHOOK_DISABLED, INVALID_IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_IN_USE, IDEMPOTENCY_KEY_REUSED',
      }),
      fields: z
        .record(z.string(), z.string())
        .optional()
        .meta({ description: 'With VALIDATION_ERROR: the message of each bad field (or parameter), by its name' }),
      redirectTo: z.string().optional().meta({ description: 'With NO_ORDER_HANDLER: the dashboard page that fixes it (`/agents`)' }),
      allowed: z.array(z.string()).optional().meta({ description: 'With INVALID_STATUS: the statuses an order can have' }),
    })
    .meta({ description: 'Every error answer. `code`, `fields`, `redirectTo` and `allowed` appear only where they apply.' }),
);

export type ErrorExamples = Record<number, { description: string; example: unknown }>;

/** Error answers by status; each route picks the statuses it can answer. */
export function errors(...tables: ErrorExamples[]): Record<number, Response> {
  // A status given twice keeps the later example and both descriptions (general first).
  const table: ErrorExamples = {};
  for (const t of tables) {
    for (const [status, e] of Object.entries(t)) {
      const before = table[Number(status)];
      table[Number(status)] =
        before && before.description !== e.description && !e.description.includes(before.description)
          ? { description: `${e.description}. Also: ${before.description}`, example: e.example }
          : e;
    }
  }
  return Object.fromEntries(Object.entries(table).map(([status, e]) => [status, { description: e.description, schema: ErrorBody, example: e.example }]));
}

/**
 * What any route that reads a body can answer about the request itself: every /api and /data route
 * reads one (JSON whatever the Content-Type, even on GET), and a path that does not URL-decode is 400.
 */
export const REQUEST_ERRORS: ErrorExamples = {
  400: {
    description: 'INVALID_JSON: a body that is not JSON; BAD_REQUEST: a request that cannot be read (e.g. a path that does not URL-decode)',
    example: { error: 'Request body is not valid JSON', code: 'INVALID_JSON' },
  },
  413: { description: 'PAYLOAD_TOO_LARGE: the body is over 100 kB', example: { error: 'Request body is too large (limit 100 kB)', code: 'PAYLOAD_TOO_LARGE' } },
  415: {
    description: 'BAD_REQUEST: a body in a charset or Content-Encoding that is not supported',
    example: { error: 'The request could not be read', code: 'BAD_REQUEST' },
  },
};

/** The statuses every session route under /api can answer, before its own. */
export const SESSION_ERRORS: ErrorExamples = {
  ...REQUEST_ERRORS,
  401: { description: 'No session, or its user no longer exists', example: { error: 'Unauthorized' } },
  403: { description: 'The user has no workspace yet, or a browser sent a state-changing request from another site', example: { error: 'No workspace found' } },
  500: { description: 'An unexpected error (logged; no detail is given)', example: { error: 'Internal server error' } },
};

/** A route that changes an integration (a voice agent, a webhook endpoint) or shows its secret. */
export const OWNER_ONLY: ErrorExamples = {
  403: { description: 'Forbidden: the caller is a member, and this is for the workspace owner alone', example: { error: 'Forbidden' } },
};

/** What every JSON-body route can answer about the body itself. */
export const BODY_ERRORS: ErrorExamples = {
  400: {
    description: 'VALIDATION_ERROR with `fields`; INVALID_JSON when the body is not JSON; BAD_REQUEST when the request cannot be read',
    example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { phone: 'Enter a valid Moroccan phone number, e.g. 06 12 34 56 78' } },
  },
  413: { description: 'PAYLOAD_TOO_LARGE: the body is over 100 kB', example: { error: 'Request body is too large (limit 100 kB)', code: 'PAYLOAD_TOO_LARGE' } },
};

export const NOT_FOUND = (what: string): ErrorExamples => ({
  404: { description: `${what} not found in the caller's workspace (an id that is not a UUID is 404 too)`, example: { error: `${what} not found` } },
});

/** The Data API's own refusals (routes/data/index.ts), instead of the session's 401. */
export const DATA_API_ERRORS: ErrorExamples = {
  ...REQUEST_ERRORS,
  401: {
    description:
      '`invalid_apikey`: the `apikey` header is missing or wrong; `invalid_token`: the bearer access token is missing, malformed, expired or forged, names no workspace, or its user no longer belongs to the workspace of the key it was minted from (with `WWW-Authenticate: Bearer error="invalid_token"`)',
    example: { error: 'invalid_token' },
  },
  403: { description: "The key's owner has no workspace", example: { error: 'No workspace found' } },
  500: SESSION_ERRORS[500],
};

export const idempotencyKey: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  description:
    'Optional: a retry with the same key and body within 24 h answers the first response (with `Idempotent-Replayed: true`) and creates nothing; 1–255 printable ASCII characters',
  schema: z.string().min(1).max(255),
  example: 'order-2026-11-23-0001',
};

export const IDEMPOTENCY_ERRORS: ErrorExamples = {
  409: {
    description: 'IDEMPOTENCY_KEY_IN_USE: a request with this key is still in progress',
    example: { error: 'A request with this Idempotency-Key is still in progress; retry shortly', code: 'IDEMPOTENCY_KEY_IN_USE' },
  },
};

export const replayedHeader = {
  'Idempotent-Replayed': { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key' },
};

/** A `by_outcome` example: each outcome in its order, 0 unless given. */
export const byOutcome = (given: Partial<Record<Outcome, number>> = {}): Record<Outcome, number> =>
  Object.fromEntries(OUTCOMES.map((outcome) => [outcome, given[outcome] ?? 0])) as Record<Outcome, number>;
