import { Router } from 'express';
import type { Services } from '../../services';
import { ValidationError, bodyFields, msg } from '../../services/shared';
import { requireApiWorkspace, workspaceOf } from '../middleware/auth';

/** `unblock` of a DELETE: the body's or the query's, `true` or `false` (as JSON or as text); absent is false. */
function unblockOf(body: unknown, query: Record<string, unknown>): boolean {
  const given = bodyFields(body).unblock ?? query.unblock;
  if (given === undefined || given === false || given === 'false') return false;
  if (given === true || given === 'true') return true;
  throw new ValidationError({ unblock: msg('trueOrFalse', { label: 'unblock' }) });
}

/**
 * A customer's request (issue 58, item 3), by phone number in any form: GET lists the workspace's
 * orders of the phone, DELETE erases them (the owner only).
 */
export function customersRouter(services: Services): Router {
  const router = Router();
  router.use(requireApiWorkspace);

  router.get('/:phone', async (req, res) => {
    const customer = await services.customers.find(workspaceOf(req).workspace.id, req.params.phone);
    res.json(customer);
  });

  router.delete('/:phone', async (req, res) => {
    const { workspace } = workspaceOf(req);
    const erasure = await services.customers.erase(workspace, req.params.phone, { unblock: unblockOf(req.body, req.query) });
    res.json({ erased: erasure.erased, unblocked: erasure.unblocked });
  });
  return router;
}
