import crypto from 'node:crypto';
import type { Knex } from 'knex';
import {
  AppError,
  ValidationError,
  requestHash,
  openSpreadsheet,
  parseAmount,
  parseSheetDate,
  SHEET_MAX_BYTES,
  SHEET_MAX_ROWS,
  TooManyRowsError,
  unsafeTextAt,
  msg,
  plain,
  recode,
} from '../../services/shared';
import type { FieldErrors, IdempotencyService, OpenedSheet, SheetRow, Message } from '../../services/shared';
import { ORDER_STATUSES } from './status';
import { InvalidStatusError, validNewOrder } from './model';
import type { OrderField, OrderInput, ValidOrder } from './model';
import type { OrderService } from './service';
import { headerColumns, ORDER_REFERENCE_NAMES } from './columns';

export const IMPORT_MAX_BYTES = SHEET_MAX_BYTES;
export const IMPORT_MAX_ROWS = SHEET_MAX_ROWS;
/** Rows of a file checked, then written, at a time (orders and carriers' reports alike). */
const IMPORT_BATCH = 1000;
/** Blank or uneven lines a file may hold (see spreadsheets/bounds.ts): twice its rows. */
export const IMPORT_MAX_UNEVEN_LINES = 2 * IMPORT_MAX_ROWS;

export interface ImportResult {
  imported: number;
  skipped: number;
  /**
   * The reasons of each skipped line, with their codes (the page's); `inEnglish` writes them as the
   * API answers. `values`: what the line's cells held, by field, as typed (cut at 100 characters),
   * so the shop sees which row it is and what was wrong without opening the file.
   */
  errors: Array<{ line: number; fields: FieldErrors; values: Partial<Record<ImportField, string>> }>;
  order_ids: string[];
  /** What the file was read as: `csv` or `xlsx`. */
  format: 'csv' | 'xlsx';
  /** A CSV file's encoding (`utf-8`, `windows-1252`, `utf-16le`); null for XLSX. */
  encoding: string | null;
  /** Header cells that name no column we read, as written in the file. */
  ignored_columns: string[];
}

/** An import's result as the API answers it: each line's reasons in English. */
export function inEnglish(result: ImportResult): Omit<ImportResult, 'errors'> & {
  errors: Array<{ line: number; fields: Record<string, string>; values: Partial<Record<ImportField, string>> }>;
} {
  const errors = result.errors.map(({ line, fields, values }) => ({
    line,
    fields: Object.fromEntries(Object.entries(fields).map(([name, text]) => [name, plain(text)])),
    values,
  }));
  return { ...result, errors };
}

/** What a column of an import file can hold: an order's field, or the date the shop took the order. */
export type ImportField = OrderField | 'placedAt';

/** Column names each field is known by, in English, French and Arabic (compared without case or accents). */
export const COLUMN_NAMES: Record<ImportField, string[]> = {
  clientName: ['client_name', 'clientName', 'name', 'client', 'nom', 'nom complet', 'الاسم'],
  phone: ['phone', 'telephone', 'téléphone', 'tel', 'mobile', 'الهاتف'],
  storeName: ['store_name', 'storeName', 'store', 'boutique', 'magasin', 'المتجر'],
  productsName: ['products_name', 'productsName', 'products', 'product', 'produit', 'produits', 'article', 'المنتج'],
  address: ['address', 'adresse', 'العنوان'],
  city: ['city', 'ville', 'المدينة'],
  note: ['note', 'notes', 'remarque', 'commentaire', 'ملاحظة'],
  externalId: ['external_id', 'externalId', 'identifiant boutique', 'رقم الطلب في المتجر'],
  externalRef: [...ORDER_REFERENCE_NAMES],
  totalAmount: ['total_amount', 'totalAmount', 'total', 'montant', 'المبلغ'],
  currency: ['currency', 'devise', 'العملة'],
  placedAt: ['placed_at', 'placedAt', 'date', 'date de commande', 'order date', 'تاريخ الطلب'],
  status: ['status', 'statut', 'الحالة'],
};
const REQUIRED: ImportField[] = ['clientName', 'phone', 'storeName', 'productsName'];
const FIELD_LABEL: Record<ImportField, string> = {
  clientName: 'client name',
  phone: 'phone',
  storeName: 'store',
  productsName: 'products',
  address: 'address',
  city: 'city',
  note: 'note',
  externalId: 'external id',
  externalRef: 'order reference',
  totalAmount: 'total',
  currency: 'currency',
  placedAt: 'order date',
  status: 'status',
};

/**
 * Which cell holds each field, from the header, and the named columns we do not read; a file missing
 * a required column is refused whole. A store named on the form stands for a missing store column.
 */
