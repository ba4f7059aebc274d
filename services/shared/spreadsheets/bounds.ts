import { AppError, ValidationError } from '../errors';
import { msg } from '../messages';
import type { Message } from '../messages';

/** The largest file read: a bigger one is refused before a byte of it is decoded. */
export const SHEET_MAX_BYTES = 10 * 1024 * 1024;
/** Rows after the header a file may hold (blank rows not counted). */
export const SHEET_MAX_ROWS = 20_000;
/** Cells a row may hold: the widest sheet a shop or a carrier writes has under a hundred columns. */
const SHEET_MAX_COLUMNS = 200;
/**
 * Cells a file may hold, per row it may hold: a full file of 50 columns. Each cell costs parsing,
 * whether it holds anything or not (Excel writes a cell for each formatted one), so their count
 * bounds the work as the bytes cannot: 117 kB of XLSX unpack to four million cells.
 */
const CELLS_PER_ROW = 50;
/** Shared strings (the distinct texts of an XLSX) a file may hold per row: they are held in memory. */
const SHARED_STRINGS_PER_ROW = 25;
/**
 * CPU time the parser may spend reading a file. On a slow machine a legitimate XLSX of 20,000 rows ×
 * 10 columns takes 1.1 s of it, 20,000 × 30 2.3 s, a 10 MB CSV 0.6 s; 64 MB of XML of any other
 * shape takes 3 to 4 s a part, and a file holds two such parts (its sheet and its shared strings).
 */
const SHEET_MAX_WORK_MS = 5_000;

export interface SheetBounds {
  maxBytes: number;
  maxRows: number;
  /**
   * Blank rows, and CSV lines with another number of cells than the header, a file may hold. Each
   * costs work before it is skipped: a file of millions of them holds no row and would take minutes.
   */
  maxUnevenRows: number;
  maxColumns: number;
  maxCells: number;
  maxSharedStrings: number;
  maxWorkMs: number;
}

/** The bounds a caller may set; the others follow from `maxRows`. */
export type SheetLimits = Partial<Omit<SheetBounds, 'maxUnevenRows'>>;

export function boundsOf(options: SheetLimits = {}): SheetBounds {
  const maxRows = options.maxRows ?? SHEET_MAX_ROWS;
  return {
    maxBytes: options.maxBytes ?? SHEET_MAX_BYTES,
    maxRows,
    maxUnevenRows: 2 * maxRows,
    maxColumns: options.maxColumns ?? SHEET_MAX_COLUMNS,
    maxCells: options.maxCells ?? CELLS_PER_ROW * maxRows,
    maxSharedStrings: options.maxSharedStrings ?? SHARED_STRINGS_PER_ROW * maxRows,
    maxWorkMs: options.maxWorkMs ?? SHEET_MAX_WORK_MS,
  };
}

/** 413 `TOO_MANY_ROWS`; `max` is the bound it passed, for a caller that words it its own way. */
export class TooManyRowsError extends AppError {
  constructor(readonly max: number) {
    super(413, msg('sheetTooManyRows', { max: max.toLocaleString('en') }), 'TOO_MANY_ROWS');
  }
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError(413, msg('importTooLarge', { mb: Math.round(maxBytes / (1024 * 1024)) }), 'PAYLOAD_TOO_LARGE');
}

export function unevenRows(max: number): AppError {
  return new AppError(413, msg('importUneven', { max: max.toLocaleString('en') }), 'TOO_MANY_ROWS');
}

export function tooWide(maxColumns: number): AppError {
  return new AppError(413, msg('sheetTooWide', { max: maxColumns.toLocaleString('en') }), 'TOO_MANY_CELLS');
}

export function tooManyCells(maxCells: number): AppError {
  return new AppError(413, msg('sheetTooManyCells', { max: maxCells.toLocaleString('en') }), 'TOO_MANY_CELLS');
}

export function tooManyStrings(maxStrings: number): AppError {
  return new AppError(413, msg('sheetTooManyStrings', { max: maxStrings.toLocaleString('en') }), 'TOO_MANY_CELLS');
}

/**
 * The CPU time a file's parser has spent, against its budget. Only the parser's own steps are
 * counted (what the caller does with the rows is not), in CPU time rather than on the clock: a busy
 * machine makes the same file take longer, not cost more. The process's CPU time is the nearest
 * Node 20 offers to this thread's: other threads (the inflater, the collector) add a little to it.
 */
export class WorkBudget {
  private spentMicros = 0;

  constructor(private readonly maxMs: number) {}

  /** Runs one synchronous step of the parser; a 413 `TOO_MUCH_WORK` once the budget is spent. */
  spend(step: () => void): void {
    const start = process.cpuUsage();
    try {
      step();
    } finally {
      const used = process.cpuUsage(start);
      this.spentMicros += used.user + used.system;
    }
    if (this.spentMicros > this.maxMs * 1000) {
      throw new AppError(413, msg('sheetTooMuchWork', { seconds: (this.maxMs / 1000).toLocaleString('en') }), 'TOO_MUCH_WORK');
    }
  }
}

/** The file refused as a whole, with the reason by the `file` field. */
export function unreadable(reason: Message): ValidationError {
  return new ValidationError({ file: reason });
}
