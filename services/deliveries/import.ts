import type { Knex } from 'knex';
import { AppError, ValidationError, msg, normalizeMoroccanPhone, openSpreadsheet, parseSheetDate, unsafeTextAt } from '../../services/shared';
import type { FieldErrors, SheetRow } from '../../services/shared';
import { batchesOf, columnKey, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../orders';
import { applyDeliveryEvents } from './apply';
import type { DeliveryWord } from '../orders';
import type { CarrierWords, WordReader } from './words';

/** What a carrier's report can hold, by column; the names are compared as the order import compares them. */
export const REPORT_COLUMNS = {
  tracking: ['tracking', 'tracking_number', 'tracking number', 'code', "code d'envoi", 'code envoi', 'n° de suivi', 'numéro de suivi', 'suivi', 'رقم التتبع'],
  ref: ['ref', 'référence', 'reference', 'commande', 'n° commande', 'external_ref', 'المرجع'],
  phone: ['téléphone', 'telephone', 'tel', 'phone', 'mobile', 'الهاتف'],
  status: ['statut', 'status', 'état', 'etat', 'الحالة'],
  carrier: ['transporteur', 'société', 'societe', 'carrier', 'شركة التوصيل'],
  date: ['date', 'date de livraison', 'date statut', 'date du statut', 'updated_at', 'التاريخ'],
} as const;
type ReportColumn = keyof typeof REPORT_COLUMNS;

const COLUMN_BY_KEY = new Map<string, ReportColumn>(
  (Object.entries(REPORT_COLUMNS) as Array<[ReportColumn, readonly string[]]>).flatMap(([column, names]) =>
    names.map((name) => [columnKey(name), column] as const),
  ),
);

/** Why a row found no order: no key in it, no order has it, or two or more orders could be the one. */
export type UnmatchedReason = 'no_key' | 'not_found' | 'ambiguous' | 'unreadable';

export interface ReportResult {
  /** Rows that changed their order's delivery: each is one event of its history. */
  updated: number;
  /** Rows that said what the order already knew: nothing written, nothing added to the history. */
  unchanged: number;
  /** Rows older than their order's last news: kept in its history, not applied. */
  late: number;
  /** Of the rows updated, attempts (the courier could not deliver yet). */
  attempts: number;
  unmatched: Array<{ line: number; reason: UnmatchedReason }>;
  unknown_words: Array<{ line: number; word: string }>;
  /** What the file was read as, as the order import says it. */
  format: 'csv' | 'xlsx';
  encoding: string | null;
}

interface ReportRow {
  line: number;
  tracking: string;
  ref: string;
  phone: string | null;
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

/** A store's reference as shops type it: `#1001` and `1001` are one. */
const bareRef = (ref: string) => ref.replace(/^#\s*/, '');

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

  async run(workspaceId: string, file: Buffer, options: { fileName: string; carrier?: string | null }): Promise<ReportResult> {
    // The rows are applied a batch per transaction: a file past the row bound is refused before
    // any is, by a first reading that keeps nothing (the file is in memory already).
    await this.countRows(file);
    const sheet = await openSpreadsheet(file, { maxBytes: IMPORT_MAX_BYTES, maxRows: IMPORT_MAX_ROWS });
    try {
      if (unsafeTextAt(sheet.header.cells)) throw new ValidationError({ file: msg('importBinary') });
      const columns = this.columnsOf(sheet.header.cells);
      const read = await this.words.reader(workspaceId);
      const notify = await this.hasSubscribers(workspaceId);
      const result: ReportResult = {
        updated: 0,
        unchanged: 0,
        late: 0,
        attempts: 0,
        unmatched: [],
        unknown_words: [],
        format: sheet.format,
        encoding: sheet.encoding,
      };
      // The last line of the batches committed so far: what an interrupted import says is applied.
      let appliedThrough: number | null = null;
      for await (const batch of batchesOf(sheet.rows, msg('reportNoRows'))) {
        const rows: ReportRow[] = [];
        for (const row of batch) {
          const parsed = this.readRow(row, columns, read, options.carrier ?? null);
          if ('unknown' in parsed) result.unknown_words.push({ line: row.line, word: parsed.unknown });
          else if ('reason' in parsed) result.unmatched.push({ line: row.line, reason: parsed.reason });
          else rows.push(parsed);
        }
        const before = { throughLine: appliedThrough, updated: result.updated, unchanged: result.unchanged };
        const lines = { from: batch[0].line, to: batch[batch.length - 1].line };
        const applying = this.knex.transaction(async (trx) => {
          const matches = await this.match(trx, workspaceId, rows);
          const matched: Array<{ row: ReportRow; orderId: string }> = [];
          for (const row of rows) {
            const found = matches.get(row.line);
            if (typeof found === 'string') matched.push({ row, orderId: found });
            else result.unmatched.push({ line: row.line, reason: found?.reason ?? 'not_found' });
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
          const applied = await applyDeliveryEvents(trx, workspaceId, events, { notify });
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
        appliedThrough = lines.to;
      }
      result.unmatched.sort((a, b) => a.line - b.line);
      return result;
    } finally {
      await sheet.rows.return(undefined);
    }
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

  private columnsOf(header: string[]): Partial<Record<ReportColumn, number>> {
    const columns: Partial<Record<ReportColumn, number>> = {};
    header.forEach((name, index) => {
      const column = name.length > 100 ? undefined : COLUMN_BY_KEY.get(columnKey(name));
      if (column) columns[column] ??= index;
    });
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
    return columns;
  }

  private readRow(
    row: SheetRow,
    columns: Partial<Record<ReportColumn, number>>,
    read: WordReader,
    carrier: string | null,
  ): ReportRow | { unknown: string } | { reason: UnmatchedReason } {
    if (unsafeTextAt(row.cells)) return { reason: 'unreadable' };
    const word = cellOf(row, columns.status);
    const status = read(word);
    if (!status) return { unknown: word };
    const tracking = cellOf(row, columns.tracking, 100);
    const ref = cellOf(row, columns.ref);
    const phoneCell = cellOf(row, columns.phone, 40);
    const phone = phoneCell ? normalizeMoroccanPhone(phoneCell) : null;
    if (!tracking && !ref && !phone) return { reason: 'no_key' };
    const dateCell = cellOf(row, columns.date, 40);
    const parsed = dateCell ? parseSheetDate(dateCell) : undefined;
    // A date in the future (a carrier's clock, a typo) is read as now: the event still counts.
    const at = parsed && Date.parse(parsed) <= Date.now() ? parsed : new Date().toISOString();
    return { line: row.line, tracking, ref, phone, status, carrierStatus: word, carrier: cellOf(row, columns.carrier, 100) || carrier, at };
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
      const underWay = candidates.filter((o) => o.delivery_status && !['delivered', 'refused', 'returned', 'lost'].includes(o.delivery_status));
      const waiting = candidates.filter((o) => !o.delivery_status && (o.status === 'confirmed' || o.status === 'order-changed'));
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
