import zlib from 'node:zlib';

/** One file of a zip: its name, its bytes, and the size its entry declares unpacked (a lie, for a zip bomb that hides). */
interface ZipPart {
  name: string;
  data: Buffer;
  declaredSize?: number;
  /** Already deflated (a bomb made a chunk at a time): `data` is then the packed bytes. */
  packed?: { size: number; crc: number };
}

/** A zip (deflated entries, a central directory) written by hand, so a test controls every byte of it. */
function zip(parts: ZipPart[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const name = Buffer.from(part.name, 'utf8');
    const packed = part.packed ? part.data : zlib.deflateRawSync(part.data, { level: 9 });
    const crc = part.packed?.crc ?? zlib.crc32(part.data);
    const size = part.declaredSize ?? part.packed?.size ?? part.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A cell: text goes to the shared strings, a number is written as a number (an Excel date is a serial number). */
type Cell = string | number | null;

/**
 * A minimal XLSX workbook, as Excel writes one: the package's relationships, the workbook and its
 * relationships, shared strings and the first sheet; `sheetXml` replaces the sheet's XML (a million
 * empty rows, a zip bomb), `declaredSize` what its entry declares.
 */
export function xlsx(
  rows: Cell[][],
  options: { sheetXml?: Buffer; declaredSize?: number; packedSheet?: { data: Buffer; size: number; crc: number } } = {},
): Buffer {
  const strings: string[] = [];
  const cell = (value: Cell, column: number, row: number) => {
    const ref = `${String.fromCharCode(65 + column)}${row}`;
    if (value === null) return '';
    if (typeof value === 'number') return `<c r="${ref}"><v>${value}</v></c>`;
    strings.push(value);
    return `<c r="${ref}" t="s"><v>${strings.length - 1}</v></c>`;
  };
  const sheetRows = rows.map((cells, i) => `<row r="${i + 1}">${cells.map((v, c) => cell(v, c, i + 1)).join('')}</row>`).join('');
  const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const sheet = options.sheetXml ?? Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><worksheet ${ns}><sheetData>${sheetRows}</sheetData></worksheet>`);
  const other = Buffer.from(
    `<?xml version="1.0"?><worksheet ${ns}><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>second sheet</t></is></c></row></sheetData></worksheet>`,
  );
  const parts: ZipPart[] = [
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>') },
    {
      name: '_rels/.rels',
      data: Buffer.from(
        `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
      ),
    },
    {
      name: 'xl/workbook.xml',
      data: Buffer.from(
        `<?xml version="1.0"?><workbook ${ns} xmlns:r="${rel}"><sheets><sheet name="Commandes" sheetId="1" r:id="rId2"/><sheet name="Autre" sheetId="2" r:id="rId1"/></sheets></workbook>`,
      ),
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: Buffer.from(
        `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${rel}/worksheet" Target="worksheets/sheet2.xml"/><Relationship Id="rId3" Type="${rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
      ),
    },
    { name: 'xl/worksheets/sheet1.xml', data: other },
    options.packedSheet
      ? { name: 'xl/worksheets/sheet2.xml', data: options.packedSheet.data, packed: options.packedSheet, declaredSize: options.declaredSize }
      : { name: 'xl/worksheets/sheet2.xml', data: sheet, declaredSize: options.declaredSize },
    {
      name: 'xl/sharedStrings.xml',
      data: Buffer.from(
        `<?xml version="1.0"?><sst ${ns} count="${strings.length}">${strings.map((s) => `<si><t xml:space="preserve">${escapeXml(s)}</t></si>`).join('')}</sst>`,
      ),
    },
  ];
  return zip(parts);
}

/** A part already deflated: its packed bytes, and the size and CRC of what they unpack to. */
type Packed = { data: Buffer; size: number; crc: number };

/** Pieces of a part deflated as they come: a part of hundreds of MB never exists whole in memory. */
async function deflated(pieces: Iterable<Buffer>): Promise<Packed> {
  const deflater = zlib.createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflater.on('data', (b: Buffer) => out.push(b));
  const done = new Promise((resolve) => deflater.on('end', resolve));
  let crc = 0;
  let size = 0;
  for (const piece of pieces) {
    crc = zlib.crc32(piece, crc);
    size += piece.length;
    if (!deflater.write(piece)) await new Promise((resolve) => deflater.once('drain', resolve));
  }
  deflater.end();
  await done;
  return { data: Buffer.concat(out), size, crc };
}

/**
 * A sheet's XML of `size` bytes (a header row, then spaces) deflated a megabyte at a time: a zip
 * bomb of a few hundred kB that never exists whole in memory.
 */
export function deflatedBomb(size: number): Promise<Packed> {
  const names = ['nom', 'telephone', 'boutique', 'produit'].map((n) => `<c t="inlineStr"><is><t>${n}</t></is></c>`).join('');
  const head = Buffer.from(`<?xml version="1.0"?><worksheet><sheetData><row r="1">${names}</row><row r="2"><c t="inlineStr"><is><t>`);
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  function* pieces() {
    yield head;
    for (let written = head.length; written < size; written += chunk.length) yield chunk.subarray(0, Math.min(chunk.length, size - written));
  }
  return deflated(pieces());
}

/** `head`, then `unit` `times` over, then `tail`, deflated about a megabyte at a time (four million cells in 117 kB). */
export function deflatedRepeat(head: string, unit: string, times: number, tail: string): Promise<Packed> {
  const perPiece = Math.max(1, Math.floor((1024 * 1024) / Buffer.byteLength(unit)));
  function* pieces() {
    yield Buffer.from(head);
    for (let done = 0; done < times; done += perPiece) yield Buffer.from(unit.repeat(Math.min(perPiece, times - done)));
    yield Buffer.from(tail);
  }
  return deflated(pieces());
}
