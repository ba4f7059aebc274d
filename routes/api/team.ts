import { Router } from 'express';
import type { Services } from '../../services';
import { readPeriod } from '../../services/stats';
import { ValidationError, bodyFields, msg } from '../../services/shared';
import { payCsv } from '../../services/team';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** The team (docs/team.md): the caller's shift, the members, their terms, the assignment settings and pay. */
export function teamRouter(services: Services): Router {
  const router = Router();
  router.put('/me/shift', requireApiWorkspace, async (req, res) => {
    const { on } = bodyFields(req.body);
    if (typeof on !== 'boolean') throw new ValidationError({ on: msg('notValid', { label: 'on' }) });
    const { workspace, user } = workspaceOf(req);
    res.json(await services.team.shifts.set(workspace.id, user.id, on));
  });
  router.get('/team', requireApiWorkspace, async (req, res) => {
    res.json({ members: await services.team.shifts.team(workspaceOf(req).workspace.id) });
  });
  router.put('/team/:userId', requireApiWorkspace, async (req, res) => {
    res.json(await services.team.settings.setTerms(workspaceOf(req).workspace, String(req.params.userId), req.body));
  });
  router.get('/settings/team', requireApiWorkspace, async (req, res) => {
    const id = workspaceOf(req).workspace.id;
    const [settings, members, stores] = await Promise.all([
      services.team.settings.get(id),
      services.team.settings.members(id),
      services.team.settings.stores(id),
    ]);
    res.json({ ...settings, members, stores });
  });
  router.put('/settings/team', requireApiWorkspace, async (req, res) => {
    res.json(await services.team.settings.update(workspaceOf(req).workspace, req.body));
  });
  router.put('/settings/team/stores', requireApiWorkspace, async (req, res) => {
    res.json(await services.team.settings.setStore(workspaceOf(req).workspace, req.body));
  });
  router.get('/stats/team/pay', requireApiWorkspace, async (req, res) => {
    const { workspace, user } = workspaceOf(req);
    res.json(await services.team.pay(workspace, user.id, readPeriod(req.query)));
  });
  router.get('/stats/team/pay.csv', requireApiWorkspace, async (req, res) => {
    const { workspace, user } = workspaceOf(req);
    const period = readPeriod(req.query);
    const view = await services.team.pay(workspace, user.id, period);
    res.set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="pay-${period.from}-${period.to}.csv"`,
      'Cache-Control': 'no-store',
    });
    res.send(payCsv(view));
  });
  return router;
}
