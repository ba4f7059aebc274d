import type { Knex } from 'knex';
import { ValidationError, isUuid, msg, SHOP_TIME_ZONE } from '../../services/shared';
import type { FieldErrors } from '../../services/shared';
import { CONFIRMING_OUTCOMES, sqlList } from '../calls/outcomes';
import { DELIVERY_STATUSES } from './delivery';
import { ORDER_FLAGS } from './flags';

export const MAX_LIMIT = 500;
export const DEFAULT_LIMIT = 50;
/** The query parameters that switch a listing from the contract's whole list to pages. */
const LISTING_PARAMETERS = ['limit', 'cursor', 'status', 'flag', 'delivery', 'q', 'from', 'to', 'assignee', 'pay'] as const;

/**
 * What the handing to a carrier says of an order (docs/carriers.md), read from its parcels:
 * `unshipped` confirmed without a delivery or a parcel under way; `ship_failed` its carrier refused
 * its last parcel; `needs_city` its parcel waits for a person to choose the carrier's city.
 */
const SHIPPING_FILTERS = ['unshipped', 'ship_failed', 'needs_city'] as const;

/** `delivery=`: a delivery status, `none` for orders with no delivery yet, or a shipping state. */
export const DELIVERY_FILTERS = [...DELIVERY_STATUSES, 'none', ...SHIPPING_FILTERS] as const;

/** A parcel of the order (aliased `o`) in one of these states. */
const parcelIn = (states: string) => `EXISTS (SELECT 1 FROM parcels p WHERE p.order_id = o.id AND p.state IN (${states}))`;
const LIVE_PARCEL = parcelIn("'queued', 'sending', 'sent', 'uncertain'");
const SHIPPING_CONDITIONS: Record<(typeof SHIPPING_FILTERS)[number], string> = {
  unshipped: `o.status = 'confirmed' AND o.delivery_status IS NULL AND NOT ${LIVE_PARCEL}`,
  ship_failed: `${parcelIn("'failed'")} AND NOT ${LIVE_PARCEL} AND o.delivery_status IS NULL`,
  needs_city: parcelIn("'needs_city'"),
};

/** Where a page starts: after (older than) or before (newer than) an order, by (created_at, id). */
export interface Position {
  at: string;
  id: string;
}

export interface OrderFilters {
  statuses: string[];
  /** Orders with any of these flags. */
  flags: string[];
  /** Orders whose delivery is in any of these statuses (`none`: no delivery yet); absent or empty: any. */
  deliveries?: string[];
  q: string | null;
  from: string | null;
  to: string | null;
  /** `mine` (the caller: see forCaller), `none` (the pool) or a member's id; absent: anyone's. */
  assignee?: string | null;
  /** The orders behind a count of the pay view (services/team): a member's confirmed or delivered orders over Morocco days. */
  pay?: PayCount | null;
}

/** `pay=confirmed|delivered&member=<id>&period=YYYY-MM-DD..YYYY-MM-DD`. */
interface PayCount {
  kind: 'confirmed' | 'delivered';
  member: string;
  from: string;
  to: string;
}

/** The filters with `assignee=mine` made the caller's id. */
export function forCaller(filters: OrderFilters, userId: string): OrderFilters {
  return filters.assignee === 'mine' ? { ...filters, assignee: userId } : filters;
}

/**
 * The member whose call confirmed the order: its last call that ended with one of the
 * CONFIRMING_OUTCOMES, as the delivery's confirmer is recorded (services/deliveries). `k` is that call,
 * for orders aliased `o`; the pay view counts by the same rule.
 */
const CONFIRMING_CALL_SQL = `(SELECT k.made_by, k.kind, k.ended_at FROM operations op JOIN calls k ON k.operation_id = op.id
    WHERE op.order_id = o.id AND k.outcome IN (${sqlList(CONFIRMING_OUTCOMES)}) AND k.dropped_at IS NULL
    ORDER BY k.ended_at DESC LIMIT 1)`;

/** The start of a Morocco day and of the day after another, as SQL of two `?` (the days). */
const DAYS_SQL = (column: string) =>
  `${column} >= (?::date::timestamp AT TIME ZONE '${SHOP_TIME_ZONE}') AND ${column} < ((?::date + 1)::timestamp AT TIME ZONE '${SHOP_TIME_ZONE}')`;

