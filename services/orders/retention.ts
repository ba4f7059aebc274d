import type { Knex } from 'knex';
import { z } from 'zod';
import { bodyFields, camelOrSnake, msg, ownerOnly, parse } from '../../services/shared';
import type { WorkspaceActor } from '../../services/shared';
import { anonymiseOrders } from './anonymise';

/**
 * Retention (docs/privacy.md): a workspace keeps its customers' details `retention_months` after an
 * order's last change; the worker's daily pass then anonymises the order. What the statistics need
 * stays: statuses, amounts, currency, store, products, dates, flags, the delivery, the calls'
 * outcomes and durations; every counter (order_counts, order_status_counts, call_counts,
 * delivery_counts) reads the same before and after.
 */
export const RETENTION_MONTHS = { default: 24, min: 3, max: 120 } as const;

/** Orders anonymised per statement, and at most per pass (the rest waits for the next day's pass). */
const PASS = { batchSize: 1_000, cap: 100_000 } as const;

const months = msg('wholeNumber', { label: 'retentionMonths', min: RETENTION_MONTHS.min, max: RETENTION_MONTHS.max });
export const retentionSchema = z.object({
  retentionMonths: z.number({ error: months }).int(months).min(RETENTION_MONTHS.min, months).max(RETENTION_MONTHS.max, months),
});

export interface RetentionSettings {
  retention_months: number;
}

/**
 * The orders of a workspace a pass may take: last changed before `cutoff`, not anonymised, no
 * confirmation under way. An order's last change is `changed_at` (orders_mark_changed), or, for a
 * row not changed since that column came, the latest of its own timestamps; a call started or
 * ended after the cutoff keeps it either way.
 */
const DUE = `
  SELECT o.id FROM orders o
   WHERE o.workspace_id = ? AND o.anonymised_at IS NULL AND o.created_at < ?
     AND coalesce(o.changed_at, greatest(o.created_at, o.delivery_at, o.external_updated_at)) < ?
     AND (o.op_status IS NULL OR o.op_status IN ('completed', 'cancelled'))
     AND NOT EXISTS (SELECT 1 FROM operations p JOIN calls c ON c.operation_id = p.id
                      WHERE p.order_id = o.id AND greatest(c.started_at, c.ended_at) >= ?)
   ORDER BY o.created_at
   LIMIT ?
   FOR UPDATE OF o SKIP LOCKED`;

export interface PassResult {
  orders: number;
  workspaces: number;
}

/** The workspace setting, and the pass that keeps to it. */
export class RetentionService {
  constructor(private readonly knex: Knex) {}

  async get(workspaceId: string): Promise<RetentionSettings> {
    const row = await this.knex('workspaces').where({ id: workspaceId }).first('retention_months');
    return { retention_months: row?.retention_months ?? RETENTION_MONTHS.default };
  }

  /** The owner's: how long the workspace keeps its customers' details is the shop's decision as controller. */
  async update(workspace: WorkspaceActor, body: unknown): Promise<RetentionSettings> {
    ownerOnly(workspace);
    const source = bodyFields(body);
    const { retentionMonths } = parse(retentionSchema, { retentionMonths: camelOrSnake(source, 'retentionMonths', 'retention_months') });
    await this.knex('workspaces').where({ id: workspace.id }).update({ retention_months: retentionMonths });
    return { retention_months: retentionMonths };
  }

  /** When the order's customer details were anonymised; null while they are kept. */
  async anonymisedAt(workspaceId: string, orderId: string): Promise<Date | null> {
    const row = await this.knex('orders').where({ workspace_id: workspaceId, id: orderId }).first('anonymised_at');
    return row?.anonymised_at ?? null;
  }

  /**
   * The worker's daily pass: each workspace's orders last changed more than its retention ago are
   * anonymised, `batchSize` per statement (each its own transaction, its rows locked with SKIP
   * LOCKED: an order someone is working on waits for the next pass), the workspaces taking turns,
   * `cap` orders at most in all. `now` and `workspaceIds` let a test age nothing but its own.
   */
  async pass(options: { batchSize?: number; cap?: number; now?: Date; workspaceIds?: string[] } = {}): Promise<PassResult> {
    const batchSize = options.batchSize ?? PASS.batchSize;
    let left = options.cap ?? PASS.cap;
    const now = options.now ?? new Date();
    const query = this.knex('workspaces').select('id', 'retention_months').orderBy('id');
    if (options.workspaceIds) query.whereIn('id', options.workspaceIds);
    let waiting = (await query).map((w: { id: string; retention_months: number }) => ({ id: w.id, cutoff: monthsBefore(now, w.retention_months) }));
    const touched = new Set<string>();
    let orders = 0;
    while (waiting.length > 0 && left > 0) {
      const next: typeof waiting = [];
      for (const workspace of waiting) {
        if (left <= 0) break;
        const limit = Math.min(batchSize, left);
        const n = await this.knex.transaction((trx) => anonymiseOrders(trx, DUE, [workspace.id, workspace.cutoff, workspace.cutoff, workspace.cutoff, limit]));
        orders += n;
        left -= n;
        if (n > 0) touched.add(workspace.id);
        // A short batch: nothing more is due in that workspace today.
        if (n === limit) next.push(workspace);
      }
      waiting = next;
    }
    return { orders, workspaces: touched.size };
  }
}

/** `months` calendar months before `at` (the same day of the month, or the month's last). */
function monthsBefore(at: Date, months: number): Date {
  const d = new Date(at);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - months);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, last));
  return d;
}
