import { stringify } from 'csv-stringify/sync';

/**
 * The rows of a report whose status word nobody knew, kept so that, once the shop has said what the
 * words mean (on the import's result page), they can be applied without uploading the file again.
 * The page carries them back in the form (no copy of the file is kept here): at most
 * MAX_KEPT rows and 50 kB of them as the form sends them (URL-encoded: an Arabic letter is 6 bytes),
 * within the form's 100 kB body.
 */
export interface UnknownRow {
  line: number;
  word: string;
  tracking: string;
  ref: string;
  phone: string;
  name: string;
  carrier: string;
  date: string;
}

const MAX_KEPT = 100;
const MAX_SENT = 50_000;
const FIELDS = ['word', 'tracking', 'ref', 'phone', 'name', 'carrier', 'date'] as const;

/** Keeps `row` when there is room for it; false when the rows kept are already as many as a form can carry. */
export function keepUnknown(kept: UnknownRow[], row: UnknownRow, budget: { text: number }): boolean {
  const size = encodeURIComponent(JSON.stringify(row)).length + 5;
  if (kept.length >= MAX_KEPT || budget.text + size > MAX_SENT) return false;
  budget.text += size;
  kept.push(row);
  return true;
}

/** The rows as a form sends them back (one JSON text per row); rows that are not one of ours are dropped. */
export function unknownRowsFrom(values: unknown): UnknownRow[] {
  const texts = (Array.isArray(values) ? values : [values]).filter((v): v is string => typeof v === 'string').slice(0, MAX_KEPT);
  const rows: UnknownRow[] = [];
  for (const text of texts) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const row = value as Record<string, unknown>;
    if (!Number.isInteger(row.line) || FIELDS.some((f) => typeof row[f] !== 'string' || (row[f] as string).length > 200)) continue;
    rows.push({
      line: row.line as number,
      word: row.word as string,
      tracking: row.tracking as string,
      ref: row.ref as string,
      phone: row.phone as string,
      name: row.name as string,
      carrier: row.carrier as string,
      date: row.date as string,
    });
  }
  return rows;
}

/** The rows as a small report of our own column names, read by the same import (and its bounds). */
export function rowsAsReport(rows: UnknownRow[]): Buffer {
  const header = ['tracking', 'ref', 'phone', 'nom', 'statut', 'transporteur', 'date'];
  return Buffer.from(stringify([header, ...rows.map((r) => [r.tracking, r.ref, r.phone, r.name, r.word, r.carrier, r.date])]));
}
