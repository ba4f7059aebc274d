import type { Knex } from 'knex';
import { CONFIRMING_OUTCOMES, sqlList } from '../calls/outcomes';
import { startFollowUps } from './follow-ups';
import type { DeliverySource, DeliveryStatus, DeliveryWord } from '../orders';

/** One piece of delivery news, whoever brings it (a person, a carrier's file or hook, the store). */
export interface DeliveryEvent {
  workspaceId: string;
  orderId: string;
  /**
   * A delivery status, or `attempted`: the courier could not deliver yet (no answer, postponed,
   * unreachable). An attempt changes the order's carrier's words and their time only, never its status.
   */
  status: DeliveryWord;
  /** Given: replaces the order's; absent: the order keeps its own. */
  carrier?: string | null;
  trackingNumber?: string | null;
  /** The carrier's own words for this status, as received. */
  carrierStatus?: string | null;
  /** When it happened (ISO 8601 or a Date). */
  at: string | Date;
  source: DeliverySource;
  /** Who or what brought it: a user's name, a connection's name, a file name. */
  by: string | null;
  /**
   * What the source names this news by (a store's fulfillment id): undoDeliveryNews undoes every
   * event of one key; news of a key already undone is kept in the history, never applied.
   */
  key?: string | null;
}

export interface AppliedEvent {
  /** The order exists in the workspace (else nothing was written). */
  found: boolean;
  /** It is not older than the order's last news (false: out of order, kept in the history only). */
  applied: boolean;
  /** It was news and was written to the order (false for a re-reported, unchanged delivery). */
  wrote: boolean;
  /** It went into the order's delivery history (news, or news that arrived out of order). */
  recorded: boolean;
  /** The order's current delivery (as every representation shows it) is different afterwards. */
  changed: boolean;
  /** The tracking number given belongs to another order of the workspace: the order kept its own. */
  trackingTaken: boolean;
  /**
   * The event is an attempt that became the order's latest news: the courier could not deliver it
   * yet, and one more call may save the parcel (a follow-up). See attemptedOrders.
   */
  attempted: boolean;
}

/** The orders that just received an attempt (see AppliedEvent.attempted), once each, in the batch's order. */
export function attemptedOrders(events: Array<{ orderId: string }>, results: AppliedEvent[]): string[] {
  return [...new Set(events.filter((_, i) => results[i]?.attempted).map((e) => e.orderId))];
}

/**
 * A batch of events, in their order, in one statement under the row locks of their orders.
 *
 * An event is applied unless it is older than the order's last applied news (a status's or an
 * attempt's, `delivery_carrier_status_at`) or than an earlier event of the batch for the same order
 * (a person's change always applies). An applied event writes the order only when it is news: a
 * status or words other than the order's, a carrier or tracking number other than its own, an
 * attempt in other words or on a later Morocco day than the last news; a person's change always
 * writes. The order takes the last written event's words and their time, the last written status
 * (an attempt is not one) and its time, the carrier and tracking number last given (a tracking
 * number another order of the workspace has is not taken), and who confirmed it by a call, for the
 * statistics (orders_count_deliveries).
 *
 * The history keeps what changed something and what arrived out of order: an event that writes,
 * an older one not applied (unless the history holds the same status and words at the same time
 * already: an old report imported again), and the first event of a source's key (a fulfillment,
 * so that cancelling it is exact). A carrier's cumulative report read again adds nothing.
 * One row per event comes back, in the batch's order.
 */
