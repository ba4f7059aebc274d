import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import {
  applyBounds,
  applyPosition,
  applySearch,
  boundConditions,
  phoneDigits,
  positionCondition,
  searchCandidates,
  searchCondition,
  withoutHash,
} from './filters';
import type { OrderFilters, Position } from './filters';

/**
 * How far each way of a search reads (see OrderSearch). The defaults keep a search within a few
 * thousand rows at 100,000 orders; tests set small ones to reach every way with a few orders.
 */
export interface SearchLimits {
  /** The newest orders a one-word search looks through before it asks the search index. */
  probe: number;
  /** The index candidates a page sorts at most; with more, the page walks the newest orders. */
  candidates: number;
  /** The index candidates a count reads at most; with more, it counts along the newest orders. */
  countCandidates: number;
  /** The orders a search key names, by the index's statistics, from which it is left out beside a rarer one. */
  commonKey: number;
}

export const SEARCH_LIMITS: SearchLimits = { probe: 1000, candidates: 2000, countCandidates: 20_000, commonKey: 5000 };

/** How often the common keys are read again from the statistics (which ANALYZE renews). */
const COMMON_KEYS_REFRESH_MS = 10 * 60_000;

/**
 * The search index's keys that name at least `limit` orders, by the statistics Postgres keeps of
 * orders_search_keys_idx (its most common elements, each with its share of the orders): a street
 * every order of a big shop is on, a city of one order in ten. Read before the first search, then
 * again every ten minutes in the background; where there are no statistics, none.
 * Only the work of a search depends on them, never its answer (search_selective_keys).
 */
class CommonKeys {
  private keys: readonly number[] = [];
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly knex: Knex,
    private readonly limit: number,
  ) {}

  /** The keys as last read: read first if never read, and again in the background when old. */
  async current(): Promise<readonly number[]> {
    if (this.readAt === Number.NEGATIVE_INFINITY) await this.refresh();
    else if (!this.reading && performance.now() - this.readAt > COMMON_KEYS_REFRESH_MS) void this.refresh();
    return this.keys;
  }

  /** Reads them now (once at a time); a failed reading keeps the keys it had. */
  refresh(): Promise<void> {
    this.reading ??= this.read()
      .then((keys) => {
        this.keys = keys;
      })
      .catch(() => undefined)
      .finally(() => {
        this.readAt = performance.now();
        this.reading = null;
      });
    return this.reading;
  }

  private async read(): Promise<number[]> {
    const { rows } = await this.knex.raw(
      `SELECT s.most_common_elems::text AS keys, s.most_common_elem_freqs AS shares, c.reltuples
         FROM pg_stats s JOIN pg_class c ON c.oid = to_regclass(quote_ident(s.schemaname) || '.orders')
        WHERE s.schemaname = current_schema() AND s.tablename = 'orders_search_keys_idx' AND s.most_common_elems IS NOT NULL`,
    );
    const row = rows[0] as { keys: string; shares: number[]; reltuples: number } | undefined;
    if (!row) return [];
    const keys = row.keys.replace(/[{}]/g, '').split(',').map(Number);
    return keys.filter((_, i) => row.shares[i] * row.reltuples >= this.limit);
  }
}

export interface SearchPage {
  limit: number;
  position: Position | null;
  direction: 'older' | 'newer';
}

/** Phone-like digits (three or more), or two words of three letters or more: rarely common. */
function looksSelective(typed: string): boolean {
  const q = withoutHash(typed);
  const digits = phoneDigits(q);
  if (digits) return digits.length >= 3;
  return q.split(/\s+/).filter((word) => word.length >= 3).length >= 2;
}

/**
 * A search's page and count, each by the cheapest of three ways that give the same rows: Postgres
 * cannot tell how common a word is, and a search index read in full costs what the word's orders
 * number (every order of a big shop for a city or a street).
 * - The probe: the newest `probe` orders, filtered. Enough when it finds a page or reads the
 *   whole workspace (a small shop); tried first by a single word, which is often common.
 * - The index: at most `candidates` orders whose search keys hold the search's, sorted. Enough
 *   when there are no more candidates than that.
 * - The walk: the newest orders, filtered, until a page is full. Taken when the candidates
 *   overflow, so the matches are frequent, and for a search too short to have keys.
 * Each way reads the orders from the page's position in the page's order, so paging and the
 * position counts see the same rows whichever way answers.
 */
