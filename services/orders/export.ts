import { stringify } from 'csv-stringify/sync';
import type { Knex } from 'knex';
import { applyFilters, applyPosition, POSITION_AT } from './filters';
import type { OrderFilters, Position } from './filters';
import { SHOP_TIME_ZONE } from '../shared';
import type { Language } from '../shared';
import { amountText } from './service';

const EXPORT_COLUMNS = [
  'id',
  'created_at',
  'client_name',
  'phone',
  'store_name',
  'products_name',
  'address',
  'status',
  'calls',
  'last_outcome',
  'flags',
  'source',
  'external_id',
  'external_ref',
  'total_amount',
  'currency',
  'placed_at',
  'city',
  'note',
  'delivery_status',
  'carrier',
  'tracking_number',
  'carrier_status',
] as const;

/**
 * The header row in the exporter's language (languages.md): English is the API's own names; French and
 * Arabic use names the import reads back (imports.ts COLUMN_NAMES), so an exported file imports as is
 * (the time an order reached us is a column the import leaves aside: "ajoutée le", "تاريخ الإضافة").
 */
const EXPORT_HEADERS: Record<Language, readonly string[]> = {
  en: EXPORT_COLUMNS,
  fr: [
    'id',
    'ajoutée le',
    'nom',
    'téléphone',
    'boutique',
    'produits',
    'adresse',
    'statut',
    'appels',
    'dernier résultat',
    'alertes',
    'source',
    'identifiant boutique',
    'référence',
    'montant',
    'devise',
    'date de commande',
    'ville',
    'note',
    'livraison',
    'transporteur',
    'n° de suivi',
    'mots du transporteur',
  ],
  ar: [
    'المعرف',
    'تاريخ الإضافة',
    'الاسم',
    'الهاتف',
    'المتجر',
    'المنتج',
    'العنوان',
    'الحالة',
    'المكالمات',
    'آخر نتيجة',
    'التنبيهات',
    'المصدر',
    'رقم الطلب في المتجر',
    'المرجع',
    'المبلغ',
    'العملة',
    'تاريخ الطلب',
    'المدينة',
    'ملاحظة',
    'التوصيل',
    'شركة التوصيل',
    'رقم التتبع',
    'كلمات شركة التوصيل',
  ],
};

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

function line(row: ExportRow): string[] {
  return [
    row.id,
    row.created_local,
    row.client_name,
    row.phone,
    row.store_name,
    row.products_name,
    row.address ?? '',
    row.status,
    String(row.calls),
    row.last_outcome ?? '',
    row.flags.join(','),
    row.source,
    row.external_id ?? '',
    row.external_ref ?? '',
    amountText(row.total_amount, row.currency) ?? '',
    row.currency ?? '',
    row.placed_local ?? '',
    row.city ?? '',
    row.note ?? '',
    row.delivery_status ?? '',
    row.delivery_carrier ?? '',
    row.delivery_tracking_number ?? '',
    row.delivery_carrier_status ?? '',
  ].map(defuse);
}

/**
 * The orders of a workspace matching the filters as CSV text, newest first: UTF-8 with a BOM (so
 * Excel reads Arabic and French), `created_at` in Morocco time, each call counted once.
 */
export async function* exportCsv(knex: Knex, workspaceId: string, filters: OrderFilters, language: Language = 'en'): AsyncGenerator<string> {
  // The header goes out with the first rows: the first query has run before anything is sent.
  let header = `\ufeff${stringify([[...EXPORT_HEADERS[language]]], { record_delimiter: 'windows' })}`;
  let position: Position | null = null;
  for (;;) {
    const query = knex
      .from('orders as o')
      .where('o.workspace_id', workspaceId)
      .joinRaw(
        `LEFT JOIN LATERAL (
           SELECT count(*)::int AS calls,
                  (array_agg(c.outcome ORDER BY c.ended_at DESC) FILTER (WHERE c.outcome IS NOT NULL))[1] AS last_outcome
             FROM operations op JOIN calls c ON c.operation_id = op.id
            WHERE op.order_id = o.id AND c.dropped_at IS NULL) k ON true`,
      )
      .select(
        'o.id',
        'o.client_name',
        'o.phone',
        'o.store_name',
        'o.products_name',
        'o.address',
        'o.city',
        'o.note',
        'o.status',
        'k.calls',
        'k.last_outcome',
        'o.flags',
        'o.source',
        'o.external_id',
        'o.external_ref',
        'o.total_amount',
        'o.currency',
        'o.delivery_status',
        'o.delivery_carrier',
        'o.delivery_tracking_number',
        'o.delivery_carrier_status',
        knex.raw("to_char(o.created_at AT TIME ZONE ?, 'YYYY-MM-DD HH24:MI:SS') AS created_local", [SHOP_TIME_ZONE]),
        knex.raw("to_char(o.placed_at AT TIME ZONE ?, 'YYYY-MM-DD HH24:MI:SS') AS placed_local", [SHOP_TIME_ZONE]),
        knex.raw(POSITION_AT),
      );
    applyFilters(knex, query, filters);
    const rows: ExportRow[] = await applyPosition(query, position, 'older').limit(BATCH);
    yield header + stringify(rows.map(line), { record_delimiter: 'windows' });
    header = '';
    if (rows.length < BATCH) return;
    const last = rows[rows.length - 1];
    position = { at: last.position_at, id: last.id };
  }
}
