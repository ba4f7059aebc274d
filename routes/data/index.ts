import type { NextFunction, Request, Response } from 'express';
import { Router } from 'express';
import type { Services } from '../../services';
import { InvalidTokenError } from '../../services/accounts';
import type { TokenOwner } from '../../services/accounts';
import { bearerCredential, requireApiWorkspace, workspaceOf } from '../middleware/auth';
import { ordersRouter } from '../api/orders';

function invalidToken(res: Response): void {
  res.set('WWW-Authenticate', 'Bearer error="invalid_token"').status(401).json({ error: 'invalid_token' });
}

/**
 * The Data API at /data/v1: every request carries `apikey: <publishable key>` and
 * `Authorization: Bearer <access token>`. The token acts as a session for the key's owner in the
 * key's workspace, so the same services answer, scoped to that workspace exactly as the dashboard is.
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
    let owner: TokenOwner;
    try {
      owner = services.tokens.verify(token);
    } catch (err) {
      if (err instanceof InvalidTokenError) return invalidToken(res);
      throw err;
    }
    // The context read for every request says where its user belongs now: the token reads the
    // workspace of its key only while its user is still a member there.
    req.ctx = (await services.users.context(owner.userId)) ?? undefined;
    if (!req.ctx || req.ctx.workspace?.id !== owner.workspaceId) return invalidToken(res);
    next();
  });
  router.use(requireApiWorkspace);

  router.get('/credits', async (req, res) => {
    res.json(await services.credits.balance(workspaceOf(req).workspace));
  });
  router.use('/orders', ordersRouter(services, 'patch', 'data_api'));
  return router;
}
