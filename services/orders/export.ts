import { stringify } from 'csv-stringify/sync';
import type { Knex } from 'knex';
import { applyFilters, applyPosition, POSITION_AT } from './filters';
import type { OrderFilters, Position } from './filters';
import { SHOP_TIME_ZONE } from '../../services/shared';
import type { Language } from '../../services/shared';
import { amountText } from './model';
import { CSV_COLUMNS } from '../../db/order-fields';
import type { CsvColumn } from '../../db/order-fields';

/** The export's columns, in the file's order (db/order-fields.ts). */
const EXPORT_COLUMNS = CSV_COLUMNS.map((column) => column.header);

/**
 * The header row in the exporter's language (languages.md): English is the API's own names; French and
 * Arabic use names the import reads back (imports.ts COLUMN_NAMES), so an exported file imports as is
 * (the time an order reached us is a column the import leaves aside: "ajoutée le", "تاريخ الإضافة").
 */
const HEADERS: Record<Exclude<Language, 'en'>, Record<CsvColumn, string>> = {
  fr: {
    id: 'id',
    created_at: 'ajoutée le',
    client_name: 'nom',
    phone: 'téléphone',
    store_name: 'boutique',
    products_name: 'produits',
    address: 'adresse',
    status: 'statut',
    calls: 'appels',
    last_outcome: 'dernier résultat',
    flags: 'alertes',
    source: 'source',
    external_id: 'identifiant boutique',
    external_ref: 'référence',
    total_amount: 'montant',
    currency: 'devise',
    placed_at: 'date de commande',
    city: 'ville',
    note: 'note',
    delivery_status: 'livraison',
    carrier: 'transporteur',
    tracking_number: 'n° de suivi',
    carrier_status: 'mots du transporteur',
  },
  ar: {
    id: 'المعرف',
    created_at: 'تاريخ الإضافة',
    client_name: 'الاسم',
    phone: 'الهاتف',
    store_name: 'المتجر',
    products_name: 'المنتج',
    address: 'العنوان',
    status: 'الحالة',
    calls: 'المكالمات',
    last_outcome: 'آخر نتيجة',
    flags: 'التنبيهات',
    source: 'المصدر',
    external_id: 'رقم الطلب في المتجر',
    external_ref: 'المرجع',
    total_amount: 'المبلغ',
    currency: 'العملة',
    placed_at: 'تاريخ الطلب',
    city: 'المدينة',
    note: 'ملاحظة',
    delivery_status: 'التوصيل',
    carrier: 'شركة التوصيل',
    tracking_number: 'رقم التتبع',
    carrier_status: 'كلمات شركة التوصيل',
  },
};

function headerRow(language: Language): string[] {
  return language === 'en' ? EXPORT_COLUMNS : EXPORT_COLUMNS.map((column) => HEADERS[language][column]);
}

/** Rows read per query: the file is written a batch at a time, so memory stays flat. */
const BATCH = 2000;

/**
 * A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, or a tab or carriage return first)
 * is prefixed with `'` (OWASP's advice against CSV injection). The phone `+212…` is one of them.
 */