export class OrderSearch {
  /** Remembered counts (see count), the least recently used forgotten first. */
  private readonly counts = new LRUCache<string, number>({ max: 2000 });
  /** Remembered counts by status (see countByStatus), the least recently used forgotten first. */
  private readonly statusCounts = new LRUCache<string, ReadonlyMap<string, number>>({ max: 2000 });
  /** Keys left out of a search beside rarer ones (see CommonKeys). */
  private readonly commonKeys: CommonKeys;

  constructor(
    private readonly knex: Knex,
    /** Selects a page's columns from orders aliased `o`. */
    private readonly columns: (query: Knex.QueryBuilder) => Knex.QueryBuilder,
    private readonly limits: SearchLimits = SEARCH_LIMITS,
  ) {
    this.commonKeys = new CommonKeys(knex, limits.commonKey);
  }

  /** Up to `limit + 1` matching rows in the page's order (newest first, or oldest first reading newer). */
  async rows<Row>(workspaceId: string, filters: OrderFilters, page: SearchPage): Promise<Row[]> {
    const q = filters.q!;
    if (searchCandidates(this.knex, workspaceId, q)) {
      if (!looksSelective(q)) {
        const probed = await this.probe<Row>(workspaceId, filters, page);
        if (probed) return probed;
      }
      const indexed = await this.indexed<Row>(workspaceId, filters, page);
      if (indexed) return indexed;
    }
    return this.walk(workspaceId, filters, page);
  }

  /** The matches among the next `probe` orders; null when that is neither a page nor all of them. */
  private async probe<Row>(workspaceId: string, filters: OrderFilters, page: SearchPage): Promise<Row[] | null> {
    const next = () => applyPosition(this.scope(workspaceId, filters), page.position, page.direction).limit(this.limits.probe);
    const matches = this.columns(applySearch(this.knex.from(next().select('o.*').as('o')), filters.q!));
    applyPosition(matches, null, page.direction).limit(page.limit + 1);
    const read = this.knex.from(next().select(this.knex.raw('1')).as('r')).select(this.knex.raw('count(*)::int AS read'));
    const { count, found } = await this.withCount<Row>(read, matches, page.direction);
    return found.length > page.limit || count < this.limits.probe ? found : null;
  }

  /** The matches among the search index's candidates; null when they are more than `candidates`. */
  private async indexed<Row>(workspaceId: string, filters: OrderFilters, page: SearchPage): Promise<Row[] | null> {
    // Materialized, from the search keys alone: beside the workspace or a status, the planner would
    // AND a 100,000-row index scan to a key that names 50 orders. Of each candidate only where it
    // is and its position, read from the front of the row; the rest of the row (its text to match,
    // its filters, the page's columns) is read again by where it is, newest first, only until the
    // page is full: 51 of an address's 660 candidates, not all 660.
    const keyed = searchCandidates(this.knex, workspaceId, filters.q!, await this.commonKeys.current())!.select(
      this.knex.raw('o.ctid AS tid'),
      'o.id',
      'o.created_at',
    );
    const candidates = this.first(keyed, this.limits.candidates + 1);
    const order = page.direction === 'older' ? 'desc' : 'asc';
    const inOrder = [
      { column: 'k.created_at', order },
      { column: 'k.id', order },
    ];
    const ordered = this.knex.from('candidates as k').orderBy(inOrder).select('k.tid', 'k.created_at', 'k.id');
    if (page.position) {
      const { sql, bindings } = positionCondition('k', page.position, page.direction);
      ordered.whereRaw(sql, bindings);
    }
    const matches = this.columns(this.knex.from(ordered.as('k')).join('orders as o', 'o.ctid', 'k.tid'))
      .whereRaw(this.matching(workspaceId, filters))
      .orderBy(inOrder)
      .limit(page.limit + 1);
    const read = this.knex.from('candidates').select(this.knex.raw('count(*)::int AS read'));
    const { count, found: rows } = await this.withCount<Row>(read, matches, page.direction, candidates);
    return count > this.limits.candidates ? null : rows;
  }

  /** Whether an order `o` matches the workspace, the search, the filters' bounds and `more`. */
  private matching(workspaceId: string, filters: OrderFilters, more: Knex.Raw[] = []): Knex.Raw {
    const search = searchCondition(filters.q!);
    const conditions = [
      this.knex.raw('o.workspace_id = ?', [workspaceId]),
      this.knex.raw(search.sql, search.bindings),
      ...boundConditions(this.knex, filters),
      ...more,
    ];
    return this.knex.raw(`(${conditions.map(() => '?').join(' AND ')})`, conditions);
  }

