import { Router } from 'express';
import type { Services } from '../../services';
import { requireApiUser } from '../middleware/auth';

/** /api/account: the signed-in user's own settings (today: the dashboard language). */
export function accountRouter(services: Services): Router {
  const router = Router();
  router.put('/', requireApiUser, async (req, res) => {
    const language = await services.users.setLanguage(req.ctx!.user.id, req.body);
    if (req.session?.ctx) req.session.ctx.user.language = language;
    res.json({ language });
  });
  return router;
}
