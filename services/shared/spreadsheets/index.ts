import { boundsOf, tooLarge, TooManyRowsError, unreadable } from './bounds';
import type { SheetLimits } from './bounds';
import { readCsv } from './csv';
import type { CsvEncoding, CsvSeparator } from './csv';
import type { SheetRow } from './rows';
import { looksLikeZip, readXlsx } from './xlsx';
import { msg } from '../messages';

export { parseAmount } from './amounts';
export { parseSheetDate } from './dates';
export { SHEET_MAX_BYTES, SHEET_MAX_ROWS, TooManyRowsError } from './bounds';
export type { SheetRow } from './rows';

/** A spreadsheet read as far as its header: its rows come as they are read. */
export interface OpenedSheet {
  format: 'csv' | 'xlsx';
  /** What a CSV file's bytes were read as; null for XLSX (always UTF-8 inside). */
  encoding: CsvEncoding | null;
  /** The separator of a CSV file; null for XLSX. */
  separator: CsvSeparator | null;
  /** The first row that is not blank, cell by cell. */
  header: SheetRow;
  /**
   * The rows after the header, blank ones left out, cells as text. The row past `maxRows` throws
   * TooManyRowsError (413) without another row read. End it (`return()`) when not read to its end.
   */
  rows: AsyncGenerator<SheetRow>;
}

/**
 * Opens a CSV (UTF-8 with or without BOM, UTF-16 with BOM, or Windows-1252; `,`, `;` or tab) or
 * XLSX (first sheet) file held in memory, within bounds: at most `maxBytes` (10 MB) and `maxRows`
 * (20,000) rows after the header; a file of millions of blank rows, an XLSX that unpacks to more
 * than its parts may hold, or one cell of megabytes is a 413 before memory grows. Its work is
 * bounded too: a row of more than `maxColumns` (200) cells, more than `maxCells` (50 per allowed
 * row) in all, more than `maxSharedStrings` (25 per allowed row), or more than `maxWorkMs` (5 s)
 * of the parser's CPU time is a 413 as soon as it is passed. A file that is no spreadsheet, or has
 * no row at all, is a ValidationError on `file`.
 */
export async function openSpreadsheet(file: Buffer, options: SheetLimits = {}): Promise<OpenedSheet> {
  const bounds = boundsOf(options);
  if (file.length === 0) throw unreadable(msg('importEmpty'));
  if (file.length > bounds.maxBytes) throw tooLarge(bounds.maxBytes);
  const sheet = looksLikeZip(file)
    ? { format: 'xlsx' as const, encoding: null, separator: null, ...(await readXlsx(file, bounds)) }
    : { format: 'csv' as const, ...readCsv(file, bounds) };
  try {
    const { value: header } = await sheet.rows.next();
    if (!header) throw unreadable(msg('importEmpty'));
    return { format: sheet.format, encoding: sheet.encoding, separator: sheet.separator, header, rows: counted(sheet.rows, bounds.maxRows) };
  } catch (err) {
    await sheet.rows.return(undefined);
    throw err;
  }
}

async function* counted(rows: AsyncGenerator<SheetRow>, maxRows: number): AsyncGenerator<SheetRow> {
  let count = 0;
  try {
    for await (const row of rows) {
      count += 1;
      if (count > maxRows) throw new TooManyRowsError(maxRows);
      yield row;
    }
  } finally {
    await rows.return(undefined);
  }
}
