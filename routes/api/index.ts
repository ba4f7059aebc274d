import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** Session-cookie JSON routes under /api. */
export function apiRouter(services: Services): Router {
  const router = Router();
  router.get('/credits', requireApiWorkspace, async (req, res) => {
    res.json(await services.credits.balance(workspaceOf(req).workspace));
  });
  return router;
}