/** The pay view's counts as conditions on orders aliased `o`: confirmed by the member within the days, or delivered within them. */
function payCountCondition(knex: Knex, pay: PayCount): Knex.Raw {
  return pay.kind === 'confirmed'
    ? knex.raw(`EXISTS (SELECT 1 FROM ${CONFIRMING_CALL_SQL} c WHERE c.kind = 'human' AND c.made_by = ? AND ${DAYS_SQL('c.ended_at')})`, [
        pay.member,
        pay.from,
        pay.to,
      ])
    : knex.raw(`o.delivery_status = 'delivered' AND o.delivery_confirmer_kind = 'human' AND o.delivery_confirmer_id = ? AND ${DAYS_SQL('o.delivery_at')}`, [
        pay.member,
        pay.from,
        pay.to,
      ]);
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function readPayCount(query: Query, fields: FieldErrors): PayCount | null {
  const kind = single(query, 'pay', fields);
  if (kind === undefined || kind === '') return null;
  const member = single(query, 'member', fields) ?? '';
  const [from = '', to = ''] = (single(query, 'period', fields) ?? '').split('..');
  if (kind !== 'confirmed' && kind !== 'delivered') fields.pay = msg('unknownSeveral', { label: 'pay', allowed: 'confirmed, delivered' });
  if (!isUuid(member)) fields.member = msg('notValid', { label: 'member' });
  if (!DAY.test(from) || !DAY.test(to) || !isRealDateTime(from) || !isRealDateTime(to)) fields.period = msg('notValid', { label: 'period' });
  return { kind: kind as PayCount['kind'], member, from, to };
}

function readAssignee(query: Query, fields: FieldErrors): string | null {
  const value = single(query, 'assignee', fields)?.trim();
  if (value === undefined || value === '' || value === 'all') return null;
  if (value !== 'mine' && value !== 'none' && !isUuid(value)) fields.assignee = msg('notValid', { label: 'assignee' });
  return value;
}

export interface ListingQuery extends OrderFilters {
  limit: number;
  cursor: Position | null;
}

type Query = Record<string, unknown>;

/** A parameter given once; repeated parameters are refused rather than silently picking one. */
function single(query: Query, name: string, fields: FieldErrors): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    fields[name] = msg('giveOnce', { label: name });
    return undefined;
  }
  if (value.includes('\u0000')) {
    fields[name] = msg('nulNamed', { label: name });
    return undefined;
  }
  return value;
}

const CURSOR_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

/** A cursor this service gave out, or null: anything else (edited, foreign, garbage) is not read. */
export function decodeCursor(cursor: string): Position | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [at, id] = value;
    if (typeof at !== 'string' || !CURSOR_AT.test(at) || !isRealDateTime(at) || !isUuid(id)) return null;
    return { at, id };
  } catch {
    return null;
  }
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Real offsets run from -12:00 to +14:00; Postgres fails (a 500) on one beyond ±15:59, such as +99:99. */
function isRealOffset(offset: string | undefined): boolean {
  if (offset === undefined || offset === 'Z') return true;
  const digits = offset.slice(1).replace(':', '');
  return Number(digits.slice(0, 2)) <= 14 && Number(digits.slice(2)) <= 59;
}

/** A calendar date (and time) that exists: 2026-02-30, 24:00 and +99:99 are refused before Postgres sees them. */
function isRealDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m || !isRealOffset(m[7])) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  if (year < 1970 || year > 9999) return false;
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second
  );
}

/** `2026-11-01` and `2026-11-01T08:00` are Morocco time; a value with `Z` or an offset is that instant. */
function dateBound(value: string): { text: string; local: boolean } | null {
  if (!isRealDateTime(value)) return null;
  return { text: value, local: !/(Z|[+-]\d{2}:?\d{2})$/.test(value) || /^\d{4}-\d{2}-\d{2}$/.test(value) };
}

function readDate(query: Query, name: 'from' | 'to', fields: FieldErrors): string | null {
  const value = single(query, name, fields);
  if (value === undefined || value.trim() === '') return null;
  if (!dateBound(value.trim())) {
    fields[name] = msg('isoDate', { label: name });
    return null;
  }
  return value.trim();
}

/**
 * A parameter naming one or several of `allowed` (comma-separated, or the parameter repeated);
 * anything else is named in `fields`.
 */
function oneOrSeveral(query: Query, name: string, allowed: readonly string[], fields: FieldErrors): string[] {
  const given = query[name];
  const parts = (Array.isArray(given) ? given : given === undefined ? [] : [given]).flatMap((part) => (typeof part === 'string' ? part.split(',') : [null]));
  const wanted = parts.map((part) => (typeof part === 'string' ? part.trim() : part)).filter((part) => part !== '');
  const unknown = wanted.filter((part) => typeof part !== 'string' || !allowed.includes(part));
  if (unknown.length > 0) fields[name] = msg('unknownSeveral', { label: name, allowed: allowed.join(', ') });
  return [...new Set(wanted as string[])];
}

