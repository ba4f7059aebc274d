import { isUtf8 } from 'node:buffer';
import { finished } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse as csvParser, CsvError } from 'csv-parse';
import type { Options } from 'csv-parse';
import { tooManyCells, tooWide, unevenRows, unreadable, WorkBudget } from './bounds';
import type { SheetBounds } from './bounds';
import type { SheetRow } from './rows';
import { msg } from '../messages';

/** What a CSV file's bytes were read as. */
export type CsvEncoding = 'utf-8' | 'windows-1252' | 'utf-16le';
export type CsvSeparator = ',' | ';' | '\t';

/**
 * Bytes handed to the parser at a time. A row takes two at least (a character and its line break),
 * so one slice never makes more than a thousand rows.
 */
const SLICE_BYTES = 2000;

/**
 * The encoding of a CSV file: a BOM says it (UTF-8, or UTF-16 as Excel's "Unicode text" writes);
 * without one, bytes that are valid UTF-8 are UTF-8, and anything else is Windows-1252, what Excel
 * in French writes for "CSV (séparateur : point-virgule)" (every byte is a character there).
 */
function encodingOf(file: Buffer): { encoding: CsvEncoding; bom: number } {
  if (file[0] === 0xef && file[1] === 0xbb && file[2] === 0xbf) return { encoding: 'utf-8', bom: 3 };
  if (file[0] === 0xff && file[1] === 0xfe) return { encoding: 'utf-16le', bom: 2 };
  return { encoding: isUtf8(file) ? 'utf-8' : 'windows-1252', bom: 0 };
}

/** Quoted fields may span lines; a file saved by several tools may mix CRLF, LF and CR: all become LF. */
function oneLineEnding(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/**
 * The separator the header line uses most, outside quotes: `;` (Excel in French), tab (Excel's
 * "Unicode text"), or `,`. The file's first 64 kB tell it as well as the whole.
 */
function separatorOf(head: string): CsvSeparator {
  const header =
    oneLineEnding(head)
      .split('\n', 50)
      .find((line) => line.trim() !== '') ?? '';
  const counts: Record<CsvSeparator, number> = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const c of header) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ',' || c === ';' || c === '\t')) counts[c] += 1;
  }
  const best = (Object.keys(counts) as CsvSeparator[]).reduce((a, b) => (counts[b] > counts[a] ? b : a));
  return counts[best] === 0 ? ',' : best;
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
 * The file's text, a slice at a time: a character cut in two by a slice's end is completed by the
 * next slice, and a CR that ends a slice, maybe the first half of a CRLF, goes with the next one.
 */
function* slicesOf(file: Buffer, encoding: CsvEncoding): Generator<string> {
  const decoder = new TextDecoder(encoding);
  let carriageReturn = false;
  for (let start = 0; start < file.length; start += SLICE_BYTES) {
    let text: string = (carriageReturn ? '\r' : '') + decoder.decode(file.subarray(start, start + SLICE_BYTES), { stream: true });
    carriageReturn = text.endsWith('\r') && start + SLICE_BYTES < file.length;
    if (carriageReturn) text = text.slice(0, -1);
    if (text !== '') yield oneLineEnding(text);
  }
}

export interface CsvSheet {
  encoding: CsvEncoding;
  separator: CsvSeparator;
  /** Every row, the header first, as it is read; rows whose cells are all blank are left out. */
  rows: AsyncGenerator<SheetRow>;
}

/**
 * A CSV file's rows, read as they are needed: the parser reads one slice (2 kB) ahead of the
 * reader, and stops when the reader does. The bounds of an XLSX apply to its cells too: a line of
 * more than `maxColumns` cells, or more than `maxCells` in the rows read, is refused.
 */
export function readCsv(file: Buffer, bounds: SheetBounds): CsvSheet {
  const { encoding, bom } = encodingOf(file);
  const body = file.subarray(bom);
  const separator = separatorOf(new TextDecoder(encoding).decode(body.subarray(0, 64 * 1024)));
  return { encoding, separator, rows: csvRows(body, encoding, separator, bounds) };
}