const APPLY = `
  WITH given AS (
    SELECT g.n, g.order_id, g.status, g.carrier, g.tracking, g.carrier_status, g.at, g.source, g.by, g.key
      FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::text[], ?::text[], ?::text[])
           WITH ORDINALITY AS g(order_id, status, carrier, tracking, carrier_status, at, source, by, key, n)
  ), cur AS (
    SELECT o.id, o.delivery_status, o.delivery_carrier, o.delivery_tracking_number, o.delivery_carrier_status,
           greatest(o.delivery_at, o.delivery_carrier_status_at) AS news_at
      FROM orders o WHERE o.workspace_id = ?::uuid AND o.id = ANY(?::uuid[])
     ORDER BY o.id FOR UPDATE
  ), keyed AS (
    -- News of a key already undone (a late update of a cancelled fulfillment): kept, undone too.
    -- known: the history holds this news already (same status, words and time).
    SELECT g.*,
           g.key IS NOT NULL AND EXISTS (
             SELECT 1 FROM delivery_events u
              WHERE u.order_id = g.order_id AND u.source = g.source AND u.source_key = g.key AND u.undone_at IS NOT NULL) AS undone,
           g.key IS NOT NULL AND NOT EXISTS (
             SELECT 1 FROM delivery_events u WHERE u.order_id = g.order_id AND u.source = g.source AND u.source_key = g.key) AS new_key,
           EXISTS (
             SELECT 1 FROM delivery_events d
              WHERE d.order_id = g.order_id AND d.at = g.at AND d.status = g.status AND d.carrier_status IS NOT DISTINCT FROM g.carrier_status) AS known
      FROM given g
  ), judged AS (
    SELECT g.*, (NOT g.undone AND (g.source = 'person' OR g.at >= coalesce(greatest(cur.news_at, g.prior), '-infinity'))) AS applied
      FROM (SELECT g.*, max(g.at) OVER (PARTITION BY g.order_id ORDER BY g.n ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior
              FROM keyed g) g
      JOIN cur ON cur.id = g.order_id
  ), earlier AS (
    -- What the batch's applied events before this one said of the same order (few: arrays are cheap).
    SELECT j.*,
           array_agg(j.status) FILTER (WHERE j.applied AND j.status <> 'attempted') OVER w AS statuses,
           array_agg(j.carrier_status) FILTER (WHERE j.applied) OVER w AS words,
           array_agg(j.carrier) FILTER (WHERE j.applied AND j.carrier IS NOT NULL) OVER w AS carriers,
           array_agg(j.tracking) FILTER (WHERE j.applied AND j.tracking IS NOT NULL) OVER w AS trackings,
           max(j.at) FILTER (WHERE j.applied) OVER w AS news_at
      FROM judged j
    WINDOW w AS (PARTITION BY j.order_id ORDER BY j.n ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
  ), was AS (
    -- The order's delivery just before each event: the batch's earlier events over the order's own.
    SELECT e.*,
           coalesce(e.statuses[cardinality(e.statuses)], cur.delivery_status) AS was_status,
           CASE WHEN cardinality(e.words) > 0 THEN e.words[cardinality(e.words)] ELSE cur.delivery_carrier_status END AS was_words,
           coalesce(e.carriers[cardinality(e.carriers)], cur.delivery_carrier) AS was_carrier,
           coalesce(e.trackings[cardinality(e.trackings)], cur.delivery_tracking_number) AS was_tracking,
           greatest(cur.news_at, e.news_at) AS was_at
      FROM earlier e JOIN cur ON cur.id = e.order_id
  ), weighed AS (
    SELECT w.*, w.writes OR ((NOT w.applied OR w.new_key) AND NOT w.known) AS recorded
      FROM (SELECT w.*, w.applied AND (w.source = 'person'
              OR (w.carrier IS NOT NULL AND w.carrier IS DISTINCT FROM w.was_carrier)
              OR (w.tracking IS NOT NULL AND w.tracking IS DISTINCT FROM w.was_tracking)
              OR w.carrier_status IS DISTINCT FROM w.was_words
              OR CASE WHEN w.status = 'attempted'
                   -- The same words on a later day: the courier tried again.
                   THEN w.was_at IS NULL OR (w.at AT TIME ZONE 'Africa/Casablanca')::date > (w.was_at AT TIME ZONE 'Africa/Casablanca')::date
                   ELSE w.status IS DISTINCT FROM w.was_status END) AS writes
              FROM was w) w
  ), ins AS (
    INSERT INTO delivery_events (workspace_id, order_id, status, carrier, tracking_number, carrier_status, at, source, by, source_key, applied, undone_at)
    SELECT ?::uuid, order_id, status, carrier, tracking, carrier_status, at, source, by, key, applied, CASE WHEN undone THEN now() END
      FROM weighed WHERE recorded ORDER BY n
    RETURNING 1
  ), named AS (
    -- Per order, the carrier and tracking number of its last written event that gives one, and its last
    -- written status and that status's time (grouped once, not looked up in the batch for every order).
    SELECT order_id,
           (array_agg(carrier ORDER BY n DESC) FILTER (WHERE carrier IS NOT NULL))[1] AS carrier,
           (array_agg(tracking ORDER BY n DESC) FILTER (WHERE tracking IS NOT NULL))[1] AS tracking,
           (array_agg(status ORDER BY n DESC) FILTER (WHERE status <> 'attempted'))[1] AS status,
           (array_agg(at ORDER BY n DESC) FILTER (WHERE status <> 'attempted'))[1] AS status_at
      FROM weighed WHERE writes GROUP BY order_id
  ), final AS (
    SELECT DISTINCT ON (f.order_id) f.n, f.order_id, named.status, named.status_at, f.carrier_status, f.at, named.carrier, named.tracking
      FROM weighed f JOIN named ON named.order_id = f.order_id
     WHERE f.writes ORDER BY f.order_id, f.n DESC
  ), upd AS (
    -- An attempt alone leaves the status, its time and who confirmed the order as they were.
    UPDATE orders o
       SET delivery_status = coalesce(f.status, o.delivery_status),
           delivery_carrier = coalesce(f.carrier, o.delivery_carrier),
           delivery_tracking_number = CASE
             WHEN f.tracking IS NULL OR EXISTS (SELECT 1 FROM orders x WHERE x.workspace_id = o.workspace_id AND x.delivery_tracking_number = f.tracking AND x.id <> o.id)
             THEN o.delivery_tracking_number ELSE f.tracking END,
           delivery_carrier_status = f.carrier_status,
           delivery_carrier_status_at = f.at,
           delivery_at = coalesce(f.status_at, o.delivery_at),
           delivery_confirmer_kind = CASE WHEN f.status IS NULL THEN o.delivery_confirmer_kind ELSE c.kind END,
           delivery_confirmer_id = CASE WHEN f.status IS NULL THEN o.delivery_confirmer_id ELSE c.who END
      FROM final f
      LEFT JOIN LATERAL (
        SELECT k.kind, CASE WHEN k.kind = 'human' THEN k.made_by ELSE op.agent_id END AS who
          FROM operations op JOIN calls k ON k.operation_id = op.id
         WHERE op.order_id = f.order_id AND k.outcome IN (${sqlList(CONFIRMING_OUTCOMES)}) AND k.dropped_at IS NULL
         ORDER BY k.ended_at DESC LIMIT 1) c ON true
     WHERE o.id = f.order_id AND o.id = ANY(?::uuid[])
    RETURNING o.id, f.n, f.tracking, o.delivery_status, o.delivery_carrier, o.delivery_tracking_number, o.delivery_carrier_status
  )
  SELECT g.n, cur.id IS NOT NULL AS found, coalesce(w.applied, false) AS applied, coalesce(w.recorded, false) AS recorded,
         coalesce(w.writes, false) AS wrote,
         -- An order still without a delivery (an attempt came first) shows none: nothing changed in its representation.
         upd.id IS NOT NULL AND upd.delivery_status IS NOT NULL
           AND (upd.delivery_status, upd.delivery_carrier, upd.delivery_tracking_number, upd.delivery_carrier_status)
           IS DISTINCT FROM (cur.delivery_status, cur.delivery_carrier, cur.delivery_tracking_number, cur.delivery_carrier_status) AS changed,
         upd.id IS NOT NULL AND upd.tracking IS NOT NULL AND upd.delivery_tracking_number IS DISTINCT FROM upd.tracking AS tracking_taken,
         coalesce(w.writes AND w.status = 'attempted', false) AS attempted
    FROM given g
    LEFT JOIN cur ON cur.id = g.order_id
    LEFT JOIN weighed w ON w.n = g.n
    LEFT JOIN upd ON upd.n = g.n
   ORDER BY g.n`;