/** Reads the filters shared by the listing and the export (`status`, `flag`, `delivery`, `q`, `from`, `to`). */
export function readFilters(query: Query, statuses: readonly string[], fields: FieldErrors = {}): OrderFilters {
  const wantedStatuses = oneOrSeveral(query, 'status', statuses, fields);
  const flags = oneOrSeveral(query, 'flag', ORDER_FLAGS, fields);
  const deliveries = oneOrSeveral(query, 'delivery', DELIVERY_FILTERS, fields);
  const q = single(query, 'q', fields)?.trim() ?? '';
  if (q.length > 200) fields.q = msg('tooLong', { label: 'q', max: 200 });
  const filters = {
    statuses: wantedStatuses,
    flags,
    deliveries,
    q: q === '' ? null : q,
    from: readDate(query, 'from', fields),
    to: readDate(query, 'to', fields),
    assignee: readAssignee(query, fields),
    pay: readPayCount(query, fields),
  };
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  return filters;
}

/** Reads a paged listing's parameters; every bad one is named in one 400 VALIDATION_ERROR. */
export function readListingQuery(query: Query, statuses: readonly string[]): ListingQuery {
  const fields: FieldErrors = {};
  const limitText = single(query, 'limit', fields);
  let limit = DEFAULT_LIMIT;
  if (limitText !== undefined) {
    if (!/^\d{1,4}$/.test(limitText.trim()) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT) {
      fields.limit = msg('wholeNumber', { label: 'limit', min: 1, max: MAX_LIMIT });
    } else {
      limit = Number(limitText);
    }
  }
  const cursorText = single(query, 'cursor', fields);
  let cursor: Position | null = null;
  if (cursorText !== undefined && cursorText !== '') {
    cursor = decodeCursor(cursorText);
    if (!cursor) fields.cursor = msg('cursorUnknown');
  }
  return { ...readFilters(query, statuses, fields), limit, cursor };
}

/** True when the query asks for pages (any listing parameter is present). */
export function asksForPages(query: Query): boolean {
  return LISTING_PARAMETERS.some((name) => query[name] !== undefined);
}

/** `%`, `_` and `\` in what a person typed are matched as themselves. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The national digits a search names when it looks like a phone number (`0612`, `+212 6 12`,
 * `00212612…`, `612345678`), or null when it is not phone-like.
 */
export function phoneDigits(q: string): string | null {
  if (!/^[\d\s+().\-/]+$/.test(q)) return null;
  let digits = q.replace(/\D/g, '');
  if (digits.startsWith('00212')) digits = digits.slice(5);
  else if (q.trim().startsWith('+212') || (digits.startsWith('212') && digits.length >= 12)) digits = digits.slice(3);
  else if (digits.startsWith('0')) digits = digits.slice(1);
  return digits.length >= 2 ? digits : null;
}

function instant(knex: Knex, value: string): Knex.Raw {
  const bound = dateBound(value)!;
  return bound.local ? knex.raw('(?::timestamp AT TIME ZONE ?)', [bound.text, SHOP_TIME_ZONE]) : knex.raw('?::timestamptz', [bound.text]);
}

/** Applies the filters to a query over `orders as o` already scoped to one workspace. */
export function applyFilters(knex: Knex, query: Knex.QueryBuilder, filters: OrderFilters): Knex.QueryBuilder {
  applyBounds(knex, query, filters);
  if (filters.q) applySearch(query, filters.q);
  return query;
}

/** Status, flags and dates: what narrows a listing without the text search. */
export function applyBounds(knex: Knex, query: Knex.QueryBuilder, filters: OrderFilters): Knex.QueryBuilder {
  for (const condition of boundConditions(knex, filters)) query.whereRaw(condition);
  return query;
}

/** applyBounds's conditions on orders aliased `o`, each one a piece of SQL (a count selects them as a column). */
export function boundConditions(knex: Knex, filters: OrderFilters): Knex.Raw[] {
  const conditions: Knex.Raw[] = [];
  const { statuses } = filters;
  if (statuses.length === 1) conditions.push(knex.raw('o.status = ?', [statuses[0]]));
  else if (statuses.length > 1) conditions.push(knex.raw(`o.status IN (${statuses.map(() => '?').join(', ')})`, statuses));
  // `flags <> '{}'` as the partial index orders_flagged_newest_idx states it: the planner sees the
  // index applies, and walks the workspace's flagged orders alone.
  if (filters.flags.length > 0) conditions.push(knex.raw("o.flags <> '{}' AND o.flags && ?::text[]", [filters.flags]));
  // A delivery status, or `none` for orders without a delivery yet.
  const deliveries = filters.deliveries ?? [];
  if (deliveries.length > 0) {
    const delivered = deliveries.filter((d) => d !== 'none' && !(d in SHIPPING_CONDITIONS));
    const shipping = deliveries.filter((d): d is keyof typeof SHIPPING_CONDITIONS => d in SHIPPING_CONDITIONS);
    const either = [
      ...(delivered.length > 0 ? [knex.raw(`o.delivery_status IN (${delivered.map(() => '?').join(', ')})`, delivered)] : []),
      ...(deliveries.includes('none') ? [knex.raw('o.delivery_status IS NULL')] : []),
      ...shipping.map((state) => knex.raw(`(${SHIPPING_CONDITIONS[state]})`)),
    ];
    conditions.push(knex.raw(`(${either.map(() => '?').join(' OR ')})`, either));
  }
  if (filters.assignee === 'none') conditions.push(knex.raw('o.assigned_to IS NULL'));
  // `mine` left unresolved (no caller): nobody's.
  else if (filters.assignee === 'mine') conditions.push(knex.raw('false'));
  else if (filters.assignee) conditions.push(knex.raw('o.assigned_to = ?', [filters.assignee]));
  if (filters.pay) conditions.push(payCountCondition(knex, filters.pay));
  if (filters.from) conditions.push(knex.raw('o.created_at >= ?', [instant(knex, filters.from)]));
  if (filters.to) conditions.push(knex.raw('o.created_at < ?', [instant(knex, filters.to)]));
  return conditions;
}