  /** matching as a column `hit`: selected beside the search keys, it leaves their plan alone. */
  private hit(workspaceId: string, filters: OrderFilters, more: Knex.Raw[]): Knex.Raw {
    return this.knex.raw('? AS hit', [this.matching(workspaceId, filters, more)]);
  }

  /** The newest orders from the position, filtered, until a page is full. */
  private walk<Row>(workspaceId: string, filters: OrderFilters, page: SearchPage): Promise<Row[]> {
    const matches = this.columns(applySearch(this.scope(workspaceId, filters), filters.q!));
    return applyPosition(matches, page.position, page.direction).limit(page.limit + 1);
  }

  /**
   * How many orders match, newer than `newerThan` when given, up to `cap + 1`: through the index's
   * candidates when they are at most `countCandidates` (reading each one's text once, keeping only
   * whether it matches), else along the newest orders, which then match often.
   *
   * A search without status, flag, delivery or date filters is remembered under the workspace's
   * search version (the order_search_versions migration), which grows when an order comes, goes or
   * has its search text changed: paging through a search or coming back to it counts again only
   * after such a change. Exact either way; the others depend on statuses and flags, which change
   * all day, and are counted each time.
   */
  async count(workspaceId: string, filters: OrderFilters, newerThan: Position | null, cap: number): Promise<number> {
    if (boundConditions(this.knex, filters).length > 0) return this.countNow(workspaceId, filters, newerThan, cap);
    const { version } = await this.versions(workspaceId);
    const key = JSON.stringify([workspaceId, version, filters.q, newerThan?.at ?? null, newerThan?.id ?? null, cap]);
    const known = this.counts.get(key);
    if (known !== undefined) return known;
    const n = await this.countNow(workspaceId, filters, newerThan, cap);
    this.counts.set(key, n);
    return n;
  }

  /**
   * The workspace's search version (the sum of order_search_versions' `version`: what a text search
   * can find) and its status version (their `status_version`: every status change), as text. Read
   * before counting: a change committed in between makes a newer version, never a stale count.
   */
  private async versions(workspaceId: string): Promise<{ version: string; statuses: string }> {
    const [row] = await this.knex('order_search_versions')
      .where('workspace_id', workspaceId)
      .select(this.knex.raw('coalesce(sum(version), 0)::text AS version, coalesce(sum(status_version), 0)::text AS statuses'));
    return row;
  }

  /** count, counted now. */
  private async countNow(workspaceId: string, filters: OrderFilters, newerThan: Position | null, cap: number): Promise<number> {
    const newer: Knex.Raw[] = [];
    if (newerThan) {
      const { sql, bindings } = positionCondition('o', newerThan, 'newer');
      newer.push(this.knex.raw(sql, bindings));
    }
    const search = searchCondition(filters.q!);
    const keyed = searchCandidates(this.knex, workspaceId, filters.q!, await this.commonKeys.current());
    if (keyed) {
      // One pass over the candidates, keeping of each one only whether it matches.
      const matches = this.hit(workspaceId, filters, newer);
      const candidates = this.first(keyed.select(matches), this.limits.countCandidates + 1);
      const [row] = await this.knex.from(candidates.as('c')).select(this.knex.raw('count(*)::int AS read, (count(*) FILTER (WHERE c.hit))::int AS n'));
      if (row.read <= this.limits.countCandidates) return Math.min(row.n, cap + 1);
    }
    const matching = this.scope(workspaceId, filters).whereRaw(search.sql, search.bindings);
    for (const condition of newer) matching.whereRaw(condition);
    const [row] = await this.knex
      .from(
        matching
          .select(this.knex.raw('1'))
          .limit(cap + 1)
          .as('c'),
      )
      .select(this.knex.raw('count(*)::int AS n'));
    return row.n;
  }

  /**
   * How many orders match the filters, by status: the status filters' chips of a search. The same
   * ways and bounds as countNow: through the index's candidates when they are at most
   * `countCandidates`, each one's status read beside whether it matches; else along the newest
   * matching orders, `cap + 1` at most in all.
   *
   * A search without status, flag, delivery, team or date filters is remembered under the
   * workspace's search version and its status version (the order_status_versions migration): the
   * first says which orders match, the second that none of the workspace's orders changed status
   * since. Exact either way: a status change, an order added, deleted or with a new search text
   * counts again. With other filters (flags and deliveries change without a status), counted each time.
   */
  async countByStatus(workspaceId: string, filters: OrderFilters, cap: number): Promise<ReadonlyMap<string, number>> {
    if (!filters.q || boundConditions(this.knex, filters).length > 0) return this.countByStatusNow(workspaceId, filters, cap);
    const { version, statuses } = await this.versions(workspaceId);
    const key = JSON.stringify([workspaceId, version, statuses, filters.q, cap]);
    const known = this.statusCounts.get(key);
    if (known !== undefined) return known;
    const counted = await this.countByStatusNow(workspaceId, filters, cap);
    this.statusCounts.set(key, counted);
    return counted;
  }

