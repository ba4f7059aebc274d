import { endedDeliveries } from '../orders';
import type { DeliveryStats, DeliveryTally } from './deliveries';
import { confirmedCount } from '../calls';
import type { TeamStats } from './team';

/**
 * The pages' own figures beside the API's: what a column or a bar adds up is worked out here, so
 * that a template only formats. The API's answers stay as they are.
 */

/** A delivery tally as the pages show it: the parcels that came back (refused or returned) in one column, and every ended delivery (the chart's bars). */
type ShownTally<T extends DeliveryTally> = T & { refused_or_returned: number; ended: number };

/** The parcels that came back: one column on the pages, two figures in the API. */
const cameBack = (tally: { refused: number; returned: number }) => tally.refused + tally.returned;

const shown = <T extends DeliveryTally>(tally: T): ShownTally<T> => ({ ...tally, refused_or_returned: cameBack(tally), ended: endedDeliveries(tally) });

export interface ShownDelivery extends ShownTally<DeliveryTally> {
  by_day: Array<ShownTally<DeliveryStats['by_day'][number]>>;
  by_store: Array<ShownTally<DeliveryStats['by_store'][number]>>;
  by_city: Array<ShownTally<DeliveryStats['by_city'][number]>>;
  confirmed_by_call: ShownTally<DeliveryTally>;
  without_confirmed_call: ShownTally<DeliveryTally>;
}

/** /stats: the figures of the period, each delivery tally with the page's columns. */
export function statsPageOf<S extends { delivery: DeliveryStats }>(stats: S): Omit<S, 'delivery'> & { delivery: ShownDelivery } {
  const { delivery } = stats;
  return {
    ...stats,
    delivery: {
      ...shown(delivery),
      by_day: delivery.by_day.map(shown),
      by_store: delivery.by_store.map(shown),
      by_city: delivery.by_city.map(shown),
      confirmed_by_call: shown(delivery.confirmed_by_call),
      without_confirmed_call: shown(delivery.without_confirmed_call),
    },
  };
}

type TeamFigures<T extends { by_outcome: TeamStats['rows'][number]['by_outcome']; refused: number; returned: number }> = T & {
  /** The calls that confirmed their order (`confirmedCount`, CONFIRMING_OUTCOMES). */
  confirming_calls: number;
  refused_or_returned: number;
};

export interface TeamPage extends Omit<TeamStats, 'rows' | 'by_channel'> {
  rows: Array<TeamFigures<TeamStats['rows'][number]>>;
  by_channel: { [K in keyof TeamStats['by_channel']]: TeamFigures<TeamStats['by_channel'][K]> };
}

const withTeamFigures = <T extends { by_outcome: TeamStats['rows'][number]['by_outcome']; refused: number; returned: number }>(row: T): TeamFigures<T> => ({
  ...row,
  confirming_calls: confirmedCount(row.by_outcome),
  refused_or_returned: cameBack(row),
});

/** /stats/team: each row and channel with the page's columns. */
export function teamPageOf(team: TeamStats): TeamPage {
  return {
    ...team,
    rows: team.rows.map(withTeamFigures),
    by_channel: {
      human: withTeamFigures(team.by_channel.human),
      voice: withTeamFigures(team.by_channel.voice),
      whatsapp: withTeamFigures(team.by_channel.whatsapp),
    },
  };
}
