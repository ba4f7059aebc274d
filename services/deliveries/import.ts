import type { Knex } from 'knex';
import { AppError, ValidationError, msg, normalizeMoroccanPhone, openSpreadsheet, parseSheetDate, unsafeTextAt } from '../../services/shared';
import type { FieldErrors, SheetRow } from '../../services/shared';
import { batchesOf, headerColumns, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, isFinalDelivery, ORDER_REFERENCE_NAMES } from '../orders';
import { isConfirming } from '../calls/outcomes';
import { applyDeliveryEvents } from './apply';
import { addCandidates, bareRef } from './candidates';
import type { UnmatchedReason, UnmatchedRow } from './candidates';
import { keepUnknown, rowsAsReport } from './retry';
import type { UnknownRow } from './retry';
import type { DeliveryWord } from '../orders';
import type { CarrierWords, WordReader } from './words';

/** What a carrier's report can hold, by column; the names are compared as the order import compares them. */
export const REPORT_COLUMNS = {
  tracking: ['tracking', 'tracking_number', 'tracking number', 'code', "code d'envoi", 'code envoi', 'n° de suivi', 'numéro de suivi', 'suivi', 'رقم التتبع'],
  ref: [...ORDER_REFERENCE_NAMES, 'commande'],
  phone: ['téléphone', 'telephone', 'tel', 'phone', 'mobile', 'الهاتف'],
  name: ['nom', 'nom du client', 'client', 'destinataire', 'name', 'customer', 'الاسم', 'الزبون'],
  status: ['statut', 'status', 'état', 'etat', 'الحالة'],
  carrier: ['transporteur', 'société', 'societe', 'carrier', 'شركة التوصيل'],
  date: ['date', 'date de livraison', 'date statut', 'date du statut', 'updated_at', 'التاريخ'],
} as const;
type ReportColumn = keyof typeof REPORT_COLUMNS;

/** A report's answer, and the rows of unknown words the page keeps to apply them once they are known (not in the API's answer). */
export type ReportOutcome = ReportResult & { unknownRows: UnknownRow[] };

interface ReportResult {
  /** Rows that changed their order's delivery: each is one event of its history. */
  updated: number;
  /** Rows that said what the order already knew: nothing written, nothing added to the history. */
  unchanged: number;
  /** Rows older than their order's last news: kept in its history, not applied. */
  late: number;
  /** Of the rows updated, attempts (the courier could not deliver yet). */
  attempts: number;
  unmatched: UnmatchedRow[];
  unknown_words: Array<{ line: number; word: string }>;
  /** Header cells that name no column of a report, as written in the file: not read. */
  ignored_columns: string[];
  /** What the file was read as, as the order import says it. */
  format: 'csv' | 'xlsx';
  encoding: string | null;
}

interface ReportRow {
  line: number;
  tracking: string;
  ref: string;
  phone: string | null;
  /** What the row says of the customer, as written: shown when it matches no order. */
  seen: { name: string | null; phone: string | null };
  status: DeliveryWord;
  carrierStatus: string;
  carrier: string | null;
  at: string;
}

/**
 * A batch the database refused (a fault of ours, not of the file): the batches before it stay
 * applied, it and the rest of the file are not. A 500 that says so, with the lines, what was applied
 * and no word of the database's; the fault itself is logged (`cause`, routes/middleware/errors.ts).
 */
class ReportInterrupted extends AppError {
  constructor(
    override readonly cause: unknown,
    failed: { from: number; to: number },
    applied: { throughLine: number | null; updated: number; unchanged: number },
  ) {
    super(500, msg('REPORT_INTERRUPTED', failed), 'REPORT_INTERRUPTED', {
      applied_through_line: applied.throughLine,
      failed_lines: failed,
      updated: applied.updated,
      unchanged: applied.unchanged,
    });
  }
}

/** One cell of a row, trimmed, cut at `max` characters. */
const cellOf = (row: SheetRow, index: number | undefined, max = 200) => (index === undefined ? '' : (row.cells[index] ?? '').trim().slice(0, max));

/** What an unmatched row is shown by. */
type RowKeys = Pick<ReportRow, 'line' | 'tracking' | 'ref' | 'seen'>;

/** A row that found no order, as the answer lists it (its candidates are added at the end). */
function unmatchedRow(row: RowKeys, reason: UnmatchedReason): UnmatchedRow {
  return { line: row.line, reason, name: row.seen.name, phone: row.seen.phone, reference: row.ref || null, tracking: row.tracking || null, candidates: [] };
}

