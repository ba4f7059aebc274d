import { isUtf8 } from 'node:buffer';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse as csvParser, CsvError } from 'csv-parse';
import type { Parser } from 'csv-parse';
import type { Knex } from 'knex';
import { AppError, ValidationError } from './errors';
import type { FieldErrors } from './errors';
import type { IdempotencyService } from './idempotency';
import { requestHash } from './idempotency';
import { ORDER_STATUSES } from './order-status';
import { InvalidStatusError, validNewOrder } from './orders';
import type { OrderField, OrderInput, OrderService, ValidOrder } from './orders';
import { unsafeTextAt } from './validation';

export const IMPORT_MAX_BYTES = 10 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 20_000;
/** Rows of a file checked, then inserted by one statement, at a time. */
const IMPORT_BATCH = 1000;
/**
 * Bytes of the file handed to the parser at a time. A row takes two at least (a character and its
 * line break), so one slice never makes more than a batch of rows.
 */
const SLICE_BYTES = 2 * IMPORT_BATCH;
/**
 * Cells a line is split into at most: the rest of a longer line stays in its last cell. Without it a
 * line of ten million commas is an array of ten million cells; with it a line holds a few kB of
 * pointers whatever its length (a wide shop export has under a hundred columns).
 */
const MAX_CELLS = 1000;
/** Longer than any name in COLUMN_NAMES: such a header cell is no column of ours, whatever its text. */
const MAX_COLUMN_NAME = 100;
/**
 * Lines with another number of cells than the header (blank or not) a file may hold. The parser
 * builds an error object for each (some 40 µs), before it skips a blank one: a file of five million
 * whitespace-only lines, which holds no row, would take minutes. A file of orders has at most
 * 20,000 such rows (one per order), and room for as many blank lines again.
 */
