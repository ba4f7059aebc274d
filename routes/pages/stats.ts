import { Router } from 'express';
import type { Services } from '../../services';
import { ValidationError } from '../../services/errors';
import { readPeriod } from '../../services/stats';
import { ORDER_STATUSES } from '../../services/order-status';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { dailyChart } from './stats-chart';
import { errorsByInput } from './forms';

/** /stats: how confirmation is going over a period, as figures, a chart and tables. */
export function statsPages(services: Services): Router {
  const router = Router();
  router.get('/stats', requirePageWorkspace, async (req, res) => {
    let period: { from: string; to: string };
    let errors: Record<string, string> = {};
    try {
      period = readPeriod(req.query);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      errors = errorsByInput(err);
      period = readPeriod({});
    }
    const stats = await services.stats.forPeriod(workspaceOf(req).workspace.id, period);
    const given = { from: typeof req.query.from === 'string' ? req.query.from : stats.from, to: typeof req.query.to === 'string' ? req.query.to : stats.to };
    res.status(Object.keys(errors).length > 0 ? 400 : 200).render('stats', {
      stats,
      chart: dailyChart(stats, req.t, res.locals.dir === 'rtl', res.locals.formatDay),
      statuses: ORDER_STATUSES,
      values: given,
      errors,
    });
  });
  return router;
}
