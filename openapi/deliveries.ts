import { z } from 'zod';
import { IMPORT_MAX_ROWS } from '../services/imports';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { errors, SESSION_ERRORS } from './common';

const ReportResultBody = named(
  'DeliveryReportResult',
  z.looseObject({
    updated: z.number().int().meta({ description: 'Rows that changed the delivery of their order' }),
    unchanged: z
      .number()
      .int()
      .meta({ description: 'Rows matched to an order whose delivery they did not change (the same news, or older than the last applied)' }),
    unmatched: z
      .array(z.looseObject({ line: z.number().int(), reason: z.enum(['no_key', 'not_found', 'ambiguous', 'unreadable']) }))
      .meta({ description: 'Rows that found no order of the workspace: no key in the row, no order has it, or two or more could be the one' }),
    unknown_words: z
      .array(z.looseObject({ line: z.number().int(), word: z.string() }))
      .meta({ description: 'Rows whose status word neither the built-in dictionary nor the shop’s own words (/settings) know; not applied' }),
    format: z.enum(['csv', 'xlsx']),
    encoding: z.enum(['utf-8', 'windows-1252', 'utf-16le']).nullable(),
  }),
);

export function register(b: OpenApiBuilder): void {
  b.tag('Deliveries', "What happened at the door: a carrier's report, carrier connections, delivery statistics.");
  b.add({
    method: 'post',
    path: '/api/deliveries/import',
    tag: 'Deliveries',
    security: ['session'],
    summary: "Import a carrier's report",
    description: `A CSV (UTF-8 with or without BOM, Windows-1252; \`,\`, \`;\` or tab) or XLSX file, as the multipart field \`file\` (with an optional \`carrier\` field naming the carrier when the file has no carrier column) or as the raw body. At most 10 MB and ${IMPORT_MAX_ROWS.toLocaleString('en')} rows. Each row is matched to an order of the workspace by its tracking number column (\`tracking\`, \`code\`, \`n° de suivi\`, \`رقم التتبع\`…), else its store reference (\`ref\`, \`référence\`, \`commande\`), else its phone (\`téléphone\`, \`tel\`, \`الهاتف\`: the one order whose delivery is under way, else the one \`confirmed\` or \`order-changed\` without a delivery). The status column (\`statut\`, \`status\`, \`état\`, \`الحالة\`) is read with a dictionary of carriers' words in French, Arabic and English, case and accents aside, and the shop's own words. An optional date column gives each row's time (dd/mm/yyyy [hh:mm], ISO 8601, an Excel date). One transaction per 1,000 rows.`,
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
          unmatched: [{ line: 7, reason: 'not_found' }],
          unknown_words: [{ line: 12, word: 'En souffrance' }],
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
          description: 'Over 10 MB, or more rows than the bound; nothing is written',
          example: { error: 'The file is larger than 10 MB: split it and import each part', code: 'PAYLOAD_TOO_LARGE' },
        },
      }),
    },
  });
}