function columnsOf(header: string[], store: string | null): { columns: Partial<Record<ImportField, number>>; ignored: string[] } {
  const { columns, ignored, twice } = headerColumns(header, COLUMN_NAMES);
  const fields: FieldErrors = {};
  for (const { column, first, second } of twice) fields[column] = msg('importTwoColumns', { label: FIELD_LABEL[column], first, second });
  for (const field of REQUIRED) {
    if (field === 'storeName' && store) continue;
    if (columns[field] === undefined) fields[field] = msg('importNoColumn', { label: FIELD_LABEL[field], names: COLUMN_NAMES[field].join(', ') });
  }
  if (Object.keys(fields).length > 0) throw new ValidationError(fields, msg('importHeader'));
  return { columns, ignored };
}

const FIELD_RANK = new Map(['line', ...Object.keys(COLUMN_NAMES)].map((key, at) => [key, at]));
/** A line's reasons, in the order of the columns of an order (jsonb keeps keys in an order of its own). */
function inFieldOrder<T extends Record<string, unknown>>(fields: T): T {
  const rank = (key: string) => FIELD_RANK.get(key) ?? Number.MAX_SAFE_INTEGER;
  return Object.fromEntries(Object.entries(fields).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))) as T;
}

/** A file of orders read as far as its header: its rows come as they are read. */
interface OrdersFile {
  sheet: OpenedSheet;
  /** The store named on the form: each row's, unless its store cell names one. */
  store: string | null;
  /** The number of cells the header names. */
  width: number;
  columns: Partial<Record<ImportField, number>>;
  ignored: string[];
}

/** A file past the row bound is answered in orders, the unit of this import. */
function inOrders(err: unknown): unknown {
  if (!(err instanceof TooManyRowsError)) return err;
  return new AppError(413, msg('importTooManyRows', { max: IMPORT_MAX_ROWS.toLocaleString('en') }), 'TOO_MANY_ROWS');
}

/**
 * Reads the header of a file of orders (CSV or XLSX, see services/shared/spreadsheets), and refuses the
 * file whole when it cannot be imported (no header, a required column missing). The rest is refused
 * while it is read.
 */
async function openOrdersFile(file: Buffer, store: string | null): Promise<OrdersFile> {
  const sheet = await openSpreadsheet(file, { maxBytes: IMPORT_MAX_BYTES, maxRows: IMPORT_MAX_ROWS });
  try {
    // A header holding NUL is binary data (a PNG, a zip that is no workbook); a NUL in a row skips that row.
    if (unsafeTextAt(sheet.header.cells)) throw new ValidationError({ file: msg('importBinary') });
    const { columns, ignored } = columnsOf(sheet.header.cells, store);
    return { sheet, store, width: sheet.header.cells.length, columns, ignored };
  } catch (err) {
    await sheet.rows.return(undefined);
    throw err;
  }
}

/** The file's rows, IMPORT_BATCH at a time; the end of a file with no row is a 400 (`empty`). */
export async function* batchesOf(rows: AsyncIterable<SheetRow>, empty: Message = msg('importNoRows')): AsyncGenerator<SheetRow[]> {
  let batch: SheetRow[] = [];
  let count = 0;
  try {
    for await (const row of rows) {
      count += 1;
      batch.push(row);
      if (batch.length === IMPORT_BATCH) {
        yield batch;
        batch = [];
      }
    }
  } catch (err) {
    throw inOrders(err);
  }
  if (count === 0) throw new ValidationError({ file: empty });
  if (batch.length > 0) yield batch;
}

/** Checks rows of a file by the rules of POST /api/orders: the valid orders, and the reasons of the others by line. */
function checkRows(file: OrdersFile, rows: SheetRow[]): { valid: ValidOrder[]; errors: ImportResult['errors'] } {
  const valid: ValidOrder[] = [];
  const errors: ImportResult['errors'] = [];
  for (const row of rows) {
    const cell = (field: ImportField) => {
      const index = file.columns[field];
      return index === undefined ? undefined : (row.cells[index] ?? '');
    };
    if (row.cells.slice(file.width).some((one) => one.trim() !== '')) {
      errors.push({ line: row.line, fields: { line: msg('importCells', { cells: row.cells.length, width: file.width }) }, values: valuesOf(file, cell) });
      continue;
    }
    const input: OrderInput = {};
    for (const field of Object.keys(file.columns) as ImportField[]) {
      if (field !== 'placedAt' && field !== 'status' && field !== 'totalAmount') input[field] = cell(field);
    }
    // The store named on the form, unless the row's store cell names one.
    if (file.store && !cell('storeName')?.trim()) input.storeName = file.store;
    const checked = checkRow(input, { status: cell('status'), amount: cell('totalAmount'), placedAt: cell('placedAt') });
    if ('fields' in checked) errors.push({ line: row.line, fields: checked.fields, values: valuesOf(file, cell) });
    else valid.push(checked.order);
  }
  return { valid, errors };
}

/** A cell shown on a refused row: enough to recognise it, never a whole megabyte back. */
const SHOWN_VALUE = 60;

/**
 * A refused row's cells, by field in the order of an order's columns, as typed (cut past 60
 * characters with "…"; text a database refuses shown as nothing).
 */
