import type { Knex } from 'knex';
import { normalizeMoroccanPhone } from '../../services/shared';

/** Why a row found no order: no key in it, no order has it, or two or more orders could be the one. */
export type UnmatchedReason = 'no_key' | 'not_found' | 'ambiguous' | 'unreadable';

/** An order a row might be about: the workspace's orders with its phone or its reference. */
interface Candidate {
  id: string;
  client_name: string;
  phone: string;
  external_ref: string | null;
  status: string;
  delivery_status: string | null;
}

/** A row that found no order, with what it says of the customer, to find the order by hand. */
export interface UnmatchedRow {
  line: number;
  reason: UnmatchedReason;
  name: string | null;
  phone: string | null;
  reference: string | null;
  tracking: string | null;
  /** Up to 5 orders of the workspace with the row's phone or reference (the first 200 rows unmatched). */
  candidates: Candidate[];
}

/** Rows given candidates at most, and candidates per row: a report of unknown parcels stays one short page. */
const MAX_ROWS = 200;
const MAX_CANDIDATES = 5;

/** A store's reference as shops type it: `#1001` and `1001` are one. */
export const bareRef = (ref: string) => ref.replace(/^#\s*/, '');

/**
 * Gives the first unmatched rows the orders they might be about, for the shop to pick by hand: the
 * workspace's orders with the row's phone (in any form) or its store reference, newest first. Two
 * queries on indexed columns (phone, reference) for all the rows.
 */
export async function addCandidates(knex: Knex, workspaceId: string, rows: UnmatchedRow[]): Promise<void> {
  const shown = rows.slice(0, MAX_ROWS);
  const phoneOf = (row: UnmatchedRow) => (row.phone ? normalizeMoroccanPhone(row.phone) : null);
  const phones = [...new Set(shown.map(phoneOf).filter((p): p is string => !!p))];
  const refs = [...new Set(shown.map((r) => (r.reference ? bareRef(r.reference) : '')).filter(Boolean))];
  if (phones.length === 0 && refs.length === 0) return;
  const columns = ['id', 'client_name', 'phone', 'external_ref', 'status', 'delivery_status'];
  const [byPhone, byRef] = await Promise.all([
    phones.length === 0
      ? []
      : knex('orders')
          .where({ workspace_id: workspaceId })
          .whereIn('phone', phones)
          .orderBy('created_at', 'desc')
          .limit(MAX_ROWS * MAX_CANDIDATES)
          .select(columns),
    refs.length === 0
      ? []
      : knex('orders')
          .where({ workspace_id: workspaceId })
          .whereRaw("ltrim(external_ref, '# ') = ANY(?::text[])", [refs])
          .orderBy('created_at', 'desc')
          .limit(MAX_ROWS * MAX_CANDIDATES)
          .select(columns),
  ]);
  for (const row of shown) {
    const phone = phoneOf(row);
    const ref = row.reference ? bareRef(row.reference) : null;
    const found = new Map<string, Candidate>();
    for (const order of byRef as Candidate[]) if (ref && order.external_ref && bareRef(order.external_ref) === ref) found.set(order.id, order);
    for (const order of byPhone as Candidate[]) if (phone && order.phone === phone) found.set(order.id, order);
    row.candidates = [...found.values()].slice(0, MAX_CANDIDATES);
  }
}
