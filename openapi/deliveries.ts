import { z } from 'zod';
import { CONFIRMING_OUTCOMES } from '../services/calls';
import { TEAM_CSV_COLUMNS } from '../services/stats';
import { IMPORT_MAX_ROWS } from '../services/orders';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { byOutcome, errors, NOT_FOUND, OWNER_ONLY, REQUEST_ERRORS, SESSION_ERRORS, instant, uuid } from './common';

/** The outcomes that confirm an order, as the descriptions name them. */
const CONFIRMING_NAMES = CONFIRMING_OUTCOMES.map((outcome) => `\`${outcome}\``).join(' or ');
const CONFIRMING_SUM = CONFIRMING_OUTCOMES.join(' + ');
const count = z.number().int();
const rate = z.number().nullable();
const tallyShape = {
  delivered: count,
  refused: count,
  returned: count,
  lost: count,
  delivered_rate: rate.meta({ description: 'delivered ÷ (delivered + refused + returned + lost), two decimals; null when none ended' }),
  collected: z.record(z.string(), z.string()).meta({ description: 'The delivered orders\' amounts per currency, with its decimals (`{"MAD": "730.00"}`)' }),
};
const tally = z.looseObject(tallyShape);
export const DeliveryStatsBody = named(
  'DeliveryStats',
  z
    .looseObject({
      ...tallyShape,
      by_day: z.array(z.looseObject({ date: z.string(), ...tallyShape })),
      by_store: z.array(z.looseObject({ store_name: z.string(), ...tallyShape })).meta({ description: 'The 50 stores with the most deliveries ended' }),
      by_city: z
        .array(z.looseObject({ city: z.string().nullable(), ...tallyShape }))
        .meta({ description: 'The 50 cities with the most deliveries ended; null: no city' }),
      confirmed_by_call: tally.meta({ description: `Orders a member or an agent confirmed by a call (${CONFIRMING_NAMES})` }),
      without_confirmed_call: tally.meta({ description: 'Orders shipped without a confirmed call' }),
    })
    .meta({ description: 'Orders whose delivery ended (delivered, refused, returned, lost) in the period, by the day it ended (Morocco time)' }),
);
const EMPTY_TALLY = { delivered: 0, refused: 0, returned: 0, lost: 0, delivered_rate: null, collected: {} };
export const DELIVERY_STATS_EXAMPLE = {
  delivered: 5,
  refused: 2,
  returned: 2,
  lost: 0,
  delivered_rate: 0.56,
  collected: { MAD: '730.00' },
  by_day: [{ date: '2026-11-01', ...EMPTY_TALLY }],
  by_store: [{ store_name: 'Atlas', delivered: 3, refused: 2, returned: 0, lost: 0, delivered_rate: 0.6, collected: { MAD: '380.00' } }],
  by_city: [{ city: 'Casablanca', delivered: 4, refused: 1, returned: 0, lost: 0, delivered_rate: 0.8, collected: { MAD: '530.00' } }],
  confirmed_by_call: { delivered: 4, refused: 2, returned: 1, lost: 0, delivered_rate: 0.57, collected: { MAD: '650.00' } },
  without_confirmed_call: { delivered: 1, refused: 0, returned: 1, lost: 0, delivered_rate: 0.5, collected: { MAD: '80.00' } },
};