/** A row that is left out: every cell blank. */
function isBlank(cells: string[]): boolean {
  return cells.every((cell) => cell.trim() === '');
}

/**
 * The parser is handed one slice at a time and its rows are taken before the next: one slice per
 * turn of the event loop, so other requests go on meanwhile, and never more than a slice's rows
 * (a thousand at most) held. Each row becomes its small SheetRow as the parser makes it.
 *
 * Rows of another number of cells than the header (blank lines with spaces, short lines) are counted
 * here, not by the parser: for each one, the parser would make an error object of some kilobytes
 * (its context copied through JSON, a stack), 10 kB a line in all, which reached the old generation:
 * 20,000 short lines held the process 100 MB over its normal memory until the next full collection.
 * It compares a row's cells with those of its first row, so each row is made its first
 * (`info.records` back to 0): it has nothing to compare.
 */
async function* csvRows(file: Buffer, encoding: CsvEncoding, delimiter: CsvSeparator, bounds: SheetBounds): AsyncGenerator<SheetRow> {
  let ready: SheetRow[] = [];
  /** The cells of the first row that is not blank (the header's), and the rows with another number. */
  let width: number | undefined;
  let uneven = 0;
  /** A line of more cells than the bound was read; the cells of the rows read (blank ones are bounded as uneven). */
  let wide = false;
  let cells = 0;
  const work = new WorkBudget(bounds.maxWorkMs);
  const options: Options<null, string[]> = {
    delimiter,
    record_delimiter: '\n',
    relax_quotes: true,
    skip_empty_lines: true,
    // A longer line keeps the rest in its last cell: one cell past the bound says it is too wide,
    // without an array of ten million cells for a line of ten million commas.
    ignore_last_delimiters: bounds.maxColumns + 1,
    on_record: (record, context) => {
      // The next row is compared with itself (see above).
      (parser.info as { records: number }).records = 0;
      if (record.length > bounds.maxColumns) wide = true;
      const blank = isBlank(record);
      if (width === undefined) {
        if (blank) return null;
        width = record.length;
      } else if (record.length !== width) uneven += 1;
      // `lines` is where a row ends; a quoted field with line breaks makes it start earlier.
      if (!blank) {
        cells += record.length;
        ready.push({ line: context.lines - lineBreaksIn(record), cells: record });
      }
      return null;
    },
  };
  // The library types a record changed by on_record only for a parser with columns.
  const parser = csvParser(options as unknown as Options);
  // Its errors are read from `errored` after each slice, in the order of the rows.
  parser.on('error', () => undefined);
  /** The rows made since the last call; a file past a bound is refused once the parser has read the line that passes it. */
  const taken = (): SheetRow[] => {
    if (parser.errored) throw parser.errored;
    if (wide) throw tooWide(bounds.maxColumns);
    if (cells > bounds.maxCells) throw tooManyCells(bounds.maxCells);
    if (uneven > bounds.maxUnevenRows) throw unevenRows(bounds.maxUnevenRows);
    const rows = ready;
    ready = [];
    return rows;
  };
  try {
    for (const text of slicesOf(file, encoding)) {
      work.spend(() => parser.write(text));
      yield* taken();
      await nextTurn();
    }
    parser.end();
    await finished(parser, { readable: false }).catch(() => undefined);
    yield* taken();
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    const unclosed = err.code === 'CSV_QUOTE_NOT_CLOSED';
    const at =
      (unclosed ? unclosedQuoteLine(oneLineEnding(new TextDecoder(encoding).decode(file)), delimiter) : undefined) ??
      (err as CsvError & { lines?: number }).lines;
    throw unreadable(msg(unclosed ? 'importUnclosed' : 'importInvalidLine', { line: at ?? '?' }));
  } finally {
    parser.destroy();
  }
}