const NOTIFY = `
  SELECT webhook_event(o.workspace_id, 'order.delivery_updated', jsonb_build_object('order', webhook_order(o)))
    FROM orders o WHERE o.workspace_id = ?::uuid AND o.id = ANY(?::uuid[])`;

/**
 * The one way delivery news is written, whoever brings it (a person, an import's batch of rows, a
 * carrier's hook, a store's fulfillment, a future carrier adapter): `events` of one workspace, in
 * their order, in one statement in the caller's transaction. An order whose current delivery
 * changed sends `order.delivery_updated` in the same transaction (`notify: false`: the caller knows
 * no endpoint takes it). The answer has one entry per event; `changed` is true on the event that
 * left an order's delivery changed.
 */
export async function applyDeliveryEvents(
  db: Knex | Knex.Transaction,
  workspaceId: string,
  events: Array<Omit<DeliveryEvent, 'workspaceId'>>,
  options: { notify?: boolean; followUps?: boolean } = {},
): Promise<AppliedEvent[]> {
  if (events.length === 0) return [];
  const column = <T>(pick: (e: Omit<DeliveryEvent, 'workspaceId'>) => T) => events.map(pick);
  // The orders are found by their ids (the primary key), never by a join the planner may turn into a
  // scan of the workspace's or the table's orders: a batch costs the same among a million orders.
  const orderIds = [...new Set(events.map((e) => e.orderId))];
  const { rows } = await db.raw(APPLY, [
    column((e) => e.orderId),
    column((e) => e.status),
    column((e) => e.carrier ?? null),
    column((e) => e.trackingNumber ?? null),
    column((e) => e.carrierStatus ?? null),
    column((e) => new Date(e.at).toISOString()),
    column((e) => e.source),
    column((e) => e.by),
    column((e) => e.key ?? null),
    workspaceId,
    orderIds,
    workspaceId,
    orderIds,
  ] as never[]);
  type Row = { found: boolean; applied: boolean; wrote: boolean; recorded: boolean; changed: boolean; tracking_taken: boolean; attempted: boolean };
  const results = (rows as Row[]).map((r) => ({
    found: r.found,
    applied: r.applied,
    wrote: r.wrote,
    recorded: r.recorded,
    changed: r.changed,
    trackingTaken: r.tracking_taken,
    attempted: r.attempted,
  }));
  const changed = [...new Set(events.filter((_, i) => results[i].changed).map((e) => e.orderId))];
  if (changed.length > 0 && options.notify !== false) await db.raw(NOTIFY, [workspaceId, changed]);
  // An attempt or a fresh refusal starts a follow-up call (`followUps: false`: the follow-up's own outcome).
  if (options.followUps !== false) await startFollowUps(db, workspaceId, events, results);
  return results;
}

