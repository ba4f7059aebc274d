import { Router } from 'express';
import type { Services } from '../../services';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';

export function creditPages(services: Services): Router {
  const router = Router();
  router.get('/credits', requirePageWorkspace, async (req, res) => {
    const { workspace } = workspaceOf(req);
    res.render('credits', { balance: await services.credits.balance(workspace) });
  });
  return router;
}
