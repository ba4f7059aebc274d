import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SaxesParser } from 'saxes';
import type { SaxesTagPlain } from 'saxes';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { AppError } from '../errors';
import { tooManyCells, tooManyStrings, tooWide, unevenRows, unreadable, WorkBudget } from './bounds';
import type { SheetBounds } from './bounds';
import type { SheetRow } from './rows';
import { msg } from '../messages';

/**
 * An XLSX file is a zip of XML parts; a small file can unpack to gigabytes. Each part read is
 * checked against these before it is inflated, by the size its zip entry declares, and the inflater
 * stops at that size (yauzl's `validateEntrySizes`): memory and time stay bounded whatever the file.
 */
const MAX_PART_BYTES = 64 * 1024 * 1024;
const MAX_SMALL_PART_BYTES = 4 * 1024 * 1024;
const MAX_ENTRIES = 10_000;
/**
 * Characters the XML parser may gather without reaching a tag: a cell holds 32,767 characters at
 * most in Excel (some 200 kB written out with entities). Past this the parser would be holding one
 * huge text in memory.
 */
const MAX_TEXT_RUN = 1024 * 1024;
/**
 * Elements open at once: a sheet's deepest text is some seven levels down. The parser keeps each open
 * element: 60 MB of `<a>` opened and never closed held 1.5 GB.
 */
const MAX_DEPTH = 100;
/** A cell's text is cut here, as Excel does. */
const MAX_CELL_CHARS = 32_767;
/**
 * Characters of XML parsed between two turns of the event loop: some milliseconds of work, whatever
 * the XML holds. An inflated chunk is 16 kB, but a part stored without compression comes whole.
 */
const SLICE_CHARS = 32 * 1024;

function partTooLarge(): AppError {
  return new AppError(413, msg('sheetUnpacked'), 'PAYLOAD_TOO_LARGE');
}

function notAWorkbook(): AppError {
  return unreadable(msg('sheetNotWorkbook'));
}

/** A zip starts with a local file header (`PK\x03\x04`). */
export function looksLikeZip(file: Buffer): boolean {
  return file.length >= 4 && file[0] === 0x50 && file[1] === 0x4b && file[2] === 0x03 && file[3] === 0x04;
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1);

/** An attribute by its local name (`r:id` and `id` alike). */
function attribute(tag: SaxesTagPlain, name: string): string | undefined {
  for (const [key, value] of Object.entries(tag.attributes)) if (localName(key) === name) return value;
  return undefined;
}

/** "AB12" → 27: the column of a cell reference, from 0. */
function columnOf(reference: string | undefined): number | undefined {
  const letters = /^([A-Z]{1,3})\d*$/i.exec(reference ?? '')?.[1];
  if (!letters) return undefined;
  let n = 0;
  for (const c of letters.toUpperCase()) n = n * 26 + (c.charCodeAt(0) - 64);
  return n - 1;
}

/** What a part's reader does at each tag and text (saxes keeps one handler per event: these are wrapped). */
interface PartHandlers {
  opentag?: (tag: SaxesTagPlain) => void;
  closetag?: (tag: SaxesTagPlain) => void;
  text?: (text: string) => void;
}

/** A part's reading: the handlers of its tags and text, and the work budget of the whole file. */
interface PartReading {
  limit: number;
  handlers: PartHandlers;
  work: WorkBudget;
}

/** An XML part read whole through a streaming parser. */
async function readPart(zip: ZipFile, entry: Entry, reading: PartReading): Promise<void> {
  for await (const _ of streamPart(zip, entry, reading)) {
    // Each step is one slice parsed.
  }
}

/** The text of a chunk, a slice at a time. */
function* slicesOf(text: string): Generator<string> {
  for (let start = 0; start < text.length; start += SLICE_CHARS) yield text.slice(start, start + SLICE_CHARS);
}

/**
 * The same as a generator: one step per slice parsed, so that the reader can stop it between two,
 * and a turn of the event loop after each, so that other requests are answered meanwhile.
 */