/** Sends `order.delivery_updated` for orders whose delivery news changed outside applyDeliveryEvents (a follow-up's rescheduled day). */
export async function notifyDeliveryUpdated(db: Knex | Knex.Transaction, workspaceId: string, orderIds: string[]): Promise<void> {
  await db.raw(NOTIFY, [workspaceId, orderIds]);
}

/** One event (see applyDeliveryEvents). */
export async function applyDeliveryEvent(
  db: Knex | Knex.Transaction,
  event: DeliveryEvent,
  options: { notify?: boolean; followUps?: boolean } = {},
): Promise<AppliedEvent> {
  const { workspaceId, ...rest } = event;
  const [result] = await applyDeliveryEvents(db, workspaceId, [rest], options);
  return result;
}

/** Sets an order's delivery as recomputed; who confirmed it by a call is read as APPLY reads it. */
const RESTORE = `
  UPDATE orders o
     SET delivery_status = f.status, delivery_carrier = f.carrier, delivery_tracking_number = f.tracking,
         delivery_carrier_status = f.carrier_status, delivery_carrier_status_at = f.news_at, delivery_at = f.at,
         delivery_confirmer_kind = CASE WHEN f.status IS NULL THEN NULL ELSE c.kind END,
         delivery_confirmer_id = CASE WHEN f.status IS NULL THEN NULL ELSE c.who END
    FROM (SELECT ?::uuid AS order_id, ?::text AS status, ?::text AS carrier, ?::text AS tracking, ?::text AS carrier_status,
                 ?::timestamptz AS at, ?::timestamptz AS news_at) f
    LEFT JOIN LATERAL (
      SELECT k.kind, CASE WHEN k.kind = 'human' THEN k.made_by ELSE op.agent_id END AS who
        FROM operations op JOIN calls k ON k.operation_id = op.id
       WHERE op.order_id = f.order_id AND k.outcome IN (${sqlList(CONFIRMING_OUTCOMES)}) AND k.dropped_at IS NULL
       ORDER BY k.ended_at DESC LIMIT 1) c ON true
   WHERE o.id = f.order_id AND o.workspace_id = ?::uuid`;

/** One remaining event of an order's history, as the recomputation reads it. */
interface HistoryRow {
  id: string;
  status: DeliveryWord;
  carrier: string | null;
  tracking_number: string | null;
  carrier_status: string | null;
  at: Date;
  source: DeliverySource;
  applied: boolean;
}

/** What an order's delivery columns hold: its status (null: none yet, even after an attempt) and its last news. */
interface DeliveryState {
  status: DeliveryStatus | null;
  carrier: string | null;
  tracking: string | null;
  carrierStatus: string | null;
  /** The time of the last status applied (null with the status). */
  at: Date | null;
  /** The time of the last news applied, a status's or an attempt's: the time of `carrierStatus`. */
  newsAt: Date;
}

