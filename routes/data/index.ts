import type { NextFunction, Request, Response } from 'express';
import { Router } from 'express';
import type { Services } from '../../services';
import { InvalidTokenError } from '../../services/tokens';
import { bearerCredential, requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { ordersRouter } from '../api/orders';

function invalidToken(res: Response): void {
  res.set('WWW-Authenticate', 'Bearer error="invalid_token"').status(401).json({ error: 'invalid_token' });
}

/**
 * The Data API at /data/v1: every request carries `apikey: <publishable key>` and
 * `Authorization: Bearer <access token>`. The token acts as a session for the key's owner, so
 * the same services answer, scoped to the owner's workspace exactly as the dashboard is.
 */
export function dataRouter(services: Services): Router {
  const router = Router();

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    if (!services.tokens.isPublishableKey(req.get('apikey'))) {
      res.status(401).json({ error: 'invalid_apikey' });
      return;
    }
    const token = bearerCredential(req);
    if (!token) return invalidToken(res);
    let userId: string;
    try {
      userId = services.tokens.verify(token);
    } catch (err) {
      if (err instanceof InvalidTokenError) return invalidToken(res);
      throw err;
    }
    req.ctx = (await services.users.context(userId)) ?? undefined;
    if (!req.ctx) return invalidToken(res);
    next();
  });
  router.use(requireApiWorkspace);

  router.get('/credits', async (req, res) => {
    res.json(await services.credits.balance(workspaceOf(req).workspace));
  });
  router.use('/orders', ordersRouter(services, 'patch', 'data_api'));
  return router;
}