/**
 * A carrier's daily report (CSV or XLSX, read by services/shared/spreadsheets within the order import's
 * bounds): each row matched to one order of the workspace by tracking number, else store
 * reference, else phone, its status word read by the shop's and the built-in dictionary, and
 * applied by applyDeliveryEvents, one statement and one transaction per batch of rows.
 */
export class ReportImport {
  constructor(
    private readonly knex: Knex,
    private readonly words: CarrierWords,
  ) {}

  async run(workspaceId: string, file: Buffer, options: { fileName: string; carrier?: string | null }): Promise<ReportOutcome> {
    // The rows are applied a batch per transaction: a file past the row bound is refused before
    // any is, by a first reading that keeps nothing (the file is in memory already).
    await this.countRows(file);
    const sheet = await openSpreadsheet(file, { maxBytes: IMPORT_MAX_BYTES, maxRows: IMPORT_MAX_ROWS });
    try {
      if (unsafeTextAt(sheet.header.cells)) throw new ValidationError({ file: msg('importBinary') });
      const { columns, ignored } = this.columnsOf(sheet.header.cells);
      const read = await this.words.reader(workspaceId);
      const notify = await this.hasSubscribers(workspaceId);
      const result: ReportResult = {
        updated: 0,
        unchanged: 0,
        late: 0,
        attempts: 0,
        unmatched: [],
        unknown_words: [],
        ignored_columns: ignored,
        format: sheet.format,
        encoding: sheet.encoding,
      };
      // The rows of unknown words, for the result page to apply once their words are known.
      const unknownRows: UnknownRow[] = [];
      const budget = { text: 0 };
      // The last line of the batches committed so far: what an interrupted import says is applied.
      let appliedThrough: number | null = null;
      // The next rows are read while Postgres applies the last batch (Node's work beside Postgres's):
      // one batch applies at a time, in the file's order.
      let applying: Promise<void> = Promise.resolve();
      try {
        for await (const batch of batchesOf(sheet.rows, msg('reportNoRows'))) {
          const rows: ReportRow[] = [];
          for (const row of batch) {
            const parsed = this.readRow(row, columns, read, options.carrier ?? null);
            if ('unknown' in parsed) {
              result.unknown_words.push({ line: row.line, word: parsed.unknown.word });
              keepUnknown(unknownRows, parsed.unknown, budget);
            } else if ('reason' in parsed) result.unmatched.push(unmatchedRow(parsed.row, parsed.reason));
            else rows.push(parsed);
          }
          const lines = { from: batch[0].line, to: batch[batch.length - 1].line };
          await applying;
          applying = this.applyBatch(workspaceId, rows, lines, appliedThrough, { fileName: options.fileName, notify }, result).then(() => {
            appliedThrough = lines.to;
          });
          // Failures are awaited (and thrown) below; this only keeps one from being reported as unhandled meanwhile.
          applying.catch(() => undefined);
          // Let the statements reach Postgres before the next rows are read.
          await new Promise((resolve) => setImmediate(resolve));
        }
        await applying;
      } finally {
        // Nothing left running when the file is closed, whatever happened.
        await applying.catch(() => undefined);
      }
      result.unmatched.sort((a, b) => a.line - b.line);
      await addCandidates(this.knex, workspaceId, result.unmatched);
      return { ...result, unknownRows };
    } finally {
      await sheet.rows.return(undefined);
    }
  }