  /** countByStatus, counted now. */
  private async countByStatusNow(workspaceId: string, filters: OrderFilters, cap: number): Promise<ReadonlyMap<string, number>> {
    const keyed = filters.q ? searchCandidates(this.knex, workspaceId, filters.q, await this.commonKeys.current()) : null;
    if (keyed) {
      const candidates = this.first(keyed.select('o.status', this.hit(workspaceId, filters, [])), this.limits.countCandidates + 1);
      const rows: Array<{ status: string; read: number; n: number }> = await this.knex
        .from(candidates.as('c'))
        .groupBy('c.status')
        .select('c.status', this.knex.raw('count(*)::int AS read, (count(*) FILTER (WHERE c.hit))::int AS n'));
      const read = rows.reduce((sum, row) => sum + row.read, 0);
      if (read <= this.limits.countCandidates) return new Map(rows.filter((row) => row.n > 0).map((row) => [row.status, row.n]));
    }
    const matching = this.scope(workspaceId, filters);
    if (filters.q) {
      const search = searchCondition(filters.q);
      matching.whereRaw(search.sql, search.bindings);
    }
    const rows: Array<{ status: string; n: number }> = await this.knex
      .from(
        matching
          .select('o.status')
          .limit(cap + 1)
          .as('c'),
      )
      .groupBy('c.status')
      .select('c.status', this.knex.raw('count(*)::int AS n'));
    return new Map(rows.map((row) => [row.status, row.n]));
  }

  /**
   * The first `n` rows of a query on the search keys. That query is planned apart, for all its rows:
   * with the limit on it, the planner may walk the whole table computing each order's keys to find
   * the few rows it expects. Its rows are read only as far as the limit.
   */
  private first(keyed: Knex.QueryBuilder, n: number): Knex.QueryBuilder {
    return this.knex.withMaterialized('keyed', keyed).from('keyed').select('*').limit(n);
  }

  /** The workspace's orders under the filters' status, flags and dates. */
  private scope(workspaceId: string, filters: OrderFilters): Knex.QueryBuilder {
    return applyBounds(this.knex, this.knex.from('orders as o').where('o.workspace_id', workspaceId), filters);
  }

  /**
   * One statement: the rows of `matches` (a page's columns, `position_at` among them) in the page's
   * order, and the number `counted` answers as `read`, which comes back even when nothing matches.
   */
  private async withCount<Row>(
    counted: Knex.QueryBuilder,
    matches: Knex.QueryBuilder,
    direction: SearchPage['direction'],
    candidates?: Knex.QueryBuilder,
  ): Promise<{ count: number; found: Row[] }> {
    const order = direction === 'older' ? 'desc' : 'asc';
    const rows: Array<{ id: string | null; read: number }> = await (candidates ? this.knex.withMaterialized('candidates', candidates) : this.knex)
      .select('m.*', 'c.read')
      .from(counted.as('c'))
      .leftJoin(matches.as('m'), this.knex.raw('true'))
      .orderBy([
        { column: 'm.position_at', order },
        { column: 'm.id', order },
      ]);
    // Each row keeps its `read` beside the page's columns: the rows are read field by field (toOrder).
    const found = rows.filter((row) => row.id !== null) as unknown as Row[];
    return { count: rows[0]?.read ?? 0, found };
  }
}

/**
 * Merges the search index's pending list into the index (the worker's sweep, every 15 seconds): the
 * keys of orders written since, which a writer merges itself only past 4 MB, and a carrier's report
 * (which raises that limit for its own transactions) not below 64 MB. A search reads the list too,
 * every page of it on every search; the merge keeps it short. The number of pages merged (0:
 * nothing was pending).
 */
export async function tidySearchIndex(knex: Knex): Promise<number> {
  const { rows } = await knex.raw<{ rows: Array<{ pages: string }> }>("SELECT gin_clean_pending_list('orders_search_keys_idx'::regclass) AS pages");
  return Number(rows[0].pages);
}