function valuesOf(file: OrdersFile, cell: (field: ImportField) => string | undefined): Partial<Record<ImportField, string>> {
  const values: Partial<Record<ImportField, string>> = {};
  for (const field of Object.keys(file.columns) as ImportField[]) {
    const text = (cell(field) ?? '').trim();
    const shown = text.length > SHOWN_VALUE ? `${text.slice(0, SHOWN_VALUE)}…` : text;
    values[field] = unsafeTextAt([shown]) ? '' : shown;
  }
  return inFieldOrder(values);
}

/**
 * One row by the rules of POST /api/orders, with every bad field named (a bad status does not hide a
 * bad phone). The amount is read as people type it (`2 490,00`), the date as spreadsheets write it.
 */
function checkRow(input: OrderInput, cells: { status?: string; amount?: string; placedAt?: string }): { order: ValidOrder } | { fields: FieldErrors } {
  const fields: FieldErrors = {};
  const status = cells.status?.trim() ? cells.status.trim().toLowerCase() : undefined;
  if (status !== undefined && !(ORDER_STATUSES as readonly unknown[]).includes(status)) fields.status = recode(new InvalidStatusError().page);
  const amountCell = cells.amount?.trim() ?? '';
  const amount = amountCell === '' ? null : parseAmount(amountCell);
  if (amount === undefined) fields.totalAmount = msg('amountInvalid');
  const dateCell = cells.placedAt?.trim() ?? '';
  const placedAt = dateCell === '' ? null : parseSheetDate(dateCell);
  if (placedAt === undefined) fields.placedAt = msg('importDate');
  try {
    const order = validNewOrder({ ...input, totalAmount: amount ?? null, status: fields.status ? undefined : status });
    if (Object.keys(fields).length === 0) return { order: { ...order, placedAt } };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    for (const [name, reason] of Object.entries(err.messages())) fields[name] ??= reason;
  }
  return { fields: inFieldOrder(fields) };
}

/** The store named on the import's form (null: none, the file's store column is required); a 400 when it cannot be one. */
function storeOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const store = typeof value === 'string' ? value.trim() : '';
  if (typeof value !== 'string' || store.length > 200 || unsafeTextAt([store]))
    throw new ValidationError({ store: msg('tooLong', { label: 'Store name', max: 200 }) });
  return store || null;
}

/** Imports a CSV or XLSX file of orders: every valid row by the rules of POST /api/orders, all in one transaction. */
export class ImportService {
  constructor(
    private readonly knex: Knex,
    private readonly idempotency: IdempotencyService,
    private readonly orders: OrderService,
  ) {}

  /**
   * The stores the import form offers: the names given (the workspace's store connections) and the
   * stores of its last 500 orders (one range of orders_workspace_newest_idx), in that order, once each.
   */
  async storeNames(workspaceId: string, connections: string[]): Promise<string[]> {
    const recent = this.knex('orders').where({ workspace_id: workspaceId }).orderBy('created_at', 'desc').limit(500).select('store_name');
    const rows: Array<{ store_name: string }> = await this.knex.from(recent.as('recent')).distinct('store_name').orderBy('store_name');
    return [...new Set([...connections, ...rows.map((row) => row.store_name)])].slice(0, 50);
  }

  async importCsv(
    workspaceId: string,
    file: Buffer,
    options: { idempotencyKey?: string; store?: unknown } = {},
  ): Promise<{ result: ImportResult; replayed: boolean }> {
    const store = storeOf(options.store);
    // Refused whole before anything is read: no order can be created without a handler.
    await this.orders.orderHandler(this.knex, workspaceId);
    const opened = await openOrdersFile(file, store);
    const about = { format: opened.sheet.format, encoding: opened.sheet.encoding, ignored_columns: opened.ignored };
    try {
      const perform = async (trx: Knex.Transaction) => {
        const { ids, errors } = await this.insertChecked(trx, workspaceId, opened);
        const result: ImportResult = { imported: ids.length, skipped: errors.length, errors, order_ids: ids, ...about };
        return { status: 200, body: result };
      };
      if (options.idempotencyKey === undefined) {
        return { result: (await this.knex.transaction(perform)).body, replayed: false };
      }
      const hash = requestHash({ import: crypto.createHash('sha256').update(file).digest('hex'), store });
      const stored = await this.idempotency.once(workspaceId, options.idempotencyKey, hash, perform);
      // Stored as jsonb, which reorders keys (the reasons of a line too): answer in the same order as the first time.
      const { imported, skipped, errors: lines, order_ids: orderIds } = stored.body;
      const errorsInOrder = lines.map(({ line, fields, values }) => ({ line, fields: inFieldOrder(fields), values: inFieldOrder(values ?? {}) }));
      return { result: { imported, skipped, errors: errorsInOrder, order_ids: orderIds, ...about }, replayed: stored.replayed };
    } finally {
      // A replay, or a refusal half-way, leaves the rest of the file unread: the parser stops here.
      await opened.sheet.rows.return(undefined);
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
      for await (const rows of batchesOf(file.sheet.rows)) {
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