const TeamRowBody = z.looseObject({
  kind: z.enum(['member', 'voice', 'whatsapp']),
  id: uuid.meta({ description: "The member's user id, or the agent's id" }),
  name: z.string(),
  calls: count.meta({ description: 'Calls with an outcome in the period (by the day they started)' }),
  answered: count,
  by_outcome: z.record(z.string(), count).meta({
    description:
      'Calls made in the period by their outcome, whenever their order was added: an order confirmed on two calls counts twice, and one confirmed by a person changing its status (no call) is not here. `/api/stats` counts orders instead.',
  }),
  confirmation_rate: rate.meta({ description: `(${CONFIRMING_SUM}) ÷ (${CONFIRMING_SUM} + unconfirmed)` }),
  average_handling_seconds: z
    .number()
    .nullable()
    .meta({ description: 'Members and WhatsApp: from claim (or message) to outcome; voice agents: the reported call duration' }),
  delivered: count,
  refused: count,
  returned: count,
  lost: count,
  delivered_rate: rate.meta({ description: 'Of the orders they confirmed whose delivery ended in the period' }),
});
const ChannelRowBody = TeamRowBody.omit({ kind: true, id: true, name: true, average_handling_seconds: true });
/** The example's one confirmer, a voice agent: two calls, both confirmed. */
const ROBOT_OUTCOMES = byOutcome({ confirmed: 2 });
const ZERO_CHANNEL = {
  calls: 0,
  answered: 0,
  by_outcome: byOutcome(),
  confirmation_rate: null,
  delivered: 0,
  refused: 0,
  returned: 0,
  lost: 0,
  delivered_rate: null,
};
const PERIOD = [
  { name: 'from', in: 'query' as const, description: 'First day (Morocco time), default 29 days before `to`', schema: z.string(), example: '2026-11-01' },
  { name: 'to', in: 'query' as const, description: 'Last day, included; default today', schema: z.string(), example: '2026-11-30' },
];
const PERIOD_400 = {
  400: {
    description: 'VALIDATION_ERROR: a date that is not YYYY-MM-DD, from after to, more than 366 days',
    example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { from: 'from must be on or before to' } },
  },
};

function registerTeam(b: OpenApiBuilder): void {
  b.add(
    {
      method: 'get',
      path: '/api/stats/team',
      tag: 'Deliveries',
      security: ['session'],
      summary: 'Per confirmer: calls and the delivery of the orders they confirmed',
      description:
        'Every member and every voice or WhatsApp agent of the workspace (and whoever made calls in the period and has left since): calls by outcome, confirmation rate, average handling time, and how the orders they confirmed ended at the door. What a shop pays its confirmers from.',
      parameters: PERIOD,
      responses: {
        200: {
          description: 'The rows: members, then voice agents, then WhatsApp agents',
          schema: named(
            'TeamStats',
            z.looseObject({
              from: z.string(),
              to: z.string(),
              rows: z.array(TeamRowBody),
              by_channel: z
                .looseObject(Object.fromEntries(['human', 'voice', 'whatsapp'].map((channel) => [channel, ChannelRowBody])))
                .meta({ description: 'The rows summed per channel: members (human), voice agents, WhatsApp agents' }),
            }),
          ),
          example: {
            from: '2026-11-01',
            to: '2026-11-30',
            rows: [
              {
                kind: 'voice',
                id: '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b',
                name: 'Robot',
                calls: 2,
                answered: 2,
                by_outcome: ROBOT_OUTCOMES,
                confirmation_rate: 1,
                average_handling_seconds: 90,
                delivered: 1,
                refused: 1,
                returned: 0,
                lost: 0,
                delivered_rate: 0.5,
              },
            ],
            by_channel: {
              human: ZERO_CHANNEL,
              voice: {
                calls: 2,
                answered: 2,
                by_outcome: ROBOT_OUTCOMES,
                confirmation_rate: 1,
                delivered: 1,
                refused: 1,
                returned: 0,
                lost: 0,
                delivered_rate: 0.5,
              },
              whatsapp: ZERO_CHANNEL,
            },
          },
        },
        ...errors(SESSION_ERRORS, PERIOD_400),
      },
    },
    {
      method: 'get',
      path: '/api/stats/team.csv',
      tag: 'Deliveries',
      security: ['session'],
      summary: 'The same rows as CSV',
      description: "UTF-8 with a BOM; the columns of `/api/stats/team` (one per outcome); a name starting with = + - @ is prefixed with `'`.",
      parameters: PERIOD,
      responses: {
        200: {
          description: 'The file (attachment)',
          media: 'text/csv',
          example: `${TEAM_CSV_COLUMNS.join(',')}\nvoice,Robot,2,2,${Object.values(ROBOT_OUTCOMES).join(',')},1,90,1,1,0,0,0.5\n`,
        },
        ...errors(SESSION_ERRORS, PERIOD_400),
      },
    },
  );
}