  /**
   * One batch of a report's rows in a transaction of its own: matched to their orders and applied
   * in one statement, the answer's counts added. A batch the database refuses interrupts the
   * report, saying what the batches before it applied.
   */
  private async applyBatch(
    workspaceId: string,
    rows: ReportRow[],
    lines: { from: number; to: number },
    /** The last line of the batches committed before it (null: none). */
    appliedThrough: number | null,
    options: { fileName: string; notify: boolean },
    result: ReportResult,
  ): Promise<void> {
    const before = { throughLine: appliedThrough, updated: result.updated, unchanged: result.unchanged };
    const applying = this.knex.transaction(async (trx) => {
      // A batch's statements are planned at costs that turn on Postgres's JIT compiler, whose
      // half a second of compiling was most of a batch's time (bench/changes.md): none here.
      await trx.raw('SET LOCAL jit = off');
      // Each order the batch rewrites adds its search keys to the search index's pending list again;
      // at Postgres's 4 MB every other batch merged the list into the index (a third of a report's
      // time). The report's own transactions let it grow to 64 MB; the worker's sweep merges it
      // (tidySearchIndex, services/orders/search.ts).
      await trx.raw("SET LOCAL gin_pending_list_limit = '64MB'");
      const matches = await this.match(trx, workspaceId, rows);
      const matched: Array<{ row: ReportRow; orderId: string }> = [];
      for (const row of rows) {
        const found = matches.get(row.line);
        if (typeof found === 'string') matched.push({ row, orderId: found });
        else result.unmatched.push(unmatchedRow(row, found?.reason ?? 'not_found'));
      }
      // A tracking number goes to one order: within a batch, the first row that gives it to an order keeps it.
      const owner = new Map<string, string>();
      const events = matched.map(({ row, orderId }) => {
        const taken = row.tracking && (owner.get(row.tracking) ?? orderId) !== orderId;
        if (row.tracking && !taken) owner.set(row.tracking, orderId);
        return {
          orderId,
          status: row.status,
          carrier: row.carrier,
          trackingNumber: row.tracking && !taken ? row.tracking : null,
          carrierStatus: row.carrierStatus,
          at: row.at,
          source: 'import' as const,
          by: options.fileName,
        };
      });
      const applied = await applyDeliveryEvents(trx, workspaceId, events, { notify: options.notify });
      // The counts follow the history: a row is updated or late when it added an event, else unchanged.
      for (const one of applied) {
        if (one.recorded && one.wrote) result.updated += 1;
        else if (one.recorded && !one.applied) result.late += 1;
        else result.unchanged += 1;
        if (one.attempted) result.attempts += 1;
      }
    });
    await applying.catch((err: unknown) => {
      throw err instanceof AppError ? err : new ReportInterrupted(err, lines, before);
    });
  }

  /**
   * The rows of unknown words again, once the shop has said what the words mean: a small report of
   * those rows, read and applied as any report (by the same file name), answered with the lines of
   * the original file.
   */
  async reapply(workspaceId: string, rows: UnknownRow[], fileName: string): Promise<ReportOutcome> {
    const outcome = await this.run(workspaceId, rowsAsReport(rows), { fileName });
    // The small report's line n is rows[n - 2]'s line in the file.
    const lineOf = (line: number) => rows[line - 2]?.line ?? line;
    return {
      ...outcome,
      unmatched: outcome.unmatched.map((u) => ({ ...u, line: lineOf(u.line) })),
      unknown_words: outcome.unknown_words.map((u) => ({ ...u, line: lineOf(u.line) })),
      unknownRows: outcome.unknownRows.map((r) => ({ ...r, line: lineOf(r.line) })),
    };
  }

  /** Reads the file through once without keeping its rows: a 413 past the bound, a 400 when unreadable or empty. */
  private async countRows(file: Buffer): Promise<void> {
    const sheet = await openSpreadsheet(file, { maxBytes: IMPORT_MAX_BYTES, maxRows: IMPORT_MAX_ROWS });
    try {
      for await (const _batch of batchesOf(sheet.rows, msg('reportNoRows')));
    } finally {
      await sheet.rows.return(undefined);
    }
  }

  private columnsOf(header: string[]): { columns: Partial<Record<ReportColumn, number>>; ignored: string[] } {
    const { columns, ignored } = headerColumns(header, REPORT_COLUMNS);
    const fields: FieldErrors = {};
    if (columns.status === undefined) fields.status = msg('reportNoStatusColumn', { names: REPORT_COLUMNS.status.join(', ') });
    if (columns.tracking === undefined && columns.ref === undefined && columns.phone === undefined) {
      fields.tracking = msg('reportNoKeyColumn', {
        tracking: REPORT_COLUMNS.tracking.join(', '),
        ref: REPORT_COLUMNS.ref.join(', '),
        phone: REPORT_COLUMNS.phone.join(', '),
      });
    }
    if (Object.keys(fields).length > 0) throw new ValidationError(fields, msg('reportHeader'));
    return { columns, ignored };
  }

