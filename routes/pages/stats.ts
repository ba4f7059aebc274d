import { Router } from 'express';
import type { Services } from '../../services';
import { ValidationError } from '../../services/shared';
import { readPeriod } from '../../services/stats';
import { ORDER_STATUSES } from '../../services/orders';
import { confirmedCount } from '../../services/calls';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { dailyChart, deliveryChart } from './stats-chart';
import { errorsByInput } from './forms';

/** The period a page asks for; a bad one shows the default period with the errors beside the fields. */
function pagePeriod(query: Record<string, unknown>): { period: { from: string; to: string }; errors: Record<string, string> } {
  try {
    return { period: readPeriod(query), errors: {} };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return { period: readPeriod({}), errors: errorsByInput(err) };
  }
}

/** /stats: how confirmation is going over a period, as figures, a chart and tables; /stats/team: who confirmed what. */
export function statsPages(services: Services): Router {
  const router = Router();
  router.get('/stats', requirePageWorkspace, async (req, res) => {
    const { period, errors } = pagePeriod(req.query);
    const stats = await services.stats.forPeriod(workspaceOf(req).workspace.id, period);
    const given = { from: typeof req.query.from === 'string' ? req.query.from : stats.from, to: typeof req.query.to === 'string' ? req.query.to : stats.to };
    res.status(Object.keys(errors).length > 0 ? 400 : 200).render('stats', {
      stats,
      chart: dailyChart(stats, req.t, res.locals.dir === 'rtl', res.locals.formatDay),
      deliveryChartSvg: deliveryChart(stats, req.t, res.locals.dir === 'rtl', res.locals.formatDay),
      statuses: ORDER_STATUSES,
      values: given,
      errors,
    });
  });
  router.get('/stats/team', requirePageWorkspace, async (req, res) => {
    const { period, errors } = pagePeriod(req.query);
    const { workspace, user } = workspaceOf(req);
    const [team, pay, saved] = await Promise.all([
      services.stats.team(workspace.id, period),
      services.team.pay(workspace, user.id, period),
      services.team.saved(workspace.id, period),
    ]);
    const given = { from: typeof req.query.from === 'string' ? req.query.from : team.from, to: typeof req.query.to === 'string' ? req.query.to : team.to };
    res.status(Object.keys(errors).length > 0 ? 400 : 200).render('stats-team', {
      team,
      confirmedCount,
      values: given,
      errors,
      csvLink: `/api/stats/team.csv?from=${team.from}&to=${team.to}`,
      pay,
      saved,
      payCsvLink: `/api/stats/team/pay.csv?from=${pay.from}&to=${pay.to}`,
      payLink: (kind: 'confirmed' | 'delivered', member: string) => `/orders?pay=${kind}&member=${member}&period=${pay.from}..${pay.to}`,
    });
  });
  return router;
}