export const IMPORT_MAX_UNEVEN_LINES = 2 * IMPORT_MAX_ROWS;

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
  externalId: ['external_id', 'externalId', 'identifiant boutique', 'رقم الطلب في المتجر'],
  externalRef: ['external_ref', 'externalRef', 'reference', 'référence', 'المرجع'],
  totalAmount: ['total_amount', 'totalAmount', 'total', 'montant', 'المبلغ'],
  currency: ['currency', 'devise', 'العملة'],
  status: ['status', 'statut', 'الحالة'],
};
const REQUIRED: OrderField[] = ['clientName', 'phone', 'storeName', 'productsName'];
const FIELD_LABEL: Record<OrderField, string> = {
  clientName: 'client name',
  phone: 'phone',
  storeName: 'store',
  productsName: 'products',
  address: 'address',
  externalId: 'external id',
  externalRef: 'order reference',
  totalAmount: 'total',
  currency: 'currency',
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

/** The file is refused whole unless it is UTF-8 text (a BOM is dropped as it is read) of 10 MB at most. */
function checkFile(file: Buffer): void {
  if (file.length === 0) throw new ValidationError({ file: 'The file is empty' });
  if (file.length > IMPORT_MAX_BYTES) throw new AppError(413, 'The file is larger than 10 MB: split it and import each part', 'PAYLOAD_TOO_LARGE');
  if (!isUtf8(file)) {
    throw new ValidationError({ file: 'The file is not UTF-8 text. In your spreadsheet, save it as "CSV UTF-8" and import that file' });
  }
}

/** Quoted fields may span lines; a file saved by several tools may mix CRLF, LF and CR: all become LF. */
function oneLineEnding(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** Excel in French locales separates with `;`: the header line tells which separator the file uses. */
function separatorOf(file: Buffer): ';' | ',' {
  // Empty lines before the header are skipped by the parser: look at the line it reads as the header.
  // The file's first 64 kB tell `;` from `,` as well as the whole (it may be one line of 10 MB).
  const head = oneLineEnding(new TextDecoder().decode(file.subarray(0, 64 * 1024)));
  const header = head.split('\n', 50).find((line) => line.trim() !== '') ?? '';
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

/** Line breaks inside a row's cells: quoted fields that span lines. */
function lineBreaksIn(cells: string[]): number {
  let count = 0;
  for (const cell of cells) {
    for (let at = cell.indexOf('\n'); at !== -1; at = cell.indexOf('\n', at + 1)) count += 1;
  }
  return count;
}

/**
 * The file's text for the parser, a slice at a time, one slice per turn of the event loop: other
 * requests go on meanwhile. A file with too many uneven lines is refused here, once the parser has
 * read them.
 */
async function* slicesFor(parser: Parser, file: Buffer): AsyncGenerator<string> {
  // Streaming: a character cut in two by a slice's end is completed by the next slice.
  const decoder = new TextDecoder();
  let carriageReturn = false;
  for (let start = 0; start < file.length; start += SLICE_BYTES) {
    let text: string = (carriageReturn ? '\r' : '') + decoder.decode(file.subarray(start, start + SLICE_BYTES), { stream: true });
    // A CR that ends a slice may be the first half of a CRLF: it goes with the next slice.
    carriageReturn = text.endsWith('\r') && start + SLICE_BYTES < file.length;
    if (carriageReturn) text = text.slice(0, -1);
    if (text !== '') yield oneLineEnding(text);
    await nextTurn();
    if (parser.info.invalid_field_length > IMPORT_MAX_UNEVEN_LINES) {
      // The reader gets this error in place of the rows the parser still holds.
      const message = `The file was not imported: over ${IMPORT_MAX_UNEVEN_LINES.toLocaleString('en')} of its lines are blank or have another number of cells than the header. Remove the blank lines and import it again`;
      parser.destroy(new AppError(413, message, 'TOO_MANY_ROWS'));
      return;
    }
  }
}

/**
 * The rows of a CSV file, read as they are needed: the parser reads a few slices (some kB) ahead of
 * the reader, and stops when the reader does. Rows whose cells are all blank are left out.
 */
async function* csvRows(file: Buffer): AsyncGenerator<Row> {
  const delimiter = separatorOf(file);
  const parser = csvParser({
    delimiter,
    record_delimiter: '\n',
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
    ignore_last_delimiters: MAX_CELLS,
    info: true,
  });
  const source = Readable.from(slicesFor(parser, file));
  source.pipe(parser);
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      // `lines` is where a row ends; a quoted field with line breaks makes it start earlier.
      yield { line: info.lines - lineBreaksIn(record), cells: record };
    }
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    const unclosed = err.code === 'CSV_QUOTE_NOT_CLOSED';
    const at =
      (unclosed ? unclosedQuoteLine(oneLineEnding(new TextDecoder().decode(file)), delimiter) : undefined) ?? (err as CsvError & { lines?: number }).lines;
    const reason = unclosed ? 'a quoted field opens here and is never closed' : 'this line is not valid CSV';
    throw new ValidationError({ file: `Line ${at ?? '?'}: ${reason}` });
  } finally {
    source.destroy();
  }
}

/** Which cell holds each field, from the header; a file missing a required column is refused whole. */
function columnsOf(header: string[]): Partial<Record<OrderField, number>> {
  const columns: Partial<Record<OrderField, number>> = {};
  const fields: FieldErrors = {};
  header.forEach((name, index) => {
    const field = name.length > MAX_COLUMN_NAME ? undefined : FIELD_BY_KEY.get(columnKey(name));
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

/** A CSV file of orders read as far as its header: its rows come as they are read. */
interface OrdersFile {
  /** The number of cells the header names. */
  width: number;
  columns: Partial<Record<OrderField, number>>;
  /** The rows after the header; end it (`return()`) when not read to its end. */
  rows: AsyncGenerator<Row>;
}

/**
 * Reads the header of a CSV file of orders, and refuses the file whole when it cannot be imported
 * (not UTF-8 text, no header, a required column missing). The rest is refused while it is read.
 */
async function openOrdersCsv(file: Buffer): Promise<OrdersFile> {
  checkFile(file);
  const rows = csvRows(file);
  try {
    const { value: header } = await rows.next();
    if (!header) throw new ValidationError({ file: 'The file is empty' });
    // A header holding NUL is binary data (UTF-16, a spreadsheet's zip); a NUL in a row skips that row.
    if (unsafeTextAt(header.cells)) throw new ValidationError({ file: 'The file is not a CSV text file (it holds binary data)' });
    return { width: header.cells.length, columns: columnsOf(header.cells), rows };
  } catch (err) {
    await rows.return(undefined);
    throw err;
  }
}

/**
 * The file's rows, IMPORT_BATCH at a time. The row past IMPORT_MAX_ROWS refuses the file (413)
 * without another line read; so does the end of a file with no row (400).
 */
async function* batchesOf(rows: AsyncIterable<Row>): AsyncGenerator<Row[]> {
  let batch: Row[] = [];
  let count = 0;
  for await (const row of rows) {
    count += 1;
    if (count > IMPORT_MAX_ROWS) {
      throw new AppError(
        413,
        `At most ${IMPORT_MAX_ROWS.toLocaleString('en')} orders per file; this one has more. Split it and import each part`,
        'TOO_MANY_ROWS',
      );
    }
    batch.push(row);
    if (batch.length === IMPORT_BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (count === 0) throw new ValidationError({ file: 'The file has a header row but no orders' });
  if (batch.length > 0) yield batch;
}

/** Checks rows of a file by the rules of POST /api/orders: the valid orders, and the reasons of the others by line. */
function checkRows(file: OrdersFile, rows: Row[]): { valid: ValidOrder[]; errors: ImportResult['errors'] } {
  const valid: ValidOrder[] = [];
  const errors: ImportResult['errors'] = [];
  for (const row of rows) {
    if (row.cells.slice(file.width).some((cell) => cell.trim() !== '')) {
      const cells = row.cells.length === MAX_CELLS ? `${MAX_CELLS.toLocaleString('en')} cells or more` : `${row.cells.length} cells`;
      errors.push({ line: row.line, fields: { line: `This line has ${cells}; the header names ${file.width} columns` } });
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
    const opened = await openOrdersCsv(file);
    try {
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
    } finally {
      // A replay, or a refusal half-way, leaves the rest of the file unread: the parser stops here.
      await opened.rows.return(undefined);
    }
  }

  /**
   * Reads the file's rows and inserts the valid ones, IMPORT_BATCH rows at a time, in the caller's
   * transaction (a refusal half-way undoes the batches before it). The next rows are read and checked
   * while Postgres inserts the last batch: that is Node's work, inserting Postgres's, so the two run
   * side by side.
   */
  private async insertChecked(trx: Knex.Transaction, workspaceId: string, file: OrdersFile): Promise<{ ids: string[]; errors: ImportResult['errors'] }> {
    const ids: string[] = [];
    const errors: ImportResult['errors'] = [];
    let inserting: Promise<string[]> = Promise.resolve([]);
    try {
      for await (const rows of batchesOf(file.rows)) {
        const checked = checkRows(file, rows);
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