  private readRow(
    row: SheetRow,
    columns: Partial<Record<ReportColumn, number>>,
    read: WordReader,
    carrier: string | null,
  ): ReportRow | { unknown: UnknownRow } | { reason: UnmatchedReason; row: RowKeys } {
    if (unsafeTextAt(row.cells)) return { reason: 'unreadable', row: { line: row.line, tracking: '', ref: '', seen: { name: null, phone: null } } };
    const word = cellOf(row, columns.status);
    const status = read(word);
    if (!status) {
      const text = (column: keyof typeof columns, max = 200) => cellOf(row, columns[column], max);
      const unknown = { line: row.line, word, tracking: text('tracking', 100), ref: text('ref'), phone: text('phone', 40), name: text('name', 100) };
      return { unknown: { ...unknown, carrier: text('carrier', 100), date: text('date', 40) } };
    }
    const tracking = cellOf(row, columns.tracking, 100);
    const ref = cellOf(row, columns.ref);
    const phoneCell = cellOf(row, columns.phone, 40);
    const phone = phoneCell ? normalizeMoroccanPhone(phoneCell) : null;
    const seen = { name: cellOf(row, columns.name, 100) || null, phone: phoneCell || null };
    if (!tracking && !ref && !phone) return { reason: 'no_key', row: { line: row.line, tracking, ref, seen } };
    const dateCell = cellOf(row, columns.date, 40);
    const parsed = dateCell ? parseSheetDate(dateCell) : undefined;
    // A date in the future (a carrier's clock, a typo) is read as now: the event still counts.
    const at = parsed && Date.parse(parsed) <= Date.now() ? parsed : new Date().toISOString();
    return { line: row.line, tracking, ref, phone, seen, status, carrierStatus: word, carrier: cellOf(row, columns.carrier, 100) || carrier, at };
  }

  /**
   * Each row's order, by one query per key for the whole batch: the tracking number, else the
   * store's reference, else the phone (the one order whose delivery is under way; else the one
   * confirmed order without a delivery). Another workspace's orders are never seen.
   */
  private async match(trx: Knex.Transaction, workspaceId: string, rows: ReportRow[]): Promise<Map<number, string | { reason: UnmatchedReason }>> {
    const found = new Map<number, string | { reason: UnmatchedReason }>();
    const byTracking = await this.lookup(trx, workspaceId, 'delivery_tracking_number', [...new Set(rows.map((r) => r.tracking).filter(Boolean))]);
    const refs = [...new Set(rows.map((r) => bareRef(r.ref)).filter(Boolean))];
    const byRef = new Map<string, string[]>();
    if (refs.length > 0) {
      const refRows = await trx('orders')
        .where({ workspace_id: workspaceId })
        .whereRaw("ltrim(external_ref, '# ') = ANY(?::text[])", [refs])
        .select('id', trx.raw("ltrim(external_ref, '# ') AS ref"));
      for (const row of refRows) byRef.set(row.ref, [...(byRef.get(row.ref) ?? []), row.id]);
    }
    const phones = [...new Set(rows.map((r) => r.phone).filter((p): p is string => !!p))];
    const byPhone = new Map<string, Array<{ id: string; status: string; delivery_status: string | null }>>();
    if (phones.length > 0) {
      const phoneRows = await trx('orders').where({ workspace_id: workspaceId }).whereIn('phone', phones).select('id', 'phone', 'status', 'delivery_status');
      for (const row of phoneRows) byPhone.set(row.phone, [...(byPhone.get(row.phone) ?? []), row]);
    }
    for (const row of rows) {
      const tracked = row.tracking ? byTracking.get(row.tracking) : undefined;
      if (tracked?.length === 1) {
        found.set(row.line, tracked[0]);
        continue;
      }
      const referenced = row.ref ? byRef.get(bareRef(row.ref)) : undefined;
      if (referenced && referenced.length > 0) {
        found.set(row.line, referenced.length === 1 ? referenced[0] : { reason: 'ambiguous' });
        continue;
      }
      const candidates = row.phone ? (byPhone.get(row.phone) ?? []) : [];
      const underWay = candidates.filter((o) => o.delivery_status && !isFinalDelivery(o.delivery_status));
      const waiting = candidates.filter((o) => !o.delivery_status && isConfirming(o.status));
      const pick = underWay.length > 0 ? underWay : waiting;
      if (pick.length === 1) found.set(row.line, pick[0].id);
      else if (pick.length > 1) found.set(row.line, { reason: 'ambiguous' });
      else found.set(row.line, { reason: 'not_found' });
    }
    return found;
  }

  private async lookup(trx: Knex.Transaction, workspaceId: string, column: string, values: string[]): Promise<Map<string, string[]>> {
    const map = new Map<string, string[]>();
    if (values.length === 0) return map;
    const rows = await trx('orders').where({ workspace_id: workspaceId }).whereIn(column, values).select('id', `${column} as value`);
    for (const row of rows) map.set(row.value, [...(map.get(row.value) ?? []), row.id]);
    return map;
  }

  /** Whether any endpoint of the workspace takes order.delivery_updated (else the import sends none, and asks no more). */
  private async hasSubscribers(workspaceId: string): Promise<boolean> {
    const row = await this.knex('webhook_endpoints')
      .where({ workspace_id: workspaceId, enabled: true })
      .whereRaw("'order.delivery_updated' = ANY(events)")
      .first('id');
    return Boolean(row);
  }
}