async function* streamPart(zip: ZipFile, entry: Entry, { limit, handlers, work }: PartReading): AsyncGenerator<void> {
  if (entry.uncompressedSize > limit) throw partTooLarge();
  const parser = new SaxesParser<{ xmlns: false; position: true }>({ xmlns: false, position: true });
  let lastTagAt = 0;
  let depth = 0;
  let failure: unknown;
  parser.on('error', (err) => {
    failure ??= err;
  });
  parser.on('opentag', (tag) => {
    lastTagAt = parser.position;
    depth += 1;
    if (depth > MAX_DEPTH) throw notAWorkbook();
    handlers.opentag?.(tag);
  });
  parser.on('closetag', (tag) => {
    lastTagAt = parser.position;
    depth -= 1;
    handlers.closetag?.(tag);
  });
  if (handlers.text) parser.on('text', handlers.text);
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch {
    throw notAWorkbook();
  }
  const decoder = new TextDecoder();
  try {
    for await (const chunk of stream) {
      for (const slice of slicesOf(decoder.decode(chunk as Buffer, { stream: true }))) {
        work.spend(() => parser.write(slice));
        if (failure) throw failure instanceof AppError ? failure : notAWorkbook();
        if (parser.position - lastTagAt > MAX_TEXT_RUN) throw partTooLarge();
        yield;
        await nextTurn();
      }
    }
    work.spend(() => parser.write(decoder.decode()).close());
    if (failure) throw failure instanceof AppError ? failure : notAWorkbook();
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The inflater's own refusals: more bytes than the entry declares, or a corrupt stream.
    throw /too many bytes|exceed/i.test(String((err as Error).message)) ? partTooLarge() : notAWorkbook();
  } finally {
    stream.destroy();
  }
}

/** The `Target` of each relationship of a `.rels` part, by its `Id` (or by its `Type` for the package's own). */
async function relationships(zip: ZipFile, entry: Entry | undefined, work: WorkBudget): Promise<Array<{ id: string; type: string; target: string }>> {
  const found: Array<{ id: string; type: string; target: string }> = [];
  if (!entry) return found;
  await readPart(zip, entry, {
    limit: MAX_SMALL_PART_BYTES,
    work,
    handlers: {
      opentag: (tag) => {
        if (localName(tag.name) !== 'Relationship' || found.length >= MAX_ENTRIES) return;
        found.push({ id: attribute(tag, 'Id') ?? '', type: attribute(tag, 'Type') ?? '', target: attribute(tag, 'Target') ?? '' });
      },
    },
  });
  return found;
}

/** `Target` resolved against the folder of the part that names it (`worksheets/sheet1.xml` from `xl/workbook.xml`). */
function resolve(from: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = from.split('/').slice(0, -1);
  for (const piece of target.split('/')) {
    if (piece === '..') parts.pop();
    else if (piece !== '.' && piece !== '') parts.push(piece);
  }
  return parts.join('/');
}

/** The path of the workbook's first sheet, in the order the workbook lists its sheets (the tabs' order). */
async function firstSheetPath(zip: ZipFile, entries: Map<string, Entry>, work: WorkBudget): Promise<string> {
  const office = (await relationships(zip, entries.get('_rels/.rels'), work)).find((r) => r.type.endsWith('/officeDocument'));
  const workbookPath = office ? resolve('', office.target) : 'xl/workbook.xml';
  const workbook = entries.get(workbookPath);
  if (!workbook) throw notAWorkbook();
  let firstId: string | undefined;
  await readPart(zip, workbook, {
    limit: MAX_SMALL_PART_BYTES,
    work,
    handlers: {
      opentag: (tag) => {
        if (localName(tag.name) === 'sheet') firstId ??= attribute(tag, 'id');
      },
    },
  });
  const rels = await relationships(zip, entries.get(resolve(workbookPath, `_rels/${workbookPath.split('/').pop()}.rels`)), work);
  const sheet = rels.find((r) => r.id === firstId);
  if (!sheet) throw notAWorkbook();
  return resolve(workbookPath, sheet.target);
}

/** The shared strings table: cells of type `s` hold an index into it. Held in memory, so bounded in count too. */
async function sharedStrings(zip: ZipFile, entry: Entry | undefined, bounds: SheetBounds, work: WorkBudget): Promise<string[]> {
  const strings: string[] = [];
  if (!entry) return strings;
  let current: string | undefined;
  let inText = false;
  let phonetic = 0;
  const handlers: PartHandlers = {
    opentag: (tag) => {
      const name = localName(tag.name);
      if (name === 'si') current = '';
      else if (name === 'rPh') phonetic += 1;
      else if (name === 't' && phonetic === 0) inText = true;
    },
    text: (text) => {
      if (inText && current !== undefined && current.length < MAX_CELL_CHARS) current += text;
    },
    closetag: (tag) => {
      const name = localName(tag.name);
      if (name === 't') inText = false;
      else if (name === 'rPh') phonetic -= 1;
      else if (name === 'si' && current !== undefined) {
        if (strings.length >= bounds.maxSharedStrings) throw tooManyStrings(bounds.maxSharedStrings);
        strings.push(current.slice(0, MAX_CELL_CHARS));
        current = undefined;
      }
    },
  };
  await readPart(zip, entry, { limit: MAX_PART_BYTES, handlers, work });
  return strings;
}

/** A number as Excel shows it in a cell of the General format: 0.1 + 0.2 is 0.3, not 0.30000000000000004. */
function numberText(raw: string): string {
  const n = Number(raw);
  return raw.trim() === '' || !Number.isFinite(n) ? raw : String(Number(n.toPrecision(15)));
}