const ReportResultBody = named(
  'DeliveryReportResult',
  z.looseObject({
    updated: z.number().int().meta({ description: 'Rows that changed the delivery of their order; each added one event to its history' }),
    unchanged: z
      .number()
      .int()
      .meta({ description: 'Rows matched to an order that already knew what they say (a cumulative report read again): nothing written, no event added' }),
    late: z.number().int().meta({ description: "Rows older than their order's last news: kept in its history, not applied" }),
    attempts: z
      .number()
      .int()
      .meta({ description: 'Of the rows updated, attempts: the courier could not deliver yet (the status stays; a follow-up call may save the parcel)' }),
    unmatched: z
      .array(
        z.looseObject({
          line: z.number().int(),
          reason: z.enum(['no_key', 'not_found', 'ambiguous', 'unreadable']),
          name: z.string().nullable().meta({ description: "The customer's name as the row gives it (a `nom`, `client`, `destinataire`, `الاسم` column)" }),
          phone: z.string().nullable().meta({ description: 'The phone as the row gives it' }),
          reference: z.string().nullable(),
          tracking: z.string().nullable(),
          candidates: z
            .array(
              z.looseObject({
                id: uuid,
                client_name: z.string(),
                phone: z.string(),
                external_ref: z.string().nullable(),
                status: z.string(),
                delivery_status: z.string().nullable(),
              }),
            )
            .meta({ description: "Up to 5 orders of the workspace with the row's phone or reference, newest first (the first 200 unmatched rows)" }),
        }),
      )
      .meta({ description: 'Rows that found no order of the workspace: no key in the row, no order has it, or two or more could be the one' }),
    unknown_words: z
      .array(z.looseObject({ line: z.number().int(), word: z.string() }))
      .meta({ description: 'Rows whose status word neither the built-in dictionary nor the shop’s own words (/settings) know; not applied' }),
    ignored_columns: z.array(z.string()).meta({ description: 'Header cells that name no column of a report (the first 20), as written: not read' }),
    format: z.enum(['csv', 'xlsx']),
    encoding: z.enum(['utf-8', 'windows-1252', 'utf-16le']).nullable(),
  }),
);

const CarrierBody = named(
  'CarrierConnection',
  z.looseObject({
    id: uuid,
    kind: z.enum(['custom']),
    name: z.string(),
    hook_url: z.string().meta({ description: 'Where the carrier sends its news (`/hooks/carriers/{id}`)' }),
    created_at: instant,
  }),
);
const CARRIER_EXAMPLE = {
  id: '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b',
  kind: 'custom',
  name: 'Ozon Express',
  hook_url: 'https://confirm.example.ma/hooks/carriers/3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b',
  created_at: '2026-11-26T09:00:00.000Z',
};
const CARRIER_RESULTS = ['updated', 'unchanged', 'unmatched', 'rejected', 'ignored', 'duplicate'] as const;

