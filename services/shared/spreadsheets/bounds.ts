import { AppError, ValidationError } from '../errors';
import { msg } from '../messages';
import type { Message } from '../messages';

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
    super(413, msg('sheetTooManyRows', { max: max.toLocaleString('en') }), 'TOO_MANY_ROWS');
  }
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError(413, msg('importTooLarge', { mb: Math.round(maxBytes / (1024 * 1024)) }), 'PAYLOAD_TOO_LARGE');
}

export function unevenRows(max: number): AppError {
  return new AppError(413, msg('importUneven', { max: max.toLocaleString('en') }), 'TOO_MANY_ROWS');
}

/** The file refused as a whole, with the reason by the `file` field. */
export function unreadable(reason: Message): ValidationError {
  return new ValidationError({ file: reason });
}
