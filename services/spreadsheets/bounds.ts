import { AppError, ValidationError } from '../errors';

/** The largest file read: a bigger one is refused before a byte of it is decoded. */
export const SHEET_MAX_BYTES = 10 * 1024 * 1024;
/** Rows after the header a file may hold (blank rows not counted). */
export const SHEET_MAX_ROWS = 20_000;

export interface SheetBounds {
  maxBytes: number;
  maxRows: number;
  /**
   * Blank rows, and CSV lines with another number of cells than the header, a file may hold. Each
   * costs work before it is skipped: a file of millions of them holds no row and would take minutes.
   */
  maxUnevenRows: number;
}

export function boundsOf(options: Partial<Pick<SheetBounds, 'maxBytes' | 'maxRows'>> = {}): SheetBounds {
  const maxRows = options.maxRows ?? SHEET_MAX_ROWS;
  return { maxBytes: options.maxBytes ?? SHEET_MAX_BYTES, maxRows, maxUnevenRows: 2 * maxRows };
}

/** 413 `TOO_MANY_ROWS`; `max` is the bound it passed, for a caller that words it its own way. */
export class TooManyRowsError extends AppError {
  constructor(readonly max: number) {
    super(413, `At most ${max.toLocaleString('en')} rows per file; this one has more. Split it and import each part`, 'TOO_MANY_ROWS');
  }
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError(413, `The file is larger than ${Math.round(maxBytes / (1024 * 1024))} MB: split it and import each part`, 'PAYLOAD_TOO_LARGE');
}

export function unevenRows(max: number): AppError {
  return new AppError(
    413,
    `The file was not imported: over ${max.toLocaleString('en')} of its lines are blank or have another number of cells than the header. Remove the blank lines and import it again`,
    'TOO_MANY_ROWS',
  );
}

/** The file refused as a whole, with the reason by the `file` field. */
export function unreadable(reason: string): ValidationError {
  return new ValidationError({ file: reason });
}