function registerCarriers(b: OpenApiBuilder): void {
  b.add(
    {
      method: 'get',
      path: '/api/carriers',
      tag: 'Deliveries',
      security: ['session'],
      summary: 'List the carrier connections',
      description: 'Every member sees them, never their secret.',
      responses: {
        200: {
          description: 'The connections, oldest first',
          schema: z.looseObject({ carriers: z.array(CarrierBody) }),
          example: { carriers: [CARRIER_EXAMPLE] },
        },
        ...errors(SESSION_ERRORS),
      },
    },
    {
      method: 'post',
      path: '/api/carriers',
      tag: 'Deliveries',
      security: ['session'],
      summary: 'Make a carrier connection',
      description:
        'Owner only. `{kind: "custom", name}`: a carrier (or the shop\'s own script) that signs its messages to `hook_url` with Standard Webhooks and the `secret` answered here, the only time it is shown.',
      body: { schema: z.object({ kind: z.enum(['custom']), name: z.string().min(1).max(100) }), example: { kind: 'custom', name: 'Ozon Express' } },
      responses: {
        201: {
          description: 'The connection and its signing secret',
          schema: CarrierBody.and(z.looseObject({ secret: z.string() })),
          example: { ...CARRIER_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
        },
        ...errors(SESSION_ERRORS, OWNER_ONLY, {
          400: {
            description: 'VALIDATION_ERROR: an unknown kind, a missing or too long name',
            example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { name: 'Name is required' } },
          },
        }),
      },
    },
    {
      method: 'delete',
      path: '/api/carriers/{id}',
      tag: 'Deliveries',
      security: ['session'],
      summary: 'Remove a carrier connection',
      description: 'Owner only; its hook answers 404 from then on.',
      responses: { 204: { description: 'Removed' }, ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND('Carrier connection')) },
    },
    {
      method: 'get',
      path: '/api/carriers/{id}/events',
      tag: 'Deliveries',
      security: ['session'],
      summary: "A carrier connection's log",
      description: 'The last 100 messages it received, newest first, with what became of each.',
      responses: {
        200: {
          description: 'The log',
          schema: z.looseObject({
            events: z.array(z.looseObject({ received_at: instant, result: z.enum(CARRIER_RESULTS), order_id: uuid.nullable(), reason: z.string().nullable() })),
          }),
          example: { events: [{ received_at: '2026-11-26T09:30:00.000Z', result: 'updated', order_id: '0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10', reason: null }] },
        },
        ...errors(SESSION_ERRORS, NOT_FOUND('Carrier connection')),
      },
    },
    {
      method: 'post',
      path: '/hooks/carriers/{id}',
      tag: 'Deliveries',
      security: ['hookSignature'],
      summary: "A carrier's delivery news",
      description:
        'The connection\'s `hook_url`. No session: Standard Webhooks headers (`webhook-id`, `webhook-timestamp` within 5 minutes, `webhook-signature`) with the connection\'s secret, checked over the raw body before anything is read or written. Body `{"type": "delivery.updated", "data": {tracking_number?, external_ref?, order_id?, status, carrier_status?, at?}}` (`status`: a delivery status, or `attempted` when the courier could not deliver yet: it changes `carrier_status` only): the order of the workspace named by `order_id`, else its tracking number, else its store reference. An event older than the last one applied is kept in the order\'s history and changes nothing; news the order already has (the same status and words) adds nothing to it and is answered `unchanged`. Every signed message we understand is answered 200 with what became of it (`updated`, `unchanged`, `unmatched`, `rejected` for bad values or text with NUL, `ignored` for another type, `duplicate` for a `webhook-id` seen before), kept in the connection\'s log.',
      body: {
        schema: z.looseObject({}),
        example: {
          type: 'delivery.updated',
          data: { tracking_number: 'OZ123456789MA', status: 'delivered', carrier_status: 'Livré', at: '2026-11-27T15:02:11Z' },
        },
      },
      responses: {
        200: {
          description: 'Understood; what became of it',
          schema: z.looseObject({ ok: z.literal(true), result: z.enum(CARRIER_RESULTS) }),
          example: { ok: true, result: 'updated' },
        },
        ...errors({
          400: { description: 'Signed, but not JSON, not an object, no `webhook-id`, or nested over 64 levels', example: { error: 'unreadable_body' } },
          401: { description: 'A missing or wrong signature, or a timestamp outside 5 minutes: nothing is recorded', example: { error: 'invalid_signature' } },
          404: { description: 'No connection with this id (answered before the body is read)', example: { error: 'not_found' } },
          408: { description: 'The body did not arrive in time; the connection is closed', example: { error: 'request_timeout' } },
          413: { description: 'PAYLOAD_TOO_LARGE: over 64 kB', example: { error: 'Request body is too large (limit 64 kB)', code: 'PAYLOAD_TOO_LARGE' } },
          415: REQUEST_ERRORS[415],
          429: { description: 'Too many refused messages from one address, or too many bodies arriving at once', example: { error: 'rate_limited' } },
          500: { description: 'An unexpected error', example: { error: 'Internal server error' } },
        }),
      },
    },
  );
}

