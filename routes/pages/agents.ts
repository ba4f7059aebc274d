import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { ValidationError } from '../../services/errors';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { formValues, redirectWithNotice } from './forms';
import type { FormState } from './forms';

const AGENT_FIELDS = ['name', 'order_handler'] as const;
const CHECKED = new Set(['1', 'on', 'true']);

export function agentPages(services: Services): Router {
  const router = Router();
  router.use('/agents', requirePageWorkspace);
  const workspaceId = (req: Request) => workspaceOf(req).workspace.id;

  async function renderAgents(req: Request, res: Response, status = 200, form: FormState = {}) {
    const agents = await services.agents.list(workspaceId(req));
    const hasHandler = agents.some((agent) => agent.is_order_handler);
    res.status(status).render('agents', {
      agents,
      hasHandler,
      // With no handler yet, the next agent most likely is the one: the box starts checked.
      values: form.values ?? { name: '', order_handler: hasHandler ? '' : '1' },
      errors: form.errors ?? {},
    });
  }

  router.get('/agents', (req, res) => renderAgents(req, res));

  router.post('/agents', async (req, res) => {
    const values = formValues(req, AGENT_FIELDS);
    const orderHandler = CHECKED.has(values.order_handler);
    try {
      const agent = await services.agents.create(workspaceId(req), { name: values.name, orderHandler });
      await redirectWithNotice(req, res, '/agents', orderHandler ? `${agent.name} added as the order handler.` : `${agent.name} added.`);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderAgents(req, res, 400, { values, errors: err.fields });
    }
  });

  router.post('/agents/:id/order-handler', async (req, res) => {
    const agent = await services.agents.update(workspaceId(req), String(req.params.id), { orderHandler: true });
    await redirectWithNotice(req, res, '/agents', `${agent.name} is now the order handler.`);
  });
  return router;
}
