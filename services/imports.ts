import crypto from 'node:crypto';
import { parse as parseCsv, CsvError } from 'csv-parse/sync';
import type { Knex } from 'knex';
import { AppError, ValidationError } from './errors';
import type { FieldErrors } from './errors';
import type { IdempotencyService } from './idempotency';
import { requestHash } from './idempotency';
import { ORDER_STATUSES } from './order-status';
import { InvalidStatusError, validNewOrder } from './orders';
import type { OrderField, OrderInput, OrderService, ValidOrder } from './orders';

export const IMPORT_MAX_BYTES = 10 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 20_000;
/** Rows of a file checked, then inserted by one statement, at a time. */
const IMPORT_BATCH = 1000;

export interface ImportResult {
  imported: number;
  skipped: number;
  errors: Array<{ line: number; fields: FieldErrors }>;
  order_ids: string[];
}

/** Column names each field is known by, in English, French and Arabic (compared without case or accents). */
export const COLUMN_NAMES: Record<OrderField, string[]> = {
  clientName: ['client_name', 'clientName', 'name', 'client', 'nom', 'nom complet', 'الاسم'],
  phone: ['phone', 'telephone', 'téléphone', 'tel', 'mobile', 'الهاتف'],
  storeName: ['store_name', 'storeName', 'store', 'boutique', 'magasin', 'المتجر'],
  productsName: ['products_name', 'productsName', 'products', 'product', 'produit', 'produits', 'article', 'المنتج'],
  address: ['address', 'adresse', 'العنوان'],
  status: ['status', 'statut', 'الحالة'],
};
const REQUIRED: OrderField[] = ['clientName', 'phone', 'storeName', 'productsName'];
const FIELD_LABEL: Record<OrderField, string> = {
  clientName: 'client name',
  phone: 'phone',
  storeName: 'store',
  productsName: 'products',
  address: 'address',
  status: 'status',
};

/** `Téléphone`, `telephone ` and `TELEPHONE` are one name; so are `client_name`, `Client Name` and `clientName`. */
function columnKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\s_-]+/g, '');
}

const FIELD_BY_KEY = new Map<string, OrderField>(
  (Object.entries(COLUMN_NAMES) as Array<[OrderField, string[]]>).flatMap(([field, names]) => names.map((name) => [columnKey(name), field] as const)),
);

/** The text of the file: UTF-8 (a BOM is dropped), one kind of line ending; anything else is refused. */
function fileText(file: Buffer): string {
  if (file.length === 0) throw new ValidationError({ file: 'The file is empty' });
  if (file.length > IMPORT_MAX_BYTES) throw new AppError(413, 'The file is larger than 10 MB: split it and import each part', 'PAYLOAD_TOO_LARGE');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(file);
  } catch {
    throw new ValidationError({ file: 'The file is not UTF-8 text. In your spreadsheet, save it as "CSV UTF-8" and import that file' });
  }
  if (text.includes('\u0000')) throw new ValidationError({ file: 'The file is not a CSV text file (it holds binary data)' });
  // Quoted fields may span lines; a file saved by several tools may mix CRLF, LF and CR.
  return text.replace(/\r\n?/g, '\n');
}

/** Excel in French locales separates with `;`: the header line tells which separator the file uses. */
function separatorOf(text: string): ';' | ',' {
  // Empty lines before the header are skipped by the parser: look at the line it reads as the header.
  const header = text.split('\n', 50).find((line) => line.trim() !== '') ?? '';
  const count = (c: string) => header.split(c).length - 1;
  return count(';') > count(',') ? ';' : ',';
}

interface Row {
  line: number;
  cells: string[];
}

/**
 * The line where the quoted field that is never closed opens. The parser only reports the end of
 * the file, which points the user at a line with nothing wrong on it.
 */
function unclosedQuoteLine(text: string, delimiter: string): number | undefined {
  let line = 1;
  let openedAt: number | undefined;
  let fieldStart = true;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (openedAt !== undefined) {
      if (c === '"' && text[i + 1] === '"') i += 1;
      else if (c === '"') openedAt = undefined;
      else if (c === '\n') line += 1;
      fieldStart = false;
      continue;
    }
    // A quote opens a quoted field only at the start of a field; elsewhere it is text.
    if (c === '"' && fieldStart) openedAt = line;
    if (c === '\n') line += 1;
    fieldStart = c === delimiter || c === '\n';
  }
  return openedAt;
}