export function register(b: OpenApiBuilder): void {
  registerCarriers(b);
  registerTeam(b);
  b.tag('Deliveries', "What happened at the door: a carrier's report, carrier connections, delivery statistics.");
  b.add({
    method: 'post',
    path: '/api/deliveries/import',
    tag: 'Deliveries',
    security: ['session'],
    summary: "Import a carrier's report",
    description: `A CSV (UTF-8 with or without BOM, Windows-1252; \`,\`, \`;\` or tab) or XLSX file, as the multipart field \`file\` (with an optional \`carrier\` field naming the carrier when the file has no carrier column) or as the raw body. At most 10 MB and ${IMPORT_MAX_ROWS.toLocaleString('en')} rows. Each row is matched to an order of the workspace by its tracking number column (\`tracking\`, \`code\`, \`n° de suivi\`, \`رقم التتبع\`…), else its store reference (\`ref\`, \`référence\`, \`commande\`), else its phone (\`téléphone\`, \`tel\`, \`الهاتف\`: the one order whose delivery is under way, else the one ${CONFIRMING_NAMES} without a delivery). The status column (\`statut\`, \`status\`, \`état\`, \`الحالة\`) is read with a dictionary of carriers' words in French, Arabic and English, case and accents aside, and the shop's own words. An optional date column gives each row's time (dd/mm/yyyy [hh:mm], ISO 8601, an Excel date). One transaction per 1,000 rows.`,
    body: {
      media: 'multipart/form-data',
      schema: z.object({ file: z.string().meta({ format: 'binary' }), carrier: z.string().max(100).optional() }),
    },
    responses: {
      200: {
        description: 'What changed, what matched no order, which words were unknown',
        schema: ReportResultBody,
        example: {
          updated: 41,
          unchanged: 3,
          late: 0,
          attempts: 2,
          unmatched: [{ line: 7, reason: 'not_found', name: 'Karima B.', phone: '0612345678', reference: null, tracking: 'OZ998877MA', candidates: [] }],
          unknown_words: [{ line: 12, word: 'En souffrance' }],
          ignored_columns: ['Poids', 'Livreur'],
          format: 'csv',
          encoding: 'windows-1252',
        },
      },
      ...errors(SESSION_ERRORS, {
        400: {
          description: 'VALIDATION_ERROR, the file refused whole: empty, header only, no status column, no column to find the order by, binary data',
          example: {
            error: 'The header row does not name the columns a report needs',
            code: 'VALIDATION_ERROR',
            fields: { status: 'No column for the status: name one statut, status, état, etat, الحالة' },
          },
        },
        413: {
          description:
            "PAYLOAD_TOO_LARGE (over 10 MB), TOO_MANY_ROWS (more rows than the bound), TOO_MANY_CELLS (a row of over 200 cells, over 1,000,000 cells in all, or an XLSX of over 500,000 shared strings) or TOO_MUCH_WORK (over 5 s of the parser's CPU time); nothing is written",
          example: { error: 'The file is larger than 10 MB: split it and import each part', code: 'PAYLOAD_TOO_LARGE' },
        },
        500: {
          description:
            'REPORT_INTERRUPTED: the database refused a batch of rows. The batches before it are applied (`applied_through_line`, null when none, with their `updated` and `unchanged` counts); the rows of `failed_lines` and those after them are not. The fault is logged; importing the file again applies the rest',
          example: {
            error:
              'The import stopped at the rows of lines 1002 to 2001: they and the rows after them are not applied; the rows before line 1002 are. Import the file again to apply the rest.',
            code: 'REPORT_INTERRUPTED',
            applied_through_line: 1001,
            failed_lines: { from: 1002, to: 2001 },
            updated: 996,
            unchanged: 4,
          },
        },
      }),
    },
  });
}
