/**
 * How a spreadsheet's header names our columns, for every import that reads one (orders, carriers'
 * reports): names compared without case, accents, spaces, `_` or `-`, each column known by its
 * English, French and Arabic names.
 */

/** Longer than any name we know: such a header cell is no column of ours, whatever its text. */
const MAX_COLUMN_NAME = 100;
/** Ignored columns named on a result at most (a file of a thousand unknown columns names the first ones). */
const MAX_IGNORED_NAMED = 20;

/** The store's own order number, as shops head the column ("N° commande", "Référence", "رقم الطلب"). */
export const ORDER_REFERENCE_NAMES = [
  'external_ref',
  'externalRef',
  'reference',
  'référence',
  'ref',
  'réf',
  'n° commande',
  'n° de commande',
  'no commande',
  'numero commande',
  'numéro de commande',
  'num commande',
  'order number',
  'order_number',
  'المرجع',
  'رقم الطلب',
  'رقم الطلبية',
] as const;

/** `Téléphone`, `telephone ` and `TELEPHONE` are one name; so are `client_name`, `Client Name` and `clientName`. */
function columnKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\s_-]+/g, '');
}

/** A header read: the cell of each column found, the named cells we do not read, and columns named twice. */
export interface HeaderColumns<K extends string> {
  columns: Partial<Record<K, number>>;
  ignored: string[];
  twice: Array<{ column: K; first: string; second: string }>;
}

/** Reads a header by a table of column names: the first cell naming a column is that column. */
export function headerColumns<K extends string>(header: string[], names: Record<K, readonly string[]>): HeaderColumns<K> {
  const byKey = new Map<string, K>();
  for (const [column, list] of Object.entries(names) as Array<[K, readonly string[]]>) for (const name of list) byKey.set(columnKey(name), column);
  const found: HeaderColumns<K> = { columns: {}, ignored: [], twice: [] };
  header.forEach((name, index) => {
    const column = name.length > MAX_COLUMN_NAME ? undefined : byKey.get(columnKey(name));
    if (!column) {
      if (name.trim() !== '' && found.ignored.length < MAX_IGNORED_NAMED) found.ignored.push(name.trim().slice(0, MAX_COLUMN_NAME));
      return;
    }
    const first = found.columns[column];
    if (first !== undefined) found.twice.push({ column, first: header[first].trim(), second: name.trim() });
    else found.columns[column] = index;
  });
  return found;
}