export interface XlsxSheet {
  /** Every row of the first sheet, the header first; rows whose cells are all blank are left out. */
  rows: AsyncGenerator<SheetRow>;
}

/**
 * The first sheet of an XLSX workbook, as text: shared and inline strings as written, numbers as
 * Excel shows them in the General format, booleans as TRUE/FALSE, dates as their serial number
 * (a date column reads them: see dates.ts). Formulas give their last computed value.
 */
export async function readXlsx(file: Buffer, bounds: SheetBounds): Promise<XlsxSheet> {
  let zip: ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(file, { validateEntrySizes: true, strictFileNames: false });
  } catch {
    throw notAWorkbook();
  }
  if (zip.entryCount > MAX_ENTRIES) throw notAWorkbook();
  const entries = new Map<string, Entry>();
  for await (const entry of zip.eachEntry()) entries.set(entry.fileName, entry);
  // One budget for every part of the file: its parsing is bounded as a whole.
  const work = new WorkBudget(bounds.maxWorkMs);
  const sheetPath = await firstSheetPath(zip, entries, work);
  const sheet = entries.get(sheetPath);
  if (!sheet) throw notAWorkbook();
  // The shared strings sit beside the workbook, one folder above the sheets (xl/sharedStrings.xml).
  const stringsPath = resolve(sheetPath, ['..', 'sharedStrings.xml'].join('/'));
  const strings = await sharedStrings(zip, entries.get(stringsPath), bounds, work);
  return { rows: sheetRows(zip, sheet, strings, bounds, work) };
}

/**
 * The sheet's rows as they are parsed. Every `<c>` element counts toward the file's cells and its
 * row's, empty or not: the parser's work is per element, whatever it holds.
 */
async function* sheetRows(zip: ZipFile, sheet: Entry, strings: string[], bounds: SheetBounds, work: WorkBudget): AsyncGenerator<SheetRow> {
  const ready: SheetRow[] = [];
  let blankRows = 0;
  let rowNumber = 0;
  let cells: string[] | undefined;
  let allCells = 0;
  let rowCells = 0;
  let column = 0;
  let type = 'n';
  let value: string | undefined;
  let inValue = false;
  let phonetic = 0;
  const handlers: PartHandlers = {
    opentag: (tag) => {
      const name = localName(tag.name);
      if (name === 'row') {
        rowNumber = Number(attribute(tag, 'r')) || rowNumber + 1;
        cells = [];
        rowCells = 0;
        column = 0;
      } else if (name === 'c') {
        allCells += 1;
        if (allCells > bounds.maxCells) throw tooManyCells(bounds.maxCells);
        if (!cells) return;
        rowCells += 1;
        if (rowCells > bounds.maxColumns) throw tooWide(bounds.maxColumns);
        column = columnOf(attribute(tag, 'r')) ?? column;
        type = attribute(tag, 't') ?? 'n';
        value = undefined;
      } else if (name === 'rPh') phonetic += 1;
      else if ((name === 'v' || (name === 't' && type === 'inlineStr')) && phonetic === 0) {
        inValue = true;
        value ??= '';
      }
    },
    text: (text) => {
      if (inValue && value !== undefined && value.length < MAX_CELL_CHARS) value += text;
    },
    closetag: (tag) => {
      const name = localName(tag.name);
      if (name === 'v' || name === 't') inValue = false;
      else if (name === 'rPh') phonetic -= 1;
      else if (name === 'c' && cells) {
        if (value !== undefined) {
          // A value past the last column read: a row wider than the bound, however few its cells.
          if (column >= bounds.maxColumns) throw tooWide(bounds.maxColumns);
          while (cells.length < column) cells.push('');
          cells[column] = cellText(type, value, strings).slice(0, MAX_CELL_CHARS);
        }
        column += 1;
      } else if (name === 'row' && cells) {
        if (cells.every((cell) => cell.trim() === '')) {
          blankRows += 1;
          if (blankRows > bounds.maxUnevenRows) throw unevenRows(bounds.maxUnevenRows);
        } else ready.push({ line: rowNumber, cells });
        cells = undefined;
      }
    },
  };
  for await (const _ of streamPart(zip, sheet, { limit: MAX_PART_BYTES, handlers, work })) {
    while (ready.length > 0) yield ready.shift()!;
  }
  while (ready.length > 0) yield ready.shift()!;
}

function cellText(type: string, raw: string, strings: string[]): string {
  switch (type) {
    case 's':
      return strings[Number(raw)] ?? '';
    case 'b':
      return raw.trim() === '1' ? 'TRUE' : 'FALSE';
    case 'n':
      return numberText(raw);
    default:
      // inlineStr, str (a formula's text), e (an error such as #N/A), d (an ISO date).
      return raw;
  }
}