function records(text: string): Row[] {
  const delimiter = separatorOf(text);
  try {
    const parsed = parseCsv(text, {
      delimiter,
      record_delimiter: '\n',
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      info: true,
      raw: true,
    }) as unknown as Array<{ record: string[]; raw: string; info: { lines: number } }>;
    // `lines` is where a record ends; a quoted field with line breaks makes it start earlier.
    return parsed.map(({ record, raw, info }) => ({
      line: info.lines - (raw.replace(/^\n+/, '').replace(/\n$/, '').split('\n').length - 1),
      cells: record,
    }));
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    const unclosed = err.code === 'CSV_QUOTE_NOT_CLOSED';
    const at = (unclosed ? unclosedQuoteLine(text, delimiter) : undefined) ?? (err as CsvError & { lines?: number }).lines;
    const reason = unclosed ? 'a quoted field opens here and is never closed' : 'this line is not valid CSV';
    throw new ValidationError({ file: `Line ${at ?? '?'}: ${reason}` });
  }
}

/** Which cell holds each field, from the header; a file missing a required column is refused whole. */
function columnsOf(header: string[]): Partial<Record<OrderField, number>> {
  const columns: Partial<Record<OrderField, number>> = {};
  const fields: FieldErrors = {};
  header.forEach((name, index) => {
    const field = FIELD_BY_KEY.get(columnKey(name));
    if (!field) return;
    if (columns[field] !== undefined) {
      fields[field] = `Two columns hold the ${FIELD_LABEL[field]}: "${header[columns[field]!].trim()}" and "${name.trim()}"; keep one`;
    }
    columns[field] ??= index;
  });
  for (const field of REQUIRED) {
    if (columns[field] === undefined) fields[field] = `No column for the ${FIELD_LABEL[field]}: name one ${COLUMN_NAMES[field].join(', ')}`;
  }
  if (Object.keys(fields).length > 0) throw new ValidationError(fields, 'The header row does not name the columns an order needs');
  return columns;
}

/** A line's reasons, in the order of the columns of an order (jsonb keeps keys in an order of its own). */
function inFieldOrder(fields: FieldErrors): FieldErrors {
  const rank = (key: string) => {
    const at = ['line', ...Object.keys(COLUMN_NAMES)].indexOf(key);
    return at === -1 ? Number.MAX_SAFE_INTEGER : at;
  };
  return Object.fromEntries(Object.entries(fields).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)));
}

/** A CSV file of orders read as far as its shape: its rows, still to be checked one by one. */
interface OrdersFile {
  /** The number of cells the header names. */
  width: number;
  columns: Partial<Record<OrderField, number>>;
  rows: Row[];
}

/**
 * Reads a CSV file of orders and refuses it whole when it cannot be imported (not UTF-8 text, not
 * CSV, no header, no orders, a required column missing, too many rows): nothing of it is written.
 */
function openOrdersCsv(file: Buffer): OrdersFile {
  const [header, ...rest] = records(fileText(file));
  if (!header) throw new ValidationError({ file: 'The file is empty' });
  const columns = columnsOf(header.cells);
  const rows = rest.filter((row) => row.cells.some((cell) => cell.trim() !== ''));
  if (rows.length === 0) throw new ValidationError({ file: 'The file has a header row but no orders' });
  if (rows.length > IMPORT_MAX_ROWS) {
    throw new AppError(
      413,
      `At most ${IMPORT_MAX_ROWS.toLocaleString('en')} orders per file; this one has ${rows.length.toLocaleString('en')}. Split it and import each part`,
      'TOO_MANY_ROWS',
    );
  }
  return { width: header.cells.length, columns, rows };
}

