import { z } from 'zod';
import { IMPORT_MAX_ROWS, IMPORT_MAX_UNEVEN_LINES } from '../services/orders';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { errors, IDEMPOTENCY_ERRORS, idempotencyKey, replayedHeader, SESSION_ERRORS, uuid } from './common';
import { FILTERS } from './orders';
import { LANGUAGES } from '../services/shared';

export const ImportResultBody = named(
  'ImportResult',
  z.looseObject({
    imported: z.number().int(),
    skipped: z.number().int(),
    errors: z
      .array(
        z.looseObject({
          line: z.number().int(),
          fields: z.record(z.string(), z.string()),
          values: z
            .record(z.string(), z.string())
            .meta({ description: 'What the line held, by field (`clientName`, `phone`…), as typed; a cell over 60 characters is cut with "…"' }),
        }),
      )
      .meta({ description: 'The skipped lines, by line number, with the reason per field and the values of the line' }),
    order_ids: z.array(uuid).meta({ description: 'The new orders, in the order of the file' }),
    format: z.enum(['csv', 'xlsx']).meta({ description: 'What the file was read as' }),
    encoding: z.enum(['utf-8', 'windows-1252', 'utf-16le']).nullable().meta({ description: "A CSV file's encoding; null for XLSX" }),
    ignored_columns: z.array(z.string()).meta({ description: 'Header cells that name no column the import reads (the first 20), as written' }),
  }),
);

const SAMPLE = 'client_name,phone,store_name,products_name,address\nAmina El Idrissi,06 12 34 56 78,Atlas,Argan oil 250 ml,"Rue 12, Maarif"\n';

export function register(b: OpenApiBuilder): void {
  b.tag('Import and export', 'Orders as CSV files, in and out (session API only).');
  b.add(
    {
      method: 'post',
      path: '/api/orders/import',
      tag: 'Import and export',
      security: ['session'],
      summary: 'Import orders from a CSV or XLSX file',
      description:
        "The file is the body: CSV (UTF-8 with or without BOM, UTF-16 with BOM, or Windows-1252 when not UTF-8; `,`, `;` or tab) or an XLSX workbook (its first sheet). The header names the columns (English, French or Arabic names; case and accents ignored), among them `city`/`ville`, `note`/`remarque` and an order date (`date`, `date de commande`: dd/mm/yyyy [hh:mm], ISO 8601 or an Excel date, Morocco time when no zone) kept as `placed_at`. Amounts as French or English spreadsheets write them (`2 490,00`, `1.250,00`, `349.50`). The store's order reference is read from `N° commande`, `Référence`, `ref`, `رقم الطلب` (and `external_ref`). The store comes from a store column (`store_name`, `boutique`, `المتجر`), else from `store` (query, or the multipart field). Valid lines are imported in one transaction; the others are reported with their values.",
      parameters: [
        idempotencyKey,
        {
          name: 'store',
          in: 'query',
          description:
            'Optional, beside a raw body: the store of the rows without one (at most 200 characters). With it, the file needs no store column; a store column of the file wins where its cell is filled. A multipart form gives it as the field `store` beside `file`.',
          schema: z.string().max(200),
          example: 'Atlas',
        },
      ],
      body: { media: 'text/csv', example: SAMPLE },
      responses: {
        200: {
          description: 'What was imported and skipped',
          schema: ImportResultBody,
          example: {
            imported: 1,
            skipped: 1,
            errors: [
              {
                line: 3,
                fields: { phone: 'Enter a valid Moroccan phone number, e.g. 06 12 34 56 78' },
                values: { clientName: 'Karima B.', phone: '06 12 34', storeName: 'Atlas', productsName: 'Argan oil 250 ml' },
              },
            ],
            order_ids: ['0b6f1f9e-3c1a-4d55-9a57-2f3c8a1e4b10'],
            format: 'csv',
            encoding: 'windows-1252',
            ignored_columns: ['Livreur'],
          },
          headers: replayedHeader,
        },
        ...errors(SESSION_ERRORS, IDEMPOTENCY_ERRORS, {
          400: {
            description:
              'VALIDATION_ERROR, the file refused whole: empty, header only, missing a required column, not UTF-8, binary, an unclosed quote (`fields.file`, or a field per missing column); INVALID_IDEMPOTENCY_KEY',
            example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { file: 'The file is empty' } },
          },
          413: {
            description: `PAYLOAD_TOO_LARGE (over 10 MB) or TOO_MANY_ROWS (over ${IMPORT_MAX_ROWS.toLocaleString('en')} orders, or over ${IMPORT_MAX_UNEVEN_LINES.toLocaleString('en')} lines that are blank or have another number of cells than the header); TOO_MANY_CELLS (a row of over 200 cells, over 1,000,000 cells in all, or an XLSX of over 500,000 shared strings) or TOO_MUCH_WORK (over 5 s of the parser's CPU time). Reading stops there and nothing is written`,
            example: { error: 'The file is larger than 10 MB: split it and import each part', code: 'PAYLOAD_TOO_LARGE' },
          },
          422: {
            description: 'NO_ORDER_HANDLER (with `redirectTo`); IDEMPOTENCY_KEY_REUSED',
            example: { error: 'Set an agent as order handler before creating orders', code: 'NO_ORDER_HANDLER', redirectTo: '/agents' },
          },
        }),
      },
    },
    {
      method: 'get',
      path: '/api/orders/export.csv',
      tag: 'Import and export',
      security: ['session'],
      summary: 'Export the orders as CSV',
      description:
        "UTF-8 with a BOM; columns id, created_at (Morocco time), client_name, phone, store_name, products_name, address, status, calls, last_outcome, flags, source, external_id, external_ref, total_amount, currency, placed_at, city, note, delivery_status, carrier, tracking_number, carrier_status; newest first; a cell starting with = + - @ tab or CR is prefixed with `'`.",
      parameters: [
        ...FILTERS,
        {
          name: 'lang',
          in: 'query',
          description:
            "The header row's language: `en` gives these API names; `fr` and `ar` give names the import reads back (nom, téléphone…; الاسم…). Default: the user's saved language, else `en`.",
          schema: z.enum(LANGUAGES),
          example: 'en',
        },
      ],
      responses: {
        200: {
          description: 'The CSV file (`Content-Disposition: attachment`)',
          media: 'text/csv',
          example:
            '\uFEFFid,created_at,client_name,phone,store_name,products_name,address,status,calls,last_outcome\n0b6f1f9e-…,2026-11-23 14:05:00,Amina El Idrissi,\'+212612345678,Atlas,Argan oil 250 ml,"Rue 12, Maarif",confirmed,1,confirmed\n',
          headers: { 'Content-Disposition': { description: 'attachment; filename="orders-YYYY-MM-DD.csv"' } },
        },
        ...errors(SESSION_ERRORS, {
          400: {
            description: 'VALIDATION_ERROR: `fields` names each bad filter',
            example: { error: 'Validation failed', code: 'VALIDATION_ERROR', fields: { status: 'Unknown status; use one or several (comma-separated) of: …' } },
          },
        }),
      },
    },
  );
}
