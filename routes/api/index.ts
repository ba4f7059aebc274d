import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { accountRouter } from './account';
import { agentsRouter } from './agents';
import { callsRouter } from './calls';
import { carrierAccountsRouter, shipmentsRouter } from './carrier-accounts';
import { carriersRouter } from './carriers';
import { customersRouter } from './customers';
import { deliveriesRouter } from './deliveries';
import { apiKeysRouter } from './api-keys';
import { addOrderFileRoutes, ordersRouter } from './orders';
import { readPeriod, TEAM_CSV_COLUMNS, teamCsv } from '../../services/stats';
import { settingsRouter } from './settings';
import { storesRouter } from './stores';
import { teamRouter } from './team';
import { webhooksRouter } from './webhooks';
import { workspaceRouter } from './workspace';

/** Session-cookie JSON routes under /api. */
export function apiRouter(services: Services): Router {
  const router = Router();
  // A member's request keeps them on shift (written at most once a minute).
  router.use((req, _res, next) => {
    const workspace = req.ctx?.workspace;
    if (!workspace || !req.ctx) return next();
    services.team.shifts.touch(req.ctx.user.id, workspace.id).then(() => next(), next);
  });
  router.get('/credits', requireApiWorkspace, async (req, res) => {
    res.json(await services.credits.balance(workspaceOf(req).workspace));
  });
  router.get('/stats', requireApiWorkspace, async (req, res) => {
    res.json(await services.stats.forPeriod(workspaceOf(req).workspace.id, readPeriod(req.query)));
  });
  router.get('/stats/team', requireApiWorkspace, async (req, res) => {
    res.json(await services.stats.team(workspaceOf(req).workspace.id, readPeriod(req.query)));
  });
  router.get('/stats/team.csv', requireApiWorkspace, async (req, res) => {
    const period = readPeriod(req.query);
    const stats = await services.stats.team(workspaceOf(req).workspace.id, period);
    res.set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="team-${period.from}-${period.to}.csv"`,
      'Cache-Control': 'no-store',
    });
    res.send(teamCsv(stats, TEAM_CSV_COLUMNS));
  });
  addOrderFileRoutes(router, services);
  router.use(teamRouter(services));
  router.use('/account', accountRouter(services));
  // A person's decision on a parcel the carrier could not be asked about (docs/carriers.md).
  router.post('/orders/:id/parcel', requireApiWorkspace, async (req, res) => {
    res.json({ state: await services.parcels.decide(workspaceOf(req).workspace.id, String(req.params.id), req.body) });
  });
  router.use('/orders', ordersRouter(services));
  router.use('/customers', customersRouter(services));
  router.use('/deliveries', deliveriesRouter(services));
  router.use('/carriers', carriersRouter(services));
  router.use('/carrier-accounts', carrierAccountsRouter(services));
  router.use('/shipments', shipmentsRouter(services));
  router.use('/agents', agentsRouter(services));
  router.use('/keys', apiKeysRouter(services));
  router.use('/settings', settingsRouter(services));
  router.use('/calls', callsRouter(services));
  router.use('/webhooks', webhooksRouter(services));
  router.use('/stores', storesRouter(services));
  router.use('/workspace', workspaceRouter(services));
  return router;
}