/** Checks rows of a file by the rules of POST /api/orders: the valid orders, and the reasons of the others by line. */
function checkRows(file: OrdersFile, rows: Row[]): { valid: ValidOrder[]; errors: ImportResult['errors'] } {
  const valid: ValidOrder[] = [];
  const errors: ImportResult['errors'] = [];
  for (const row of rows) {
    if (row.cells.slice(file.width).some((cell) => cell.trim() !== '')) {
      errors.push({ line: row.line, fields: { line: `This line has ${row.cells.length} cells; the header names ${file.width} columns` } });
      continue;
    }
    const input: OrderInput = {};
    for (const [field, index] of Object.entries(file.columns) as Array<[OrderField, number]>) {
      const cell = row.cells[index] ?? '';
      if (field === 'status') input.status = cell.trim() === '' ? undefined : cell.trim().toLowerCase();
      else input[field] = cell;
    }
    const checked = checkRow(input);
    if ('fields' in checked) errors.push({ line: row.line, fields: checked.fields });
    else valid.push(checked.order);
  }
  return { valid, errors };
}

/** One row by the rules of POST /api/orders, with every bad field named (a bad status does not hide a bad phone). */
function checkRow(input: OrderInput): { order: ValidOrder } | { fields: FieldErrors } {
  const fields: FieldErrors = {};
  if (input.status !== undefined && !(ORDER_STATUSES as readonly unknown[]).includes(input.status)) {
    fields.status = new InvalidStatusError().message;
  }
  try {
    const order = validNewOrder({ ...input, status: fields.status ? undefined : input.status });
    if (!fields.status) return { order };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    Object.assign(fields, err.fields);
  }
  return { fields: inFieldOrder(fields) };
}

/** Imports a CSV file of orders: every valid row by the rules of POST /api/orders, all in one transaction. */
export class ImportService {
  constructor(
    private readonly knex: Knex,
    private readonly idempotency: IdempotencyService,
    private readonly orders: OrderService,
  ) {}

  async importCsv(workspaceId: string, file: Buffer, options: { idempotencyKey?: string } = {}): Promise<{ result: ImportResult; replayed: boolean }> {
    // Refused whole before anything is read: no order can be created without a handler.
    await this.orders.orderHandler(this.knex, workspaceId);
    const opened = openOrdersCsv(file);
    const perform = async (trx: Knex.Transaction) => {
      const { ids, errors } = await this.insertChecked(trx, workspaceId, opened);
      const result: ImportResult = { imported: ids.length, skipped: errors.length, errors, order_ids: ids };
      return { status: 200, body: result };
    };
    if (options.idempotencyKey === undefined) {
      return { result: (await this.knex.transaction(perform)).body, replayed: false };
    }
    const hash = requestHash({ import: crypto.createHash('sha256').update(file).digest('hex') });
    const stored = await this.idempotency.once(workspaceId, options.idempotencyKey, hash, perform);
    // Stored as jsonb, which reorders keys (the reasons of a line too): answer in the same order as the first time.
    const { imported, skipped, errors: lines, order_ids: orderIds } = stored.body;
    const errorsInOrder = lines.map(({ line, fields }) => ({ line, fields: inFieldOrder(fields) }));
    return { result: { imported, skipped, errors: errorsInOrder, order_ids: orderIds }, replayed: stored.replayed };
  }

  /**
   * Checks the file's rows and inserts the valid ones, IMPORT_BATCH rows at a time, in the caller's
   * transaction. The next rows are checked while Postgres inserts the last batch: checking is Node's
   * work (about a sixth of a 10,000-row import), inserting Postgres's, so the two run side by side.
   */
  private async insertChecked(trx: Knex.Transaction, workspaceId: string, file: OrdersFile): Promise<{ ids: string[]; errors: ImportResult['errors'] }> {
    const ids: string[] = [];
    const errors: ImportResult['errors'] = [];
    let inserting: Promise<string[]> = Promise.resolve([]);
    try {
      for (let start = 0; start < file.rows.length; start += IMPORT_BATCH) {
        const checked = checkRows(file, file.rows.slice(start, start + IMPORT_BATCH));
        errors.push(...checked.errors);
        ids.push(...(await inserting));
        inserting = this.orders.insertBatch(trx, workspaceId, checked.valid, ids.length);
        // Failures are awaited (and thrown) below; this only keeps one from being reported as unhandled meanwhile.
        inserting.catch(() => undefined);
        // Let the statement reach Postgres before the next rows are checked.
        await new Promise((resolve) => setImmediate(resolve));
      }
      ids.push(...(await inserting));
    } finally {
      // Nothing left running on the transaction's connection when it ends, whatever happened.
      await inserting.catch(() => undefined);
    }
    return { ids, errors };
  }
}
