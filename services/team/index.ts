import type { Knex } from 'knex';
import type { WorkspaceActor } from '../../services/shared';
import { reassign } from './assignment';
import { payView } from './pay';
import type { PayView } from './pay';
import { ShiftService } from './shifts';
import { TeamSettingsService } from './settings';

export { claimRules, releaseOrdersOf } from './assignment';
export { ON_SHIFT_SQL } from './shifts';
export { ASSIGNMENTS } from './settings';
export { payCsv } from './pay';

/**
 * The members' orders delivered over a period, by member (user id → orders): what the pay view pays
 * per delivered order. The statistics' counters hold it (StatsService.deliveredByConfirmer); the team
 * is given it, as the calls domain, which the statistics read, imports the team.
 */
export type DeliveredBy = (workspaceId: string, period: { from: string; to: string }) => Promise<Map<string, number>>;

/** The team (docs/team.md): shifts, assignment settings and reassignment, pay. */
export class TeamService {
  readonly shifts: ShiftService;
  readonly settings: TeamSettingsService;

  constructor(
    private readonly knex: Knex,
    private readonly deliveredBy: DeliveredBy,
  ) {
    this.shifts = new ShiftService(knex);
    this.settings = new TeamSettingsService(knex);
  }

  /** The owner gives orders to a member or back to the pool (POST /api/orders/assign). */
  reassign(workspace: WorkspaceActor, body: unknown): Promise<{ assigned: number }> {
    return reassign(this.knex, workspace, body);
  }

  /** The pay view for a period: every line for the owner, their own for a member. */
  pay(workspace: WorkspaceActor, userId: string, period: { from: string; to: string }): Promise<PayView> {
    return payView(this.knex, workspace.id, period, this.deliveredBy(workspace.id, period), workspace.role === 'owner' ? undefined : userId);
  }
}