/**
 * An order's history replayed in the order it was received, by APPLY's rule: each event applies
 * unless it is older than the last news applied (a person's always applies); an attempt changes the
 * words and their time only; the carrier and tracking number are the last given (one `taken` by
 * another order is not). What the order's columns hold at the end (null: nothing), and the events
 * whose `applied` the replay turns over.
 */
function replay(events: HistoryRow[], taken: Set<string>): { state: DeliveryState | null; turned: string[] } {
  let state = null as DeliveryState | null;
  const turned: string[] = [];
  for (const e of events) {
    const at = new Date(e.at);
    const applied = e.source === 'person' || state === null || at.getTime() >= state.newsAt.getTime();
    if (applied !== e.applied) turned.push(e.id);
    if (!applied) continue;
    const prior = state;
    const attempt = e.status === 'attempted';
    state = {
      status: attempt ? (prior?.status ?? null) : (e.status as DeliveryStatus),
      carrier: e.carrier ?? prior?.carrier ?? null,
      tracking: e.tracking_number && !taken.has(e.tracking_number) ? e.tracking_number : (prior?.tracking ?? null),
      carrierStatus: e.carrier_status,
      at: attempt ? (prior?.at ?? null) : at,
      newsAt: at,
    };
  }
  return { state, turned };
}

/**
 * Undoes a piece of news (Shopify cancels a fulfillment: docs/delivery.md): the order's events of
 * `source` and `key` are marked undone (kept in the history, no longer applied), and the order's
 * delivery is recomputed from the events left, as if the undone ones had never come — the delivery
 * before them, another fulfillment's, or none. Under the order's row lock, in the caller's
 * transaction; a change sends `order.delivery_updated` as applyDeliveryEvents does. `undone` is
 * the number of events undone (0: nothing of that key, nothing written).
 */
export async function undoDeliveryNews(
  db: Knex | Knex.Transaction,
  news: { workspaceId: string; orderId: string; source: DeliverySource; key: string | null },
  options: { notify?: boolean } = {},
): Promise<{ undone: number; changed: boolean }> {
  const { workspaceId, orderId, source, key } = news;
  if (!key) return { undone: 0, changed: false };
  const before = await db('orders')
    .where({ workspace_id: workspaceId, id: orderId })
    .forUpdate()
    .first('delivery_status', 'delivery_carrier', 'delivery_tracking_number', 'delivery_carrier_status');
  if (!before) return { undone: 0, changed: false };
  const undone = await db('delivery_events')
    .where({ workspace_id: workspaceId, order_id: orderId, source, source_key: key })
    .whereNull('undone_at')
    .update({ undone_at: db.raw('now()'), applied: false }, ['id']);
  if (undone.length === 0) return { undone: 0, changed: false };
  const events: HistoryRow[] = await db('delivery_events')
    .where({ workspace_id: workspaceId, order_id: orderId })
    .whereNull('undone_at')
    .orderBy([{ column: 'received_at' }, { column: 'id' }])
    .select('id', 'status', 'carrier', 'tracking_number', 'carrier_status', 'at', 'source', 'applied');
  const numbers = [...new Set(events.map((e) => e.tracking_number).filter((n): n is string => n !== null))];
  const taken = new Set<string>(
    numbers.length === 0
      ? []
      : await db('orders')
          .where({ workspace_id: workspaceId })
          .whereNot({ id: orderId })
          .whereIn('delivery_tracking_number', numbers)
          .pluck('delivery_tracking_number'),
  );
  const { state, turned } = replay(events, taken);
  if (turned.length > 0)
    await db('delivery_events')
      .whereIn('id', turned)
      .update({ applied: db.raw('NOT applied') });
  await db.raw(RESTORE, [
    orderId,
    state?.status ?? null,
    state?.carrier ?? null,
    state?.tracking ?? null,
    state?.carrierStatus ?? null,
    state?.status ? state.at : null,
    state?.newsAt ?? null,
    workspaceId,
  ]);
  const changed =
    (before.delivery_status ?? null) !== (state?.status ?? null) ||
    (before.delivery_carrier ?? null) !== (state?.carrier ?? null) ||
    (before.delivery_tracking_number ?? null) !== (state?.tracking ?? null) ||
    (before.delivery_carrier_status ?? null) !== (state?.carrierStatus ?? null);
  if (changed && options.notify !== false) await db.raw(NOTIFY, [workspaceId, [orderId]]);
  return { undone: undone.length, changed };
}