export function defuse(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

interface ExportRow {
  id: string;
  created_local: string;
  client_name: string;
  phone: string;
  store_name: string;
  products_name: string;
  placed_local: string | null;
  address: string | null;
  city: string | null;
  note: string | null;
  status: string;
  calls: number;
  last_outcome: string | null;
  flags: string[];
  source: string;
  external_id: string | null;
  external_ref: string | null;
  total_amount: number | null;
  currency: string | null;
  delivery_status: string | null;
  delivery_carrier: string | null;
  delivery_tracking_number: string | null;
  delivery_carrier_status: string | null;
  position_at: string;
}

/** Each column's cell (its value as text). */
const CELLS: Record<CsvColumn, (row: ExportRow) => string> = {
  id: (row) => row.id,
  created_at: (row) => row.created_local,
  client_name: (row) => row.client_name,
  phone: (row) => row.phone,
  store_name: (row) => row.store_name,
  products_name: (row) => row.products_name,
  address: (row) => row.address ?? '',
  status: (row) => row.status,
  calls: (row) => String(row.calls),
  last_outcome: (row) => row.last_outcome ?? '',
  flags: (row) => row.flags.join(','),
  source: (row) => row.source,
  external_id: (row) => row.external_id ?? '',
  external_ref: (row) => row.external_ref ?? '',
  total_amount: (row) => amountText(row.total_amount, row.currency) ?? '',
  currency: (row) => row.currency ?? '',
  placed_at: (row) => row.placed_local ?? '',
  city: (row) => row.city ?? '',
  note: (row) => row.note ?? '',
  delivery_status: (row) => row.delivery_status ?? '',
  carrier: (row) => row.delivery_carrier ?? '',
  tracking_number: (row) => row.delivery_tracking_number ?? '',
  carrier_status: (row) => row.delivery_carrier_status ?? '',
};
const CELLS_IN_ORDER = EXPORT_COLUMNS.map((column) => CELLS[column]);

function line(row: ExportRow): string[] {
  return CELLS_IN_ORDER.map((cell) => defuse(cell(row)));
}

/** When an order reached us and when the shop took it: Morocco time, as text, in the file. */
const LOCAL_TIMES: Record<string, string> = { created_at: 'created_local', placed_at: 'placed_local' };

/**
 * The columns the file is read from, each once: an order's columns (its times as Morocco time's
 * text), and the counts of its calls from the lateral join `k` for a field without columns.
 */
function exportSelect(knex: Knex): Array<string | Knex.Raw> {
  const fields = [...new Set(CSV_COLUMNS.map((column) => column.field))];
  return fields.flatMap((field) => {
    const columns = CSV_COLUMNS.find((column) => column.field === field)?.columns ?? [];
    if (columns.length === 0) return [`k.${field}`];
    return columns.map((column) =>
      column in LOCAL_TIMES
        ? knex.raw(`to_char(o.${column} AT TIME ZONE ?, 'YYYY-MM-DD HH24:MI:SS') AS ${LOCAL_TIMES[column]}`, [SHOP_TIME_ZONE])
        : `o.${column}`,
    );
  });
}

/**
 * The orders of a workspace matching the filters as CSV text, newest first: UTF-8 with a BOM (so
 * Excel reads Arabic and French), `created_at` in Morocco time, each call counted once. `phone`
 * (normalised) keeps one customer's orders (services/orders/customers.ts).
 */
export async function* exportCsv(knex: Knex, workspaceId: string, filters: OrderFilters, language: Language = 'en', phone?: string): AsyncGenerator<string> {
  // The header goes out with the first rows: the first query has run before anything is sent.
  let header = `\ufeff${stringify([headerRow(language)], { record_delimiter: 'windows' })}`;
  let position: Position | null = null;
  for (;;) {
    const query = knex
      .from('orders as o')
      .where('o.workspace_id', workspaceId)
      .modify((q) => {
        if (phone) q.where('o.phone', phone);
      })
      .joinRaw(
        `LEFT JOIN LATERAL (
           SELECT count(*)::int AS calls,
                  (array_agg(c.outcome ORDER BY c.ended_at DESC) FILTER (WHERE c.outcome IS NOT NULL))[1] AS last_outcome
             FROM operations op JOIN calls c ON c.operation_id = op.id
            WHERE op.order_id = o.id AND c.dropped_at IS NULL) k ON true`,
      )
      .select(...exportSelect(knex), knex.raw(POSITION_AT));
    applyFilters(knex, query, filters);
    const rows: ExportRow[] = await applyPosition(query, position, 'older').limit(BATCH);
    yield header + stringify(rows.map(line), { record_delimiter: 'windows' });
    header = '';
    if (rows.length < BATCH) return;
    const last = rows[rows.length - 1];
    position = { at: last.position_at, id: last.id };
  }
}