/**
 * A store's reference is typed with or without its `#` ("#1001", "1001"), and stored either way:
 * the search leaves the `#` out and finds both.
 */
export function withoutHash(q: string): string {
  const bare = q.trim().replace(/^#\s*/, '');
  return bare === '' ? q : bare;
}

/**
 * The text search, on the order's stored unaccented lower-case text (see the orders_search
 * migration). A phone-like search is matched by its digits alone: the text holds the phone's
 * national digits, and digits typed in a name, store or product are found the same way.
 */
export function applySearch(query: Knex.QueryBuilder, typed: string): Knex.QueryBuilder {
  const { sql, bindings } = searchCondition(typed);
  return query.whereRaw(sql, bindings);
}

/** applySearch's condition on orders aliased `o`, as SQL and its bindings (a count selects it as a column). */
export function searchCondition(typed: string): { sql: string; bindings: string[] } {
  const q = withoutHash(typed);
  const digits = phoneDigits(q);
  if (digits) return { sql: 'o.search_text LIKE ?', bindings: [`%${digits}%`] };
  return { sql: "o.search_text LIKE '%' || search_pattern_text(?) || '%'", bindings: [likeEscape(q)] };
}

/** A run of three characters other than ASCII spaces and punctuation: a search with one has index keys. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class names ASCII ranges by code (controls, spaces, punctuation) on purpose.
const KEYED_WORD = /[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]{3}/;

/**
 * Orders whose search index keys (see the orders_search_keys migration) include every key of the
 * search: a superset of its matches, to be narrowed by applySearch. The keys carry the workspace,
 * but a hash collision can bring in another workspace's order, so the caller scopes the rows to
 * the workspace as every orders query does. Null when the search has no keys (no run of three
 * word characters). `commonKeys`: keys left out when the search has a rarer one (see
 * search_selective_keys).
 */
export function searchCandidates(knex: Knex, workspaceId: string, typed: string, commonKeys: readonly number[] = []): Knex.QueryBuilder | null {
  const q = withoutHash(typed);
  const text = phoneDigits(q) ?? q;
  if (!KEYED_WORD.test(text)) return null;
  return knex
    .from('orders as o')
    .whereRaw('order_search_keys(o.workspace_id, o.search_text) @> search_selective_keys(search_pattern_keys(?::uuid, search_pattern_text(?)), ?::int[])', [
      workspaceId,
      text,
      `{${commonKeys.join(',')}}`,
    ]);
}

/** The column a page's position is read from: created_at to the microsecond, as text in UTC. */
export const POSITION_AT = 'to_char(o.created_at AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\') AS position_at';

/**
 * Rows of `alias` (orders, or rows carrying their created_at and id) after (older than) or before
 * (newer than) a position, as SQL and its bindings.
 */
export function positionCondition(alias: string, position: Position, direction: 'older' | 'newer'): { sql: string; bindings: string[] } {
  return { sql: `(${alias}.created_at, ${alias}.id) ${direction === 'older' ? '<' : '>'} (?::timestamptz, ?::uuid)`, bindings: [position.at, position.id] };
}

/** Orders after (older than) or before (newer than) a position; newest first either way once read. */
export function applyPosition(query: Knex.QueryBuilder, position: Position | null, direction: 'older' | 'newer'): Knex.QueryBuilder {
  const order = direction === 'older' ? 'desc' : 'asc';
  if (position) {
    const { sql, bindings } = positionCondition('o', position, direction);
    query.whereRaw(sql, bindings);
  }
  return query.orderBy([
    { column: 'o.created_at', order },
    { column: 'o.id', order },
  ]);
}
